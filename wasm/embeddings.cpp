// The JS embedding and rerank calls (embeddings.h), and Engine::load_embedder.
#include "wasm/embeddings.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/base/base64.h"
#include "core/session/embedding_api.h"
#include "wasm/js_input.h"

namespace ox::web {
namespace {

using emscripten::val;

Status unknown_keys(const val& options, std::initializer_list<const char*> known, const char* what) {
  const val keys = val::global("Object").call<val>("keys", options);
  const int n = keys["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const std::string key = keys[i].as<std::string>();
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) return error(ErrorCode::kInvalidArgument, strfmt("%s: unknown option '%s'", what, key.c_str()));
  }
  return Status::ok();
}

bool is_array(const val& v) { return val::global("Array").call<bool>("isArray", v); }

Result<std::vector<std::string>> strings(const val& v, const char* name, const char* what) {
  std::vector<std::string> out;
  if (v.isString()) {
    OX_ASSIGN_OR_RETURN(std::string text, string_from_js(v, name));
    out.push_back(std::move(text));
    return out;
  }
  if (!is_array(v)) return error(ErrorCode::kInvalidArgument, strfmt("%s: %s must be a string or an array of strings", what, name));
  const int n = v["length"].as<int>();
  if (n == 0) return error(ErrorCode::kInvalidArgument, strfmt("%s: %s is an empty array: there is nothing to embed", what, name));
  for (int i = 0; i < n; ++i) {
    const val item = v[i];
    if (!item.isString()) return error(ErrorCode::kInvalidArgument, strfmt("%s: %s[%d] is not a string", what, name, i));
    OX_ASSIGN_OR_RETURN(std::string text, string_from_js(item, name));
    out.push_back(std::move(text));
  }
  return out;
}

Result<bool> optional_bool(const val& options, const char* key, const char* what) {
  const val v = options[key];
  if (v.isUndefined()) return false;
  if (!v.isTrue() && !v.isFalse()) return error(ErrorCode::kInvalidArgument, strfmt("%s: %s must be a boolean", what, key));
  return v.isTrue();
}

Result<int64_t> optional_count(const val& options, const char* key, int64_t hi, const char* what) {
  const val v = options[key];
  if (v.isUndefined()) return 0;
  const double d = v.isNumber() ? v.as<double>() : NAN;
  if (!(d == std::floor(d)) || d < 1 || d > static_cast<double>(hi)) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: %s must be an integer from 1 to %lld", what, key,
                                                     static_cast<long long>(hi)));
  }
  return static_cast<int64_t>(d);
}

val usage(int64_t tokens) {
  val u = val::object();
  u.set("prompt_tokens", static_cast<double>(tokens));
  u.set("total_tokens", static_cast<double>(tokens));
  return u;
}

Result<Embedder*> require_embedder(Engine& engine, const char* what) {
  if (engine.embedder() == nullptr) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: the model was not loaded for embeddings: load it with { embeddings: true }", what));
  }
  return engine.embedder();
}

}  // namespace

Status Engine::load_embedder(std::shared_ptr<const LoadedModel> model, const LoadOptions& options) {
  EmbedderOptions eo;
  eo.n_ctx = options.n_ctx;
  eo.n_threads = options.n_threads;
  eo.pooling = options.pooling;
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, Embedder::create(model, eo));
  unload();  // only now: a failed load leaves the previous model loaded
  context_choice_ = embedder_context_choice(options.n_ctx, embedder->n_ctx(), model->hparams().n_ctx_train);
  embedder_ = std::move(embedder);
  model_ = std::move(model);
  load_options_ = options;
  return Status::ok();
}

Status create_embeddings(Engine& engine, const val& options, val* result) {
  const char* what = "embeddings.create";
  OX_ASSIGN_OR_RETURN(Embedder * em, require_embedder(engine, what));
  OX_TRY(check_pooled_embedder(*em));
  if (options.typeOf().as<std::string>() != "object" || options.isNull()) return error(ErrorCode::kInvalidArgument, strfmt("%s takes an options object", what));
  OX_TRY(unknown_keys(options, {"input", "encoding_format", "dimensions", "truncate", "model", "user"}, what));
  if (options["input"].isUndefined()) return error(ErrorCode::kInvalidArgument, strfmt("%s: input is required", what));
  OX_ASSIGN_OR_RETURN(std::vector<std::string> inputs, strings(options["input"], "input", what));
  if (inputs.size() > static_cast<size_t>(kMaxEmbeddingInputs)) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: input has %zu entries; at most %d are accepted", what,
                                                     inputs.size(), kMaxEmbeddingInputs));
  }
  bool base64 = false;
  if (const val f = options["encoding_format"]; !f.isUndefined()) {
    const std::string s = f.isString() ? f.as<std::string>() : "";
    if (s != "float" && s != "base64") {
      return error(ErrorCode::kInvalidArgument, strfmt("%s: encoding_format must be 'float' or 'base64'", what));
    }
    base64 = s == "base64";
  }
  OX_ASSIGN_OR_RETURN(int64_t dimensions, optional_count(options, "dimensions", 1 << 20, what));
  OX_TRY(check_embedding_dimensions(dimensions, em->n_embd_out(), "embeddings.create: dimensions"));
  EmbedParams params;
  OX_ASSIGN_OR_RETURN(params.truncate, optional_bool(options, "truncate", what));
  OX_ASSIGN_OR_RETURN(EmbeddingResult r, em->embed(inputs, params));
  val data = val::array();
  for (size_t i = 0; i < r.vectors.size(); ++i) {
    val item = val::object();
    item.set("object", std::string("embedding"));
    item.set("index", static_cast<int>(i));
    item.set("embedding", base64 ? val(base64_floats(r.vectors[i])) : val::array(r.vectors[i]));
    data.call<void>("push", item);
  }
  val out = val::object();
  out.set("object", std::string("list"));
  out.set("data", data);
  out.set("model", engine.model().file().name());
  out.set("usage", usage(r.total_tokens));
  *result = out;
  return Status::ok();
}

Status rerank_documents(Engine& engine, const val& options, val* result) {
  const char* what = "rerank";
  OX_ASSIGN_OR_RETURN(Embedder * em, require_embedder(engine, what));
  OX_TRY(check_reranker(*em, "load a reranker with { embeddings: true, pooling: 'rank' }"));
  if (options.typeOf().as<std::string>() != "object" || options.isNull()) return error(ErrorCode::kInvalidArgument, strfmt("%s takes an options object", what));
  OX_TRY(unknown_keys(options, {"query", "documents", "top_n", "return_documents", "truncate", "model"}, what));
  if (!options["query"].isString()) return error(ErrorCode::kInvalidArgument, "rerank: query must be a string");
  OX_ASSIGN_OR_RETURN(const std::string query, string_from_js(options["query"], "rerank: query"));
  if (!is_array(options["documents"])) {
    return error(ErrorCode::kInvalidArgument, "rerank: documents must be an array of strings");
  }
  OX_ASSIGN_OR_RETURN(std::vector<std::string> documents, strings(options["documents"], "documents", what));
  OX_ASSIGN_OR_RETURN(int64_t top_n, optional_count(options, "top_n", kMaxRerankDocuments, what));
  OX_ASSIGN_OR_RETURN(bool return_documents, optional_bool(options, "return_documents", what));
  OX_ASSIGN_OR_RETURN(bool truncate, optional_bool(options, "truncate", what));
  OX_ASSIGN_OR_RETURN(RerankResult r, em->rerank(query, documents, truncate));
  val results = val::array();
  for (const RankedDocument& d : rank_documents(r.scores, top_n)) {
    val item = val::object();
    item.set("index", d.index);
    item.set("relevance_score", d.score);
    if (return_documents) {
      val doc = val::object();
      doc.set("text", documents[static_cast<size_t>(d.index)]);
      item.set("document", doc);
    }
    results.call<void>("push", item);
  }
  val out = val::object();
  out.set("object", std::string("list"));
  out.set("model", engine.model().file().name());
  out.set("results", results);
  out.set("usage", usage(r.total_tokens));
  *result = out;
  return Status::ok();
}

val embedding_model_info(Engine& engine) {
  val out = val::object();
  Embedder* em = engine.embedder();
  if (em == nullptr) return val::null();
  out.set("pooling", std::string(pooling_name(em->pooling())));
  out.set("n_embd_out", em->n_embd_out());
  return out;
}

}  // namespace ox::web
