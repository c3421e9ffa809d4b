// Embeddings and reranking over a LoadedModel: texts in, one vector per text (or per token) out, as
// llama.cpp's llama-embedding and server compute them. Many texts are packed into as few forward
// passes as the context allows; texts packed together never attend to each other. No JSON types
// here: the CLI (native/), the server (native/server/) and the wasm bindings all call this.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/model/model.h"
#include "core/ops/pooling.h"

namespace ox {

class LoadedModel;

struct EmbedderOptions {
  // Positions one forward pass holds (the longest text, and the most tokens packed together).
  // 0: the model's training context, capped at kDefaultMaxContext.
  int n_ctx = 0;
  int n_threads = 1;  // threads of the embedder's pool, the caller's thread included
  // kUnspecified: the file's <arch>.pooling_type; a decoder without one is an error naming --pooling.
  Pooling pooling = Pooling::kUnspecified;
  // kLlamaCpp: llama.cpp's f16 rounding points (GELU's table; an encoder's attention sums in f16),
  // for parity tests (model.h's Numerics). kF32 is the more accurate default.
  Numerics numerics = Numerics::kF32;
  // One forward pass of kWarmupTokens tokens at creation, as llama.cpp's tools warm up a context
  // (common_init_from_params): the weights' pages (a mapped file's) are faulted in and the kernels'
  // scratch is allocated there, and a KV cache of up to kTouchedCacheBytes is made resident
  // (KvCache::touch_pages), not in the first request's time.
  bool warmup = true;
  // A whole panel of the widest gemm_wide tile (AVX-512's 32 tokens): a pass of fewer than 4 tokens
  // takes the dot products and never allocates the panels, so a one-token warm-up left a first
  // sentence (bge-base F16, 29 tokens) ~1.4 ms of page faults.
  static constexpr int kWarmupTokens = 32;
  static constexpr int kDefaultMaxContext = 8192;
  static constexpr uint64_t kTouchedCacheBytes = uint64_t{256} << 20;
};

struct EmbedParams {
  int normalize = kNormalizeEuclidean;  // common_embd_normalize's argument (pooling.h)
  // A text longer than the context: cut to n_ctx tokens (true) or an error naming both lengths.
  bool truncate = false;
  bool add_special = true;    // BOS/CLS and EOS/SEP as the vocabulary asks (llama-embedding: true)
  bool parse_special = true;  // control-token texts in the input become control tokens (as llama.cpp)
};

struct EmbeddingResult {
  int n_embd = 0;  // floats per vector (kRank: the classifier's output count)
  Pooling pooling = Pooling::kNone;
  // One vector per input, in input order; with Pooling::kNone one per token, input after input
  // (input i's are vectors[first_vector[i]] onwards, n_tokens[i] of them).
  std::vector<std::vector<float>> vectors;
  std::vector<int32_t> first_vector;  // [n_inputs] index of input i's first vector
  std::vector<int32_t> n_tokens;      // [n_inputs] tokens each input took (after truncation)
  int64_t total_tokens = 0;           // sum of n_tokens (OpenAI's usage.prompt_tokens)
  int n_forward_passes = 0;           // how many batches the inputs were packed into
};

struct RerankResult {
  std::vector<float> scores;       // [n_documents] the classifier's first output, unnormalised
  std::vector<int32_t> n_tokens;   // [n_documents] tokens of each (query, document) pair
  int64_t total_tokens = 0;
};

class Embedder {
 public:
  // Checks that the model can embed (an architecture whose forward pass yields hidden states, a
  // pooling type, rank pooling's classification head) and sizes the working memory once.
  static Result<std::unique_ptr<Embedder>> create(std::shared_ptr<const LoadedModel> model,
                                                  const EmbedderOptions& options);
  ~Embedder();

  const LoadedModel& model() const { return *model_; }
  Pooling pooling() const { return pooling_; }
  int n_ctx() const { return n_ctx_; }
  // Floats per output vector: n_embd, or the classifier's output count under kRank.
  int n_embd_out() const;

  // Tokenizes each input (params.add_special / parse_special) and embeds it. Errors: no inputs, an
  // empty input (naming its index), an input longer than n_ctx() without truncate (naming both).
  Result<EmbeddingResult> embed(std::span<const std::string> inputs, const EmbedParams& params = {});
  // The same from token ids (checked against the vocabulary).
  Result<EmbeddingResult> embed_tokens(std::span<const std::vector<int32_t>> inputs, const EmbedParams& params = {});

  // Relevance of each document to the query: rank pooling over the pair as llama.cpp formats it
  // (the vocabulary's "rerank" chat template when the file has one, else
  // [CLS] query [SEP] document [SEP] with EOS/SEP between as the vocabulary adds them). Needs kRank.
  Result<RerankResult> rerank(std::string_view query, std::span<const std::string> documents,
                              bool truncate = false);
  // The token ids rerank() evaluates for one pair (tests, usage counts).
  Result<std::vector<int32_t>> rerank_tokens(std::string_view query, std::string_view document) const;

 private:
  Embedder(std::shared_ptr<const LoadedModel> model, int n_threads);
  std::shared_ptr<const LoadedModel> model_;
  ThreadPool pool_;
  std::unique_ptr<ForwardState> state_;
  Pooling pooling_ = Pooling::kNone;
  int n_ctx_ = 0;
  std::vector<float> hidden_;  // [n_ctx, n_embd] one forward pass's hidden states
};

}  // namespace ox
