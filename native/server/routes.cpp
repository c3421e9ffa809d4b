// The endpoint table and the handlers that are not completions or embeddings: health, models,
// tokenize, detokenize, apply-template, metrics; plus readiness, API key, CORS and error bodies for all.
#include "native/server/routes.h"

#include <chrono>
#include <initializer_list>

#include "native/server/auth.h"
#include "native/server/embeddings.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;
using Handler = void (*)(ServerContext&, const httplib::Request&, httplib::Response&);

struct Route {
  const char* method;
  const char* path;
  bool needs_key;  // with --api-key: requires Authorization: Bearer KEY
  Handler handler;
};

void health(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  if (!ctx.ready.load(std::memory_order_acquire)) {
    ApiError e;
    e.status = 503;
    e.type = "unavailable_error";
    e.code = "loading_model";
    e.message = "Loading model";
    return send_error(res, e);
  }
  send_json(res, 200, {{"status", "ok"}});
}

void models(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  const HParams& hp = ctx.model->hparams();
  Json model = {{"id", ctx.model_name},
                {"object", "model"},
                {"created", 0},
                {"owned_by", "oxidize"},
                {"meta",
                 {{"n_vocab", hp.n_vocab},
                  {"n_ctx_train", hp.n_ctx_train},
                  {"n_ctx_slot", ctx.scheduler ? ctx.scheduler->n_ctx_slot() : ctx.embeddings->embedder().n_ctx()},
                  {"n_slots", ctx.scheduler ? ctx.scheduler->n_slots() : 1}}}};
  send_json(res, 200, {{"object", "list"}, {"data", Json::array({model})}});
}

// Fields of the small llama-server routes: only `allowed` may appear.
bool only_keys(const Json& body, std::initializer_list<const char*> allowed, ApiError* e) {
  for (const auto& [key, value] : body.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      *e = bad_param(key, "unknown_parameter", strfmt("unknown parameter '%s'", key.c_str()));
      return false;
    }
  }
  return true;
}

bool optional_bool(const Json& body, const char* name, bool fallback, bool* out, ApiError* e) {
  *out = fallback;
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return true;
  if (!it->is_boolean()) {
    *e = bad_param(name, "invalid_type", strfmt("'%s' must be a boolean", name));
    return false;
  }
  *out = it->get<bool>();
  return true;
}

void tokenize(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  Json body;
  ApiError e;
  bool add_special = false, parse_special = true, with_pieces = false;
  if (!parse_json_object(req.body, &body, &e) ||
      !only_keys(body, {"content", "add_special", "parse_special", "with_pieces"}, &e) ||
      !optional_bool(body, "add_special", false, &add_special, &e) ||
      !optional_bool(body, "parse_special", true, &parse_special, &e) ||
      !optional_bool(body, "with_pieces", false, &with_pieces, &e)) {
    return send_error(res, e);
  }
  const auto content = body.find("content");
  if (content == body.end() || !content->is_string()) {
    return send_error(res, bad_param("content", "invalid_type", "'content' must be a string"));
  }
  const tok::Tokenizer& t = ctx.model->tokenizer();
  Result<std::vector<int32_t>> ids = t.encode(content->get<std::string>(), add_special, parse_special);
  if (!ids.ok()) return send_error(res, bad_param("content", "invalid_value", ids.status().message()));
  Json tokens = Json::array();
  for (int32_t id : ids.value()) {
    if (!with_pieces) {
      tokens.push_back(id);
      continue;
    }
    Result<std::string> piece = t.token_to_piece(id, /*render_special=*/true);
    tokens.push_back({{"id", id}, {"piece", piece.ok() ? piece.value() : std::string()}});
  }
  send_json(res, 200, {{"tokens", tokens}});
}

void detokenize(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  Json body;
  ApiError e;
  if (!parse_json_object(req.body, &body, &e) || !only_keys(body, {"tokens"}, &e)) return send_error(res, e);
  const auto tokens = body.find("tokens");
  if (tokens == body.end() || !tokens->is_array()) {
    return send_error(res, bad_param("tokens", "invalid_type", "'tokens' must be an array of token ids"));
  }
  const int n_vocab = ctx.model->hparams().n_vocab;
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const Json& v = (*tokens)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= n_vocab) {
      return send_error(res, bad_param("tokens", "invalid_value",
                                       strfmt("tokens[%zu] must be a token id in [0, %d)", i, n_vocab)));
    }
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  Result<std::string> text = ctx.model->tokenizer().decode(ids, /*render_special=*/false);
  if (!text.ok()) return send_error(res, bad_param("tokens", "invalid_value", text.status().message()));
  send_json(res, 200, {{"content", text.value()}});
}

void apply_template(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  CompletionRequest r;
  ApiError e;
  if (!parse_completion_request(req.body, Endpoint::kChat, &r, &e)) return send_error(res, e);
  Result<std::string> prompt = render_tool_chat(*ctx.model, r.messages, r.tools);
  if (!prompt.ok()) return send_error(res, bad_param("messages", "invalid_value", prompt.status().message()));
  send_json(res, 200, {{"prompt", prompt.value()}});
}

void metrics(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(ctx.metrics.prometheus_text(), "text/plain; version=0.0.4");
}

// A server started with --embeddings / --rerank has no generator (as llama-server).
bool refuse_generation(const ServerContext& ctx, httplib::Response& res) {
  if (ctx.scheduler != nullptr) return false;
  ApiError e;
  e.status = 501;
  e.type = "not_supported_error";
  e.code = "not_supported";
  e.message = "This server does not support completions: it was started with --embeddings or --rerank";
  send_error(res, e);
  return true;
}

void chat(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!refuse_generation(ctx, res)) handle_completion(ctx, Endpoint::kChat, req, res);
}

void completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!refuse_generation(ctx, res)) handle_completion(ctx, Endpoint::kCompletion, req, res);
}

// Every endpoint, once. Paths without /v1 are llama-server's aliases.
const Route kRoutes[] = {
    {"GET", "/health", false, health},
    {"GET", "/v1/models", true, models},
    {"GET", "/models", true, models},
    {"POST", "/v1/chat/completions", true, chat},
    {"POST", "/chat/completions", true, chat},
    {"POST", "/v1/completions", true, completions},
    {"POST", "/completions", true, completions},
    {"POST", "/tokenize", true, tokenize},
    {"POST", "/detokenize", true, detokenize},
    {"POST", "/apply-template", true, apply_template},
    {"GET", "/metrics", true, metrics},
    {"POST", "/v1/embeddings", true, handle_embeddings},
    {"POST", "/embeddings", true, handle_embeddings},
    {"POST", "/v1/rerank", true, handle_rerank},
    {"POST", "/rerank", true, handle_rerank},
    {"POST", "/v1/reranking", true, handle_rerank},
    {"POST", "/reranking", true, handle_rerank},
};

const Route* find_route(const std::string& path) {
  for (const Route& r : kRoutes) {
    if (path == r.path) return &r;
  }
  return nullptr;
}

ApiError status_error(int status, const std::string& message) {
  ApiError e;
  e.status = status;
  e.message = message;
  e.type = status >= 500 ? "server_error" : "invalid_request_error";
  return e;
}

void add_cors(const ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (ctx.options.cors_origins.empty()) return;
  const std::string origin = allowed_origin(ctx.options.cors_origins, req.get_header_value("Origin"));
  if (origin.empty()) return;
  res.set_header("Access-Control-Allow-Origin", origin);
  if (origin != "*") res.set_header("Vary", "Origin");
}

// Runs before routing: counts, CORS preflight, readiness and the API key.
httplib::Server::HandlerResponse before(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  ctx.metrics.requests_total.fetch_add(1);
  if (req.method == "OPTIONS") {  // CORS preflight: answered only for the origins given
    const bool allowed = !allowed_origin(ctx.options.cors_origins, req.get_header_value("Origin")).empty();
    res.status = allowed ? 204 : 403;
    if (allowed) {
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
    } else {
      send_error(res, status_error(403, "this origin may not call the server (see --cors)"));
    }
    return httplib::Server::HandlerResponse::Handled;
  }
  const Route* route = find_route(req.path);
  if (!ctx.options.api_key.empty() && (route == nullptr || route->needs_key) &&
      !bearer_matches(req.get_header_value("Authorization"), ctx.options.api_key)) {
    ApiError e = status_error(401, "invalid or missing API key: send 'Authorization: Bearer KEY'");
    e.code = "invalid_api_key";
    send_error(res, e);
    return httplib::Server::HandlerResponse::Handled;
  }
  if (route != nullptr && route->handler != health && !ctx.ready.load(std::memory_order_acquire)) {
    ApiError e = status_error(503, "Loading model");
    e.code = "loading_model";
    send_error(res, e);
    return httplib::Server::HandlerResponse::Handled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

}  // namespace

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, const ApiError& error) { send_json(res, error.status, error_json(error)); }

void install_routes(httplib::Server& server, ServerContext& ctx) {
  for (const Route& r : kRoutes) {
    auto handler = [&ctx, h = r.handler](const httplib::Request& req, httplib::Response& res) { h(ctx, req, res); };
    if (std::string_view(r.method) == "GET") {
      server.Get(r.path, handler);
    } else {
      server.Post(r.path, handler);
    }
  }
  server.set_pre_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
    return before(ctx, req, res);
  });
  server.set_post_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
    add_cors(ctx, req, res);
    if (res.status >= 400) ctx.metrics.requests_rejected.fetch_add(1);
  });
  // Statuses cpp-httplib sets itself (404, 405, 413, 400 for a malformed request) get an error body.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = strfmt("HTTP error %d (malformed or unsupported request)", res.status);
    if (res.status == 404) message = strfmt("no endpoint %s %s", req.method.c_str(), req.path.c_str());
    if (res.status == 413) {
      message = strfmt("the request body is larger than %zu bytes", ctx.options.max_body);
      // cpp-httplib caps form-encoded bodies (curl -d without a Content-Type) at 8 KiB.
      if (req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0) {
        message += " or, sent as application/x-www-form-urlencoded, than 8192 bytes: send it as application/json";
      }
    }
    send_error(res, status_error(res.status, message));
    return httplib::Server::HandlerResponse::Handled;
  }));
}

}  // namespace ox::server
