// engine.embeddings.create() and engine.rerank() of the JS package: the JS options read (every key
// understood or refused by name) and OpenAI's / llama-server's response objects built, over the
// Embedder an embedding load (LoadOptions::embeddings) opened. The response is written to *out
// (Result<val> cannot be: val has no default constructor).
#pragma once

#include <emscripten/val.h>

#include "core/base/status.h"
#include "wasm/engine.h"

namespace ox::web {

// {input: string | string[], encoding_format?: 'float' | 'base64', dimensions?, truncate?} ->
// {object: 'list', data: [{object: 'embedding', index, embedding}], model, usage}.
Status create_embeddings(Engine& engine, const emscripten::val& options, emscripten::val* out);
// {query, documents: string[], top_n?, return_documents?, truncate?} ->
// {object: 'list', model, results: [{index, relevance_score, document?: {text}}], usage}.
Status rerank_documents(Engine& engine, const emscripten::val& options, emscripten::val* out);
// What ModelInfo says of an embedding model: {pooling, n_embd_out, n_ctx, n_threads}.
emscripten::val embedding_model_info(Engine& engine);

}  // namespace ox::web
