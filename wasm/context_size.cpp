// Choosing a load's context (wasm/context_size.h): the default is as long as the model was trained
// for when wasm memory can hold its KV cache, and never silently smaller without saying why.
#include "wasm/context_size.h"

#include <algorithm>
#include <bit>

#include "core/base/memory.h"
#include "core/kv_cache/kv_cache.h"
#include "wasm/engine.h"

namespace ox::web {

const char* context_source_name(ContextSource source) {
  switch (source) {
    case ContextSource::kRequested: return "requested";
    case ContextSource::kTrained: return "trained";
    case ContextSource::kMemory: return "memory";
    case ContextSource::kDefault: return "default";
  }
  return "requested";
}

int power_of_two_below(int n) {
  if (n <= 1) return 0;
  return static_cast<int>(std::bit_floor(static_cast<unsigned>(n - 1)));
}

std::string bytes_text(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (uint64_t{1} << 30)) return strfmt("%.2f GiB", b / 1073741824.0);
  return strfmt("%.1f MiB", b / 1048576.0);
}

ContextChoice embedder_context_choice(int n_ctx_requested, int n_ctx, int n_ctx_train) {
  if (n_ctx_requested > 0) return {ContextSource::kRequested, strfmt("nCtx = %d as requested", n_ctx)};
  if (n_ctx == n_ctx_train) return {ContextSource::kTrained, strfmt("the trained context of %d tokens", n_ctx)};
  return {ContextSource::kDefault,
          strfmt("the trained context of %d tokens capped at %d: an embedder evaluates each input in one batch, "
                 "whose buffers grow with the context (pass nCtx for more)",
                 n_ctx_train, n_ctx)};
}

// nCtx absent: the trained context if its KV cache, plus kDefaultContextMargin, fits in what wasm
// memory can still give (the loaded session's context counted as free: the new one replaces it);
// else powers of two below it, down to kMinDefaultContext. Session::create checks the exact bytes
// (KV cache and buffers) again before allocating; when it refuses a candidate for memory, the next
// one is tried, unless a loaded session still holds memory: then the refusal goes back to
// load_model, which frees that context and asks again.
Result<std::unique_ptr<Session>> Engine::open_default_session(std::shared_ptr<const LoadedModel> model,
                                                              const LoadOptions& options, ContextChoice* choice) const {
  const Model& m = model->model();
  const int n_ctx_train = model->hparams().n_ctx_train;
  const int first = n_ctx_train > 0 ? n_ctx_train : SessionOptions::kDefaultMaxContext;
  const uint64_t available = memory_budget().available + (session_ != nullptr ? session_->kv_bytes() : 0);
  const std::string types = kv_cache_type_name(options.cache_type_k) + "/" + kv_cache_type_name(options.cache_type_v);
  std::string why;  // why `first` was not taken
  for (int n = first; n >= kMinDefaultContext || n == first; n = power_of_two_below(n)) {
    // The shape Session::create asks for: its batch is n_batch capped at the context.
    const KvCacheShape shape = m.kv_shape(n, std::min(options.n_batch, n), options.cache_type_k, options.cache_type_v,
                                          /*n_seq=*/1, options.swa_full);
    OX_ASSIGN_OR_RETURN(const uint64_t kv, KvCache::bytes_needed(shape));
    if (kv + kDefaultContextMargin > available) {
      if (why.empty()) {
        why = strfmt("its KV cache (%s in %s) and %s kept for buffers need more than the %s wasm memory can still "
                     "grow to", bytes_text(kv).c_str(), types.c_str(), bytes_text(kDefaultContextMargin).c_str(),
                     bytes_text(available).c_str());
      }
      continue;
    }
    LoadOptions at = options;
    at.n_ctx = n;
    Result<std::unique_ptr<Session>> session = open_session(model, at);
    if (!session.ok()) {
      if (session.status().code() != ErrorCode::kTooLarge || session_ != nullptr) return session.status();
      if (why.empty()) why = session.status().message();
      continue;
    }
    if (n == first && n_ctx_train > 0) {
      *choice = {ContextSource::kTrained, strfmt("the trained context of %d tokens: its KV cache (%s in %s) fits in "
                                                 "wasm memory (%s free)", n, bytes_text(kv).c_str(), types.c_str(),
                                                 bytes_text(available).c_str())};
    } else if (n == first) {
      *choice = {ContextSource::kDefault, strfmt("%d tokens: the file does not give its trained context", n)};
    } else {
      *choice = {ContextSource::kMemory,
                 strfmt("%d tokens (KV cache %s in %s), the largest power of two that fits: the trained context of "
                        "%d tokens does not (%s); pass nCtx to choose the size",
                        n, bytes_text(kv).c_str(), types.c_str(), first, why.c_str())};
    }
    return session;
  }
  return error(ErrorCode::kTooLarge,
               strfmt("%s: no context of %d tokens or more fits in wasm memory: the trained context of %d tokens "
                      "does not (%s); free memory (unload the model) or use a smaller KV cache type (cacheTypeK / "
                      "cacheTypeV 'q8_0')",
                      model->file().name().c_str(), kMinDefaultContext, first, why.c_str()));
}

}  // namespace ox::web
