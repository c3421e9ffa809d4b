// The request checks and result ordering that OpenAI's /v1/embeddings and the /v1/rerank API ask
// of an Embedder, shared by the server (native/server/embeddings.cpp) and the JS engine
// (wasm/embeddings.cpp) so both refuse and order the same way. No JSON here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/status.h"

namespace ox {

class Embedder;

inline constexpr int kMaxEmbeddingInputs = 2048;  // OpenAI's limit on `input` entries
inline constexpr int kMaxRerankDocuments = 2048;

// OpenAI's `dimensions` (Matryoshka truncation, then renormalisation). GGUF files record no flag
// saying a model was trained for it (llama.cpp's converters keep none), and truncating a model that
// was not gives meaningless vectors, so only the model's own width is accepted: anything else is
// an error naming `what`, the value and the width. `dimensions` <= 0: not given.
Status check_embedding_dimensions(int64_t dimensions, int n_embd, const char* what);

// Checks that the embedder serves OpenAI-style pooled vectors (not per-token `none`, not a
// reranker's `rank`), naming the pooling and what to do instead.
Status check_pooled_embedder(const Embedder& embedder);
// Checks that the embedder is a reranker (rank pooling with a classification head).
Status check_reranker(const Embedder& embedder, const char* how_to_enable);

struct RankedDocument {
  int32_t index = 0;  // into the request's documents
  float score = 0;    // the classifier's output, as llama-server's relevance_score
};
// Documents by descending score (ties keep input order), the first top_n of them (top_n <= 0: all).
std::vector<RankedDocument> rank_documents(std::span<const float> scores, int64_t top_n);

}  // namespace ox
