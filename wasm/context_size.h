// The context a browser load gets and why (ModelInfo.n_ctx_source / n_ctx_reason): nCtx as asked,
// else the model's trained context when its KV cache fits in what wasm memory can still grow to,
// else the largest power of two below it that fits.
#pragma once

#include <cstdint>
#include <string>

namespace ox::web {

enum class ContextSource {
  kRequested,  // LoadOptions::n_ctx > 0
  kTrained,    // the model's trained context (n_ctx_train)
  kMemory,     // smaller than the trained context: the largest power of two that fits in memory
  kDefault,    // a fixed default: embeddings cap the trained context (EmbedderOptions::kDefaultMaxContext);
               // a file without a trained context gets SessionOptions::kDefaultMaxContext
};

// The JS spelling: "requested", "trained", "memory", "default".
const char* context_source_name(ContextSource source);

struct ContextChoice {
  ContextSource source = ContextSource::kRequested;
  std::string reason;  // a sentence with the numbers, for ModelInfo.n_ctx_reason
};

// Memory a default context leaves free beyond its KV cache: the session's activation buffers
// (Session::create counts those exactly), the sampler's per-vocabulary arrays, templates, grammars,
// tokenizer output and the conversation cache's snapshots. wasm aborts when malloc finds no room
// where JS could not catch it, so the default keeps well away from the edge; an explicit nCtx may
// use all of it.
inline constexpr uint64_t kDefaultContextMargin = uint64_t{256} << 20;

// The smallest context a default load settles for; below it the load is refused with the numbers.
inline constexpr int kMinDefaultContext = 256;

// The next default candidate below n: the largest power of two smaller than n.
int power_of_two_below(int n);

// "1.50 GiB" / "12.0 MiB".
std::string bytes_text(uint64_t bytes);

// An embedder's context (Embedder::create chose it: nCtx, else the trained context capped).
ContextChoice embedder_context_choice(int n_ctx_requested, int n_ctx, int n_ctx_train);

}  // namespace ox::web
