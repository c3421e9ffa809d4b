// The embeddings and rerank endpoints: request fields checked by name (unknown ones refused, as the
// completion endpoints do), the work run on the EmbeddingQueue, OpenAI-shaped answers and errors.
#include "native/server/embeddings.h"

#include <chrono>
#include <string>
#include <vector>

#include "core/base/base64.h"
#include "core/session/embedding_api.h"
#include "native/server/embedding_queue.h"
#include "native/server/routes.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;

struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string> texts;               // input as text, or
  std::vector<std::vector<int32_t>> token_ids;  // input as token ids (as given: no BOS/EOS added)
  bool base64 = false;
  int64_t dimensions = 0;
  EmbedParams params;
};

struct RerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;
  int64_t top_n = 0;  // 0: every document
  bool return_documents = false;
  bool truncate = false;
};

ApiError not_supported(const char* message) {
  ApiError e;
  e.status = 501;  // llama-server's ERROR_TYPE_NOT_SUPPORTED
  e.type = "not_supported_error";
  e.code = "not_supported";
  e.message = message;
  return e;
}

ApiError invalid(const std::string& param, const std::string& message) {
  return bad_param(param, "invalid_value", message);
}

ApiError wrong_type(const std::string& param, const char* want) {
  return bad_param(param, "invalid_type", strfmt("'%s' must be %s", param.c_str(), want));
}

// The core's error about a request: 400 naming `param` when the request was at fault, 500 otherwise.
ApiError core_error(const Status& st, const char* param) {
  const ErrorCode c = st.code();
  if (c == ErrorCode::kInvalidArgument || c == ErrorCode::kOutOfRange || c == ErrorCode::kUnsupported) {
    return invalid(param, st.message());
  }
  ApiError e;
  e.status = 500;
  e.type = "server_error";
  e.message = st.message();
  return e;
}

ApiError admission_error(Admission a, const ServerContext& ctx, httplib::Response& res) {
  ApiError e;
  e.status = 503;
  e.type = "server_error";
  e.code = "unavailable";
  e.message = "the server is shutting down";
  if (a == Admission::kQueueFull) {
    e.code = "server_busy";
    e.message = strfmt("the embedder is busy and %d requests are waiting; retry later", ctx.options.max_queue);
    res.set_header("Retry-After", "1");
  }
  return e;
}

bool read_token_ids(const Json& v, const std::string& where, int n_vocab, std::vector<int32_t>* out, ApiError* e) {
  for (size_t j = 0; j < v.size(); ++j) {
    const Json& t = v[j];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab) {
      *e = invalid(where, strfmt("%s[%zu] must be a token id in [0, %d)", where.c_str(), j, n_vocab));
      return false;
    }
    out->push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return true;
}

bool all_integers(const Json& v) {
  for (const Json& x : v) {
    if (!x.is_number_integer()) return false;
  }
  return true;
}

// OpenAI's `input`: a string, an array of strings, an array of token ids, or an array of such arrays.
bool read_input(const Json& v, int n_vocab, EmbeddingsRequest* r, ApiError* e) {
  if (v.is_string()) {
    r->texts.push_back(v.get<std::string>());
    return true;
  }
  const char* shapes = "a string, an array of strings, an array of token ids or an array of token-id arrays";
  if (!v.is_array()) return (*e = wrong_type("input", shapes), false);
  if (v.empty()) return (*e = invalid("input", "'input' is an empty array: there is nothing to embed"), false);
  if (v.size() > static_cast<size_t>(kMaxEmbeddingInputs)) {
    return (*e = invalid("input", strfmt("'input' has %zu entries; at most %d are accepted", v.size(),
                                         kMaxEmbeddingInputs)), false);
  }
  if (all_integers(v)) return read_token_ids(v, "input", n_vocab, &r->token_ids.emplace_back(), e);
  const bool strings = v[0].is_string();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = strfmt("input[%zu]", i);
    if (strings && v[i].is_string()) {
      r->texts.push_back(v[i].get<std::string>());
    } else if (!strings && v[i].is_array() && all_integers(v[i])) {
      if (!read_token_ids(v[i], where, n_vocab, &r->token_ids.emplace_back(), e)) return false;
    } else {
      *e = wrong_type(where, strings ? "a string (input[0] is one)" : "an array of token ids (input[0] is one)");
      return false;
    }
  }
  return true;
}

bool read_string(const Json& v, const char* name, std::string* out, ApiError* e) {
  if (!v.is_string()) return (*e = wrong_type(name, "a string"), false);
  *out = v.get<std::string>();
  return true;
}

bool read_bool(const Json& v, const char* name, bool* out, ApiError* e) {
  if (!v.is_boolean()) return (*e = wrong_type(name, "a boolean"), false);
  *out = v.get<bool>();
  return true;
}

bool read_int(const Json& v, const char* name, int64_t lo, int64_t hi, int64_t* out, ApiError* e) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    *e = invalid(name, strfmt("'%s' must be an integer from %lld to %lld", name, static_cast<long long>(lo),
                              static_cast<long long>(hi)));
    return false;
  }
  *out = v.get<int64_t>();
  return true;
}

ApiError unknown(const std::string& key, const char* known) {
  return bad_param(key, "unknown_parameter", strfmt("unknown parameter '%s' (this endpoint takes %s)", key.c_str(), known));
}

bool parse_embeddings(const std::string& body, int n_vocab, EmbeddingsRequest* r, ApiError* e) {
  Json j;
  if (!parse_json_object(body, &j, e)) return false;
  bool has_input = false;
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) continue;
    bool ok = true;
    if (key == "input") {
      has_input = true;
      ok = read_input(v, n_vocab, r, e);
    } else if (key == "model") {
      ok = read_string(v, "model", &r->model, e);
    } else if (key == "encoding_format") {
      std::string f;
      ok = read_string(v, "encoding_format", &f, e);
      if (ok && f != "float" && f != "base64") {
        *e = invalid("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
        ok = false;
      }
      r->base64 = f == "base64";
    } else if (key == "dimensions") {
      ok = read_int(v, "dimensions", 1, 1 << 20, &r->dimensions, e);
    } else if (key == "user") {
      std::string ignored;  // OpenAI's end-user id: accepted, not used (as in the completion endpoints)
      ok = read_string(v, "user", &ignored, e);
    } else if (key == "truncate") {
      ok = read_bool(v, "truncate", &r->params.truncate, e);
    } else if (key == "embd_normalize") {  // llama-server's extension: -1, 0, 1, 2 or a p > 2
      int64_t n = 0;
      ok = read_int(v, "embd_normalize", -1, 1 << 20, &n, e);
      r->params.normalize = static_cast<int>(n);
    } else {
      *e = unknown(key, "input, model, encoding_format, dimensions, user, truncate, embd_normalize");
      ok = false;
    }
    if (!ok) return false;
  }
  if (!has_input) return (*e = bad_param("input", "missing_parameter", "'input' is required"), false);
  return true;
}

bool parse_rerank(const std::string& body, RerankRequest* r, ApiError* e) {
  Json j;
  if (!parse_json_object(body, &j, e)) return false;
  bool has_query = false, has_documents = false;
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) continue;
    bool ok = true;
    if (key == "query") {
      has_query = true;
      ok = read_string(v, "query", &r->query, e);
    } else if (key == "documents") {
      has_documents = true;
      if (!v.is_array() || v.empty()) {
        *e = wrong_type("documents", "a non-empty array of strings");
        return false;
      }
      if (v.size() > static_cast<size_t>(kMaxRerankDocuments)) {
        *e = invalid("documents", strfmt("'documents' has %zu entries; at most %d are accepted", v.size(),
                                         kMaxRerankDocuments));
        return false;
      }
      for (size_t i = 0; i < v.size() && ok; ++i) {
        const std::string where = strfmt("documents[%zu]", i);
        ok = v[i].is_string() || (*e = wrong_type(where, "a string"), false);
        if (ok) r->documents.push_back(v[i].get<std::string>());
      }
    } else if (key == "model") {
      ok = read_string(v, "model", &r->model, e);
    } else if (key == "top_n") {
      ok = read_int(v, "top_n", 1, kMaxRerankDocuments, &r->top_n, e);
    } else if (key == "return_documents") {
      ok = read_bool(v, "return_documents", &r->return_documents, e);
    } else if (key == "truncate") {
      ok = read_bool(v, "truncate", &r->truncate, e);
    } else {
      *e = unknown(key, "query, documents, model, top_n, return_documents, truncate");
      ok = false;
    }
    if (!ok) return false;
  }
  if (!has_query) return (*e = bad_param("query", "missing_parameter", "'query' is required"), false);
  if (!has_documents) return (*e = bad_param("documents", "missing_parameter", "'documents' is required"), false);
  return true;
}

Json usage_json(int64_t tokens) { return {{"prompt_tokens", tokens}, {"total_tokens", tokens}}; }

// A request answered: its inputs (texts or documents), tokens and time, waiting included.
void count_request(Metrics& m, size_t n_inputs, int64_t tokens, std::chrono::steady_clock::time_point t0) {
  m.embedding_requests_total.fetch_add(1);
  m.embedding_inputs_total.fetch_add(n_inputs);
  m.embedding_tokens_total.fetch_add(static_cast<uint64_t>(tokens));
  m.embedding_us_total.fetch_add(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count()));
}

}  // namespace

void handle_embeddings(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (ctx.embeddings == nullptr) {
    return send_error(res, not_supported("This server does not support embeddings. Start it with `--embeddings`"));
  }
  const Embedder& embedder = ctx.embeddings->embedder();
  if (Status st = check_pooled_embedder(embedder); !st.is_ok()) return send_error(res, invalid("model", st.message()));
  EmbeddingsRequest r;
  ApiError e;
  if (!parse_embeddings(req.body, ctx.model->hparams().n_vocab, &r, &e)) return send_error(res, e);
  if (Status st = check_embedding_dimensions(r.dimensions, embedder.n_embd_out(), "'dimensions'"); !st.is_ok()) {
    return send_error(res, invalid("dimensions", st.message()));
  }
  Result<EmbeddingResult> result = error(ErrorCode::kInternal, "the embedding request did not run");
  const auto t0 = std::chrono::steady_clock::now();
  const Admission a = ctx.embeddings->run([&](Embedder& em) {
    result = r.texts.empty() ? em.embed_tokens(r.token_ids, r.params) : em.embed(r.texts, r.params);
  });
  if (a != Admission::kQueued) return send_error(res, admission_error(a, ctx, res));
  if (!result.ok()) return send_error(res, core_error(result.status(), "input"));
  const EmbeddingResult& out = result.value();
  count_request(ctx.metrics, out.vectors.size(), out.total_tokens, t0);
  Json data = Json::array();
  for (size_t i = 0; i < out.vectors.size(); ++i) {
    const std::vector<float>& v = out.vectors[i];
    Json item = {{"object", "embedding"}, {"index", i}};
    item["embedding"] = r.base64 ? Json(base64_floats(v)) : Json(v);
    data.push_back(std::move(item));
  }
  send_json(res, 200, {{"object", "list"}, {"data", std::move(data)}, {"model", ctx.model_name},
                       {"usage", usage_json(out.total_tokens)}});
}

void handle_rerank(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (ctx.embeddings == nullptr || !check_reranker(ctx.embeddings->embedder(), "").is_ok()) {
    return send_error(res, not_supported("This server does not support reranking. Start it with `--reranking`"));
  }
  RerankRequest r;
  ApiError e;
  if (!parse_rerank(req.body, &r, &e)) return send_error(res, e);
  Result<RerankResult> result = error(ErrorCode::kInternal, "the rerank request did not run");
  const auto t0 = std::chrono::steady_clock::now();
  const Admission a = ctx.embeddings->run([&](Embedder& em) { result = em.rerank(r.query, r.documents, r.truncate); });
  if (a != Admission::kQueued) return send_error(res, admission_error(a, ctx, res));
  if (!result.ok()) return send_error(res, core_error(result.status(), "documents"));
  const RerankResult& out = result.value();
  count_request(ctx.metrics, out.scores.size(), out.total_tokens, t0);
  Json results = Json::array();
  for (const RankedDocument& d : rank_documents(out.scores, r.top_n)) {
    Json item = {{"index", d.index}, {"relevance_score", d.score}};
    if (r.return_documents) item["document"] = {{"text", r.documents[static_cast<size_t>(d.index)]}};
    results.push_back(std::move(item));
  }
  send_json(res, 200, {{"object", "list"}, {"model", ctx.model_name}, {"results", std::move(results)},
                       {"usage", usage_json(out.total_tokens)}});
}

}  // namespace ox::server
