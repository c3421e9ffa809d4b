// The HTTP surface: one table of endpoints (method, path, whether the API key is required,
// handler), installed on a cpp-httplib server together with the checks every request passes
// (readiness, API key, CORS) and OpenAI-shaped error bodies.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "native/server/api_error.h"
#include "native/server/context.h"
#include "native/server/params.h"

namespace ox::server {

void install_routes(httplib::Server& server, ServerContext& ctx);

void send_json(httplib::Response& res, int status, const nlohmann::ordered_json& body);
void send_error(httplib::Response& res, const ApiError& error);

// POST /v1/chat/completions and /v1/completions (completions.cpp).
void handle_completion(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req, httplib::Response& res);

}  // namespace ox::server
