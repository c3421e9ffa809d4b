// Embedder: tokenizes texts, packs them into as few embedding passes (Model::forward_hidden) as the
// context allows, pools each sequence's hidden states and normalises them, as llama.cpp's
// llama-embedding (examples/embedding) and its server's /embedding and /rerank do.
#include "core/session/embedding.h"

#include <algorithm>

#include "core/base/memory.h"
#include "core/session/session.h"
#include "kernels/kernels.h"

namespace ox {
namespace {

// The pooling an embedder uses: the caller's, else the file's <arch>.pooling_type, else none for an
// encoder (llama.cpp's default) and an error for a generative model, whose hidden states are not
// meant as embeddings without one.
Result<Pooling> choose_pooling(const LoadedModel& m, Pooling requested) {
  if (requested != Pooling::kUnspecified) return requested;
  const HParams& hp = m.hparams();
  if (hp.pooling_type >= 0) return static_cast<Pooling>(hp.pooling_type);
  if (!m.model().spec().causal_attention) return Pooling::kNone;
  return error(ErrorCode::kInvalidArgument,
               strfmt("%s: '%s' is a generative model without %s.pooling_type: choose how to pool its hidden "
                      "states with --pooling (mean, cls, last, none; last for Qwen3-Embedding)",
                      m.file().name().c_str(), hp.arch.c_str(), hp.arch.c_str()));
}

}  // namespace

Embedder::Embedder(std::shared_ptr<const LoadedModel> model, int n_threads)
    : model_(std::move(model)), pool_(n_threads) {}
Embedder::~Embedder() = default;

Result<std::unique_ptr<Embedder>> Embedder::create(std::shared_ptr<const LoadedModel> model,
                                                   const EmbedderOptions& options) {
  if (options.n_threads < 1 || options.n_threads > 256) {
    return error(ErrorCode::kInvalidArgument, strfmt("thread count %d is out of range (1..256)", options.n_threads));
  }
  if (options.n_ctx < 0) return error(ErrorCode::kInvalidArgument, strfmt("context size %d is negative", options.n_ctx));
  const Model& m = model->model();
  if (!m.can_embed()) {
    return error(ErrorCode::kUnsupported, strfmt("%s: architecture '%s' cannot compute embeddings in oxidize yet",
                                                 model->file().name().c_str(), m.hparams().arch.c_str()));
  }
  OX_ASSIGN_OR_RETURN(const Pooling pooling, choose_pooling(*model, options.pooling));
  if (pooling == Pooling::kRank && !m.has_classifier()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: rank pooling needs a classification head (tensors cls / cls.output), which this file "
                        "lacks: it is not a reranker", model->file().name().c_str()));
  }
  const int n_ctx_train = m.hparams().n_ctx_train;
  int n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(n_ctx_train, EmbedderOptions::kDefaultMaxContext);
  if (!m.spec().rope && !m.weights().position_embd.empty()) n_ctx = std::min(n_ctx, n_ctx_train);  // learned positions
  auto e = std::unique_ptr<Embedder>(new Embedder(model, options.n_threads));
  e->pooling_ = pooling;
  e->n_ctx_ = n_ctx;
  // Keys and values in f16: llama.cpp's cache type, and what its flash attention casts an encoder's
  // uncached f32 keys and values to (llm_graph_context::build_attn_mha). T5's score bias keeps
  // llama.cpp off flash attention: its keys and values stay f32 there.
  const DType kv_type = m.spec().rel_buckets > 0 ? DType::F32 : DType::F16;
  OX_ASSIGN_OR_RETURN(e->state_, m.new_state(n_ctx, n_ctx, &kernels::best_kernels(), &e->pool_, kv_type, kv_type, 1));
  e->state_->numerics = options.numerics;
  const uint64_t hidden_floats = static_cast<uint64_t>(n_ctx) * static_cast<uint64_t>(m.hparams().n_embd);
  OX_TRY(check_memory(hidden_floats * sizeof(float), strfmt("the hidden states of %d positions", n_ctx),
                      "use a smaller context size (n_ctx)"));
  e->hidden_.resize(static_cast<size_t>(hidden_floats));
  if (options.warmup && n_ctx > 0) {
    const int32_t bos = model->tokenizer().bos_id();
    std::vector<BatchToken> warmup(static_cast<size_t>(std::min(n_ctx, EmbedderOptions::kWarmupTokens)));
    for (size_t i = 0; i < warmup.size(); ++i) warmup[i] = BatchToken{bos >= 0 ? bos : 0, 0, static_cast<int64_t>(i), true};
    OX_TRY(m.forward_hidden(*e->state_, std::span<const BatchToken>(warmup), e->hidden_.data()));
    // The cache's pages too: a pass writes each layer's keys and values over as many rows as it has
    // tokens, and a first batch of 32 sentences (bge-base) spent ~13% of its time zeroing the pages
    // it reached. Up to kTouchedCacheBytes: a long context's cache (a decoder's, gigabytes) stays
    // lazily mapped, since short inputs never reach most of it.
    if (e->state_->kv.bytes() <= EmbedderOptions::kTouchedCacheBytes) e->state_->kv.touch_pages();
  }
  return e;
}

int Embedder::n_embd_out() const {
  const ModelWeights& w = model_->model().weights();
  if (pooling_ != Pooling::kRank) return model_->hparams().n_embd;
  if (!w.cls_out.empty()) return static_cast<int>(w.cls_out.rows);
  return static_cast<int>(w.cls.empty() ? model_->hparams().n_embd : w.cls.rows);
}

Result<EmbeddingResult> Embedder::embed(std::span<const std::string> inputs, const EmbedParams& params) {
  std::vector<std::vector<int32_t>> tokens;
  tokens.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      return error(ErrorCode::kInvalidArgument, strfmt("input %zu is empty: there is nothing to embed", i));
    }
    OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                        model_->tokenizer().encode(inputs[i], params.add_special, params.parse_special));
    tokens.push_back(std::move(ids));
  }
  return embed_tokens(tokens, params);
}

Result<EmbeddingResult> Embedder::embed_tokens(std::span<const std::vector<int32_t>> inputs, const EmbedParams& params) {
  OX_TRY(check_normalize(params.normalize, "embedding normalisation"));
  if (inputs.empty()) return error(ErrorCode::kInvalidArgument, "no inputs to embed");
  const Model& m = model_->model();
  const int64_t d = m.hparams().n_embd;
  EmbeddingResult out;
  out.pooling = pooling_;
  out.n_embd = n_embd_out();
  std::vector<size_t> lengths(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) return error(ErrorCode::kInvalidArgument, strfmt("input %zu has no tokens: there is nothing to embed", i));
    lengths[i] = inputs[i].size();
    if (lengths[i] > static_cast<size_t>(n_ctx_)) {
      if (!params.truncate) {
        return error(ErrorCode::kOutOfRange,
                     strfmt("input %zu is %zu tokens, longer than the context of %d tokens (ask to truncate it, or "
                            "use a larger context)", i, lengths[i], n_ctx_));
      }
      lengths[i] = static_cast<size_t>(n_ctx_);
    }
    out.n_tokens.push_back(static_cast<int32_t>(lengths[i]));
    out.total_tokens += static_cast<int64_t>(lengths[i]);
  }
  // Every vector is kept until the end: refused now, before any forward pass, if they cannot all be
  // (without pooling one per token: 1 KiB or more of floats for each 4-byte token id).
  const uint64_t n_vectors = pooling_ == Pooling::kNone ? static_cast<uint64_t>(out.total_tokens) : inputs.size();
  OX_TRY(check_memory(n_vectors * (static_cast<uint64_t>(out.n_embd) * sizeof(float) + sizeof(std::vector<float>)),
                      strfmt("%llu embedding vectors of %d floats", static_cast<unsigned long long>(n_vectors), out.n_embd),
                      pooling_ == Pooling::kNone ? "embed fewer tokens per request, or pool them (pooling mean, cls or last)"
                                                 : "embed fewer inputs per request"));
  out.vectors.reserve(static_cast<size_t>(n_vectors));
  out.first_vector.resize(inputs.size());
  std::vector<float> pooled(static_cast<size_t>(d)), scratch(static_cast<size_t>(d)), head(static_cast<size_t>(std::max<int64_t>(d, out.n_embd)));
  auto emit = [&](const float* v) {
    std::vector<float>& dst = out.vectors.emplace_back(static_cast<size_t>(out.n_embd));
    normalize_embedding(v, dst.data(), out.n_embd, params.normalize);
  };
  // Packs inputs [first, last) into one pass, the greedy way llama-embedding fills its batch.
  size_t first = 0;
  while (first < inputs.size()) {
    size_t last = first, n = 0;
    while (last < inputs.size() && n + lengths[last] <= static_cast<size_t>(n_ctx_)) n += lengths[last++];
    std::vector<BatchToken> batch;
    batch.reserve(n);
    for (size_t i = first; i < last; ++i) {
      for (size_t p = 0; p < lengths[i]; ++p) {
        batch.push_back(BatchToken{inputs[i][p], static_cast<int32_t>(i - first), static_cast<int64_t>(p), true});
      }
    }
    OX_TRY(m.forward_hidden(*state_, batch, hidden_.data()));
    ++out.n_forward_passes;
    const float* rows = hidden_.data();
    for (size_t i = first; i < last; ++i) {
      const int64_t len = static_cast<int64_t>(lengths[i]);
      out.first_vector[i] = static_cast<int32_t>(out.vectors.size());
      if (pooling_ == Pooling::kNone) {
        for (int64_t t = 0; t < len; ++t) emit(rows + t * d);
      } else {
        // Rank pooling reads the first token, or the last (Qwen3-Reranker) or the mean (modern-bert)
        // where the head says.
        const ClsHead& head_spec = m.spec().cls_head;
        Pooling rows_pooling = pooling_;
        if (pooling_ == Pooling::kRank && head_spec.last_token) rows_pooling = Pooling::kLast;
        if (pooling_ == Pooling::kRank && head_spec.mean) rows_pooling = Pooling::kMean;
        pool_rows(rows_pooling, rows, len, d, pooled.data());
        if (pooling_ == Pooling::kRank) {
          m.classify(state_->ops, pooled.data(), scratch.data(), head.data(), state_->numerics == Numerics::kLlamaCpp);
          emit(head.data());
        } else {
          emit(pooled.data());
        }
      }
      rows += len * d;
    }
    first = last;
  }
  return out;
}

Result<std::vector<int32_t>> Embedder::rerank_tokens(std::string_view query, std::string_view document) const {
  const tok::Tokenizer& tk = model_->tokenizer();
  OX_ASSIGN_OR_RETURN(std::string_view tmpl, model_->file().get_string_or("tokenizer.chat_template.rerank", ""));
  std::string prompt;
  if (!tmpl.empty()) {  // "{query}" and "{document}" replaced, as llama-embedding does
    prompt = std::string(tmpl);
    for (const auto& [key, value] : {std::pair<std::string_view, std::string_view>{"{query}", query}, {"{document}", document}}) {
      for (size_t at = prompt.find(key); at != std::string::npos; at = prompt.find(key, at + value.size())) {
        prompt.replace(at, key.size(), value);
      }
    }
  } else {  // query, then the EOS / SEP texts the vocabulary appends, then the document
    prompt = std::string(query);
    if (tk.add_eos()) {
      prompt += tk.token_text(tk.kind() == tok::TokenizerKind::kWordPiece ? tk.sep_id() : tk.eos_id());
    }
    prompt += document;
  }
  return tk.encode(prompt, /*add_special=*/true, /*parse_special=*/true);
}

Result<RerankResult> Embedder::rerank(std::string_view query, std::span<const std::string> documents, bool truncate) {
  if (pooling_ != Pooling::kRank) {
    return error(ErrorCode::kInvalidArgument, strfmt("reranking needs rank pooling (this embedder pools with '%s'): "
                                                     "use --pooling rank with a reranker model", pooling_name(pooling_)));
  }
  if (query.empty()) return error(ErrorCode::kInvalidArgument, "rerank: the query is empty");
  if (documents.empty()) return error(ErrorCode::kInvalidArgument, "rerank: no documents");
  std::vector<std::vector<int32_t>> pairs;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i].empty()) return error(ErrorCode::kInvalidArgument, strfmt("rerank: document %zu is empty", i));
    OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, rerank_tokens(query, documents[i]));
    pairs.push_back(std::move(ids));
  }
  EmbedParams params;
  params.normalize = kNormalizeNone;  // raw scores, as llama.cpp's server returns them
  params.truncate = truncate;
  OX_ASSIGN_OR_RETURN(EmbeddingResult r, embed_tokens(pairs, params));
  RerankResult out;
  for (const std::vector<float>& v : r.vectors) out.scores.push_back(v[0]);
  out.n_tokens = std::move(r.n_tokens);
  out.total_tokens = r.total_tokens;
  return out;
}

}  // namespace ox
