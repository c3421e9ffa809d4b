// Synthetic models: random N(0, 0.02) weights (norms 1) in the shapes of common small llama models,
// with a real tokenizer copied from a vocab GGUF, for benchmarks and tests that need a model of
// realistic size without shipping one; and tiny models of every architecture for parity tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ox {

struct SynthOptions {
  std::string out_path;
  std::string shape = "tiny-15M";  // one of synth_shape_names()
  // Empty: a llama model as the benchmarks use (no optional tensors, norm weights 1). An
  // architecture's name (all_archs()): its parity model, every optional tensor and synth key on.
  std::string arch;
  std::string vocab_path;          // GGUF whose tokenizer.* keys are copied; empty: default_synth_vocab_path()
  // > 0: only the vocabulary's first vocab_size tokens (a small model from a large Unigram or
  // WordPiece vocabulary); special token ids past the cut are left out. Refused for BPE (merges).
  uint32_t vocab_size = 0;
  std::string type = "F32";        // F32 / F16 / BF16 or a quantization preset (Q4_K_M, Q8_0, ...)
  uint64_t seed = 1;               // same seed, same bytes (whatever n_threads)
  int n_threads = 1;               // <= 0: every core
  uint32_t n_ctx = 4096;           // llama.context_length
  uint32_t n_layer = 0;            // 0: the shape's layer count; else this many (quick tests)
  float weight_std = 0.02f;        // standard deviation of the matrices' Gaussian weights
  // With arch: the synth keys of this variant of the architecture (SynthKey::variant; "": the default),
  // where one file cannot switch on two layouts llama.cpp tells apart by its keys.
  std::string variant;
};

// "tiny-15M" (dim 288, ffn 768, 6 layers, 6 heads), "0.5B" (896, 4864, 24 layers, 14 heads / 2 KV),
// "1B" (2048, 8192, 16 layers, 32 heads / 8 KV); shapes of other architectures (no --arch):
// "moe-16x64" (qwen3moe, 16 layers of 64 experts, 8 active) and "lfm2-1.2B" (lfm2's convolution and
// attention hybrid). The vocabulary size is the vocab file's.
const std::vector<std::string>& synth_shape_names();

// $OXIDIZE_SHARED/vocab/ggml-vocab-llama-spm.gguf, else ../shared/vocab/... beside the source tree.
std::string default_synth_vocab_path();

// Writes the model, streaming one tensor at a time (a 1B model never sits in memory whole);
// weights are generated and quantized over n_threads threads. On error no file is left behind.
Status synth_gguf(const SynthOptions& options);

}  // namespace ox
