// POST /v1/embeddings (OpenAI's request and response) and POST /v1/rerank (llama-server's Jina-style
// API: query, documents, top_n, return_documents -> results by relevance), answered by the
// server's EmbeddingQueue when it was started with --embeddings / --rerank.
#pragma once

#include <httplib.h>

#include "native/server/context.h"

namespace ox::server {

void handle_embeddings(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_rerank(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace ox::server
