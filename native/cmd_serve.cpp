// `oxidize serve`: llama-server's flags read into ServerOptions (native/server/). The wasm build
// has no sockets, so there the command is an error.
#include "native/commands.h"

#if OXIDIZE_HAS_SERVER
#include <limits>

#include "core/base/cpu_info.h"
#include "core/kv_cache/kv_cache.h"
#include "kernels/kernels.h"
#include "native/server/auth.h"
#include "native/server/server.h"
#endif

namespace ox::cli {

Status cmd_serve(Args& args) {
#if !OXIDIZE_HAS_SERVER
  (void)args;
  return error(ErrorCode::kUnsupported,
               "this build has no HTTP server (the wasm build, or cpp-httplib was not found when it was configured)");
#else
  server::ServerOptions o;
  OX_ASSIGN_OR_RETURN(o.model_path, args.string({"-m", "--model"}, ""));
  if (o.model_path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::string isa, args.string({"--isa"}, ""));
  if (!isa.empty()) OX_TRY(kernels::set_isa_override(isa));
  OX_ASSIGN_OR_RETURN(o.host, args.string({"--host"}, "127.0.0.1"));
  OX_ASSIGN_OR_RETURN(int64_t port, args.integer({"--port"}, 8080, 0, 65535));
  OX_ASSIGN_OR_RETURN(int64_t n_slots, args.integer({"-np", "--parallel"}, 1, 1, 256));
  OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, 0, 0, 1 << 24));
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, default_thread_count(), 1, 256));
  OX_ASSIGN_OR_RETURN(int64_t n_batch, args.integer({"-b", "--batch-size"}, 512, 1, 1 << 16));
  OX_ASSIGN_OR_RETURN(int64_t n_gpu_layers, args.integer({"-ngl", "--n-gpu-layers"}, 0, -1, 1 << 20));
  (void)n_gpu_layers;  // accepted for llama.cpp scripts (a warning was printed)
  OX_ASSIGN_OR_RETURN(int64_t timeout, args.integer({"--timeout", "-to"}, 600, 1, 86400));
  OX_ASSIGN_OR_RETURN(int64_t queue, args.integer({"--queue"}, 64, 0, 4096));
  OX_ASSIGN_OR_RETURN(int64_t max_body, args.integer({"--max-body"}, 8 << 20, 1024, int64_t{1} << 32));
  OX_ASSIGN_OR_RETURN(o.api_key, args.string({"--api-key"}, ""));
  OX_ASSIGN_OR_RETURN(std::string key_file, args.string({"--api-key-file"}, ""));
  OX_ASSIGN_OR_RETURN(o.cors_origins, args.strings({"--cors"}));
  const bool shift = args.flag({"--context-shift"});
  const bool no_shift = args.flag({"--no-context-shift"});
  if (shift && no_shift) return error(ErrorCode::kInvalidArgument, "give either --context-shift or --no-context-shift");
  o.context_shift = shift;  // off by default, as llama-server v0.5.0
  OX_ASSIGN_OR_RETURN(int64_t keep, args.integer({"--keep"}, 0, -1, std::numeric_limits<int32_t>::max()));
  o.embeddings = args.flag({"--embeddings", "--embedding"});
  o.rerank = args.flag({"--rerank", "--reranking"});
  OX_ASSIGN_OR_RETURN(std::string pooling, args.string({"--pooling"}, ""));
  if (!pooling.empty()) {
    if (!o.embeddings && !o.rerank) {
      return error(ErrorCode::kInvalidArgument, "--pooling applies to an embedding server: add --embeddings");
    }
    OX_ASSIGN_OR_RETURN(o.pooling, parse_pooling(pooling, "--pooling"));
  }
  OX_ASSIGN_OR_RETURN(o.chat_template, chat_template_arg(args));
  OX_TRY(cache_types(args, &o.cache_type_k, &o.cache_type_v));
  o.swa_full = args.flag({"--swa-full"});
  OX_TRY(args.finish());
  if (!key_file.empty()) {
    if (!o.api_key.empty()) return error(ErrorCode::kInvalidArgument, "give either --api-key or --api-key-file");
    std::string why;
    o.api_key = server::read_key_file(key_file, &why);
    if (o.api_key.empty()) return error(ErrorCode::kInvalidArgument, why);
  }
  o.port = static_cast<int>(port);
  o.n_slots = static_cast<int>(n_slots);
  o.n_ctx = static_cast<int>(n_ctx);
  o.n_threads = static_cast<int>(n_threads);
  o.n_batch = static_cast<int>(n_batch);
  o.timeout_s = static_cast<int>(timeout);
  o.max_queue = static_cast<int>(queue);
  o.n_keep = static_cast<int>(keep);
  o.max_body = static_cast<size_t>(max_body);
  return server::run_server(o);
#endif
}

}  // namespace ox::cli
