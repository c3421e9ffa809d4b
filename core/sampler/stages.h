// The sampler chain's stages as plain functions over a candidate list, each following the maths
// of llama.cpp's src/llama-sampler.cpp (named beside each). Ties in every sort go to the lower
// token id, so the order is the same with every standard library (native and wasm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/thread_pool.h"  // FunctionRef
#include "core/sampler/constraint.h"
#include "core/sampler/params.h"
#include "core/sampler/rng.h"

namespace ox {

// A view of the candidates the stages narrow, as llama_token_data_array: `data` may move forward
// (XTC drops the head), `size` shrinks, `sorted` says data is in descending logit order.
struct Candidates {
  TokenCandidate* data = nullptr;
  size_t size = 0;
  bool sorted = false;
  int32_t selected = -1;  // index into data chosen by a selecting stage

  std::span<TokenCandidate> span() const { return {data, size}; }
};

// DRY's sequence breakers as token sequences: head token -> the tokens that must precede it (an
// empty tail: the token alone breaks). Built from strings by build_dry_breakers.
using DryBreakers = std::unordered_multimap<int32_t, std::vector<int32_t>>;

// llama.cpp's get_overlapping_token_sequences: every token whose text contains a breaker, or
// ends with a prefix of one (then the tail is the rest of the breaker, tokenized, at most 20
// tokens). Breakers longer than 40 bytes are cut, empty ones skipped.
DryBreakers build_dry_breakers(std::span<const std::string> breakers, int32_t n_vocab,
                               FunctionRef<std::string(int32_t)> token_text,
                               FunctionRef<std::vector<int32_t>(const std::string&)> tokenize);

// Descending logit, then ascending id.
bool logit_order(const TokenCandidate& a, const TokenCandidate& b);
// llama_sampler_softmax_impl: p from the logits (sorting first if asked and not yet sorted).
void softmax(Candidates& c, bool sort);
// Sorts the whole list (if not sorted) and keeps the first k.
void keep_top(Candidates& c, size_t k);

// --- stages_penalty.cpp ---
void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases);
// llama_sampler_penalties: over the last `last_n` tokens of history (-1: all), each seen token's
// logit is divided (if > 0) or multiplied by `repeat`, then count * freq + present is subtracted.
void apply_penalties(Candidates& c, std::span<const int32_t> history, int last_n, float repeat, float freq,
                     float present);
struct DryParams {
  float multiplier;
  float base;
  int allowed_length;
  int last_n;  // -1: all of the history
};
// llama_sampler_dry: a token that would extend a repetition of length L >= allowed_length of
// the last tokens loses multiplier * base^(L - allowed_length) from its logit.
void apply_dry(Candidates& c, std::span<const int32_t> history, const DryParams& p, const DryBreakers& breakers);

// --- stages_truncate.cpp ---
void apply_top_k(Candidates& c, int k);
void apply_top_p(Candidates& c, float p, size_t min_keep);
void apply_min_p(Candidates& c, float p, size_t min_keep);
void apply_typical(Candidates& c, float p, size_t min_keep);
void apply_top_n_sigma(Candidates& c, float n);
// XTC draws once (when enabled) from `rng`: with `probability` it drops every candidate above
// `threshold` except the least likely of them.
void apply_xtc(Candidates& c, float probability, float threshold, size_t min_keep, Rng& rng);

// --- stages_select.cpp ---
// llama_sampler_temp_ext: plain temperature (<= 0: keep only the largest logit), or with range > 0
// a temperature from the normalised entropy: min + (max - min) * (H / H_max)^exponent.
void apply_temperature(Candidates& c, float temp, float range, float exponent);
// llama_sampler_dist: softmax and one draw; sets c.selected (-1 if nothing has probability > 0).
void select_dist(Candidates& c, Rng& rng);
// Mirostat 1.0 (m = 100 tokens estimate the Zipf exponent) and 2.0; mu starts at 2 * tau and is
// updated with the surprise of the chosen token.
void select_mirostat(Candidates& c, float tau, float eta, int m, int32_t n_vocab, float* mu, Rng& rng);
void select_mirostat_v2(Candidates& c, float tau, float eta, float* mu, Rng& rng);

}  // namespace ox

namespace ox {

// What a stage of the registry may read besides the candidates.
struct ChainState {
  const SamplerParams* params = nullptr;
  std::span<const int32_t> history;  // prompt and generated tokens so far (penalties, DRY)
  Rng* xtc_rng = nullptr;
  const DryBreakers* dry_breakers = nullptr;
};

}  // namespace ox
