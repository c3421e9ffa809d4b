// `oxidize serve`: an OpenAI-compatible HTTP server over one model, with N slots decoded together in
// one batched forward pass per step (scheduler.h). Native only (cpp-httplib); the CLI's options
// become ServerOptions in native/cmd_serve.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/ops/pooling.h"
#include "core/quant/dtype.h"

namespace ox::server {

struct ServerOptions {
  std::string model_path;
  std::string chat_template;  // --chat-template: a built-in name or Jinja source (empty: the model's)
  std::string host = "127.0.0.1";
  int port = 8080;
  int n_slots = 1;          // -np: sequences decoded together
  int n_ctx = 0;            // -c: the whole context, split evenly over the slots (0: the model's, at most 4096)
  int n_threads = 1;
  int n_batch = 512;        // tokens per forward pass (decode tokens plus prefill chunks)
  int max_queue = 64;       // requests waiting for a slot; beyond it: 503 with Retry-After
  // --context-shift (llama-server's, off by default in v0.5.0): a slot whose context fills keeps
  // n_keep tokens, drops half of the rest and goes on; off: the reply ends with "length".
  bool context_shift = false;
  int n_keep = 0;           // --keep: a request's n_keep when it gives none
  int timeout_s = 600;      // socket read/write timeout
  size_t max_body = 8u << 20;  // request bodies above it: 413
  DType cache_type_k = DType::F16;
  DType cache_type_v = DType::F16;
  bool swa_full = false;  // --swa-full: sliding-window layers keep the whole context
  std::string api_key;                // empty: no authentication
  std::vector<std::string> cors_origins;  // origins that get CORS headers ("*": any)
  // --embeddings / --rerank (llama-server's): the model is loaded as an Embedder instead of a
  // generator, /v1/embeddings or /v1/rerank answer and the completion routes refuse (as llama-server).
  bool embeddings = false;
  bool rerank = false;         // implies embeddings with rank pooling
  Pooling pooling = Pooling::kUnspecified;  // --pooling; kUnspecified: the GGUF's pooling_type
};

// Loads the model, listens, prints one line with the URL when ready, serves until SIGINT/SIGTERM.
Status run_server(const ServerOptions& options);

}  // namespace ox::server
