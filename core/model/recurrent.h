// Recurrent (state-space) layers: the state each needs per sequence, the mixers of Mamba and
// Mamba-2 (mamba_mixer.cpp, reused by the hybrids' forward functions) and the shared tail of a
// forward pass. The state lives in the cache (KvCache::rs(), recurrent_state.h).
#pragma once

#include <span>

#include "core/model/model.h"

namespace ox {

struct RecurrentDims {
  int64_t conv = 0;     // floats of the convolution window per layer and sequence
  int64_t ssm = 0;      // floats of the scan state per layer and sequence
  int64_t scratch = 0;  // floats of ForwardState::mixer per token of a batch
};
RecurrentDims recurrent_dims(const ArchSpec& spec, const HParams& hp);

// The <arch>.ssm.* keys a Recurrent mixer needs, checked against each other (errors name the file
// and key): the configure hook of every architecture with state-space layers calls it.
Status check_ssm_hparams(const gguf::GgufFile& file, const HParams& hp, Recurrent mixer);

// out = mixer(h) for layer l: the batch's n tokens (h: [n, n_embd] normalised input) in `runs`,
// each run continuing its sequence's state in st.kv.rs(); out: [n, n_embd].
void mamba_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                 float* out);
void mamba2_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                  float* out);

// lfm2's gated short convolution (shortconv_mixer.cpp).
void shortconv_mixer(const Model& m, ForwardState& st, int l, const float* h, std::span<const SeqRun> runs, int64_t n,
                     float* out);

// Zeroes the recurrent state of every sequence the batch starts at position 0 (a new sequence, or
// one evaluated again from its start).
void reset_started_sequences(ForwardState& st, std::span<const SeqRun> runs);

// logits = norm(x) Wout (+ b) for the tokens that ask (their rows of x moved to the front first):
// the end of every forward pass.
void output_logits(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* x, float* logits);

// The forward pass of mamba and mamba2 (forward_mamba.cpp).
void forward_mamba(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// The forward pass of rwkv7 (forward_rwkv7.cpp).
void forward_rwkv7(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// The forward pass of falcon-h1 (forward_falcon_h1.cpp).
void forward_falcon_h1(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// The forward pass of granitehybrid (forward_granite_hybrid.cpp).
void forward_granite_hybrid(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// The forward pass of qwen35 (forward_qwen35.cpp).
void forward_qwen35(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);
// The forward pass of lfm2 (forward_lfm2.cpp).
void forward_lfm2(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* logits);

}  // namespace ox
