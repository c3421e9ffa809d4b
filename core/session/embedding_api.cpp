// OpenAI-style embedding and rerank request checks and result order (embedding_api.h).
#include "core/session/embedding_api.h"

#include <algorithm>

#include "core/session/embedding.h"

namespace ox {

Status check_embedding_dimensions(int64_t dimensions, int n_embd, const char* what) {
  if (dimensions <= 0 || dimensions == n_embd) return Status::ok();
  return error(ErrorCode::kUnsupported,
               strfmt("%s %lld: this model's embeddings have %d dimensions, and the GGUF file does not say the model "
                      "was trained for Matryoshka truncation, so only %d is accepted",
                      what, static_cast<long long>(dimensions), n_embd, n_embd));
}

Status check_pooled_embedder(const Embedder& embedder) {
  const Pooling p = embedder.pooling();
  if (p == Pooling::kNone) {
    return error(ErrorCode::kUnsupported,
                 "the model was loaded with pooling 'none' (one vector per token), which OpenAI's embeddings API "
                 "cannot return: load it with pooling mean, cls or last");
  }
  if (p == Pooling::kRank) {
    return error(ErrorCode::kUnsupported,
                 "the model was loaded as a reranker (pooling 'rank'): use rerank, not embeddings");
  }
  return Status::ok();
}

Status check_reranker(const Embedder& embedder, const char* how_to_enable) {
  if (embedder.pooling() == Pooling::kRank) return Status::ok();
  return error(ErrorCode::kUnsupported, strfmt("the model was loaded for embeddings (pooling '%s'), not reranking: %s",
                                               pooling_name(embedder.pooling()), how_to_enable));
}

std::vector<RankedDocument> rank_documents(std::span<const float> scores, int64_t top_n) {
  std::vector<RankedDocument> out(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) out[i] = {static_cast<int32_t>(i), scores[i]};
  std::stable_sort(out.begin(), out.end(), [](const RankedDocument& a, const RankedDocument& b) {
    return a.score > b.score;
  });
  if (top_n > 0 && static_cast<size_t>(top_n) < out.size()) out.resize(static_cast<size_t>(top_n));
  return out;
}

}  // namespace ox
