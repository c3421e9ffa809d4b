// Engine: what the browser worker drives, one model and one session at a time. Plain C++ with
// Status/Result; bindings.cpp turns it into JS values. The model's bytes are written by JS into a
// buffer this class allocates, so a download is never held twice.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/session/conversation_cache.h"
#include "core/session/embedding.h"
#include "core/session/generation.h"
#include "core/session/session.h"
#include "core/session/tool_chat.h"
#include "core/tools/bench.h"
#include "wasm/context_size.h"

namespace ox::web {

// wasm32 addresses 4 GiB at most (-sMAXIMUM_MEMORY=4GB); no MEMORY64 on this toolchain.
inline constexpr uint64_t kMaxWasmMemory = uint64_t{4} << 30;

// What JS may ask of a benchmark; the thread count is always the loaded session's.
struct BenchRequest {
  std::vector<int> n_prompt;  // pp tests, 0 entries skipped (as `oxidize bench -p`)
  std::vector<int> n_gen;     // tg tests
  std::vector<int> n_depth = {0};  // tokens in the context before each test (as `oxidize bench -d`)
  int repetitions = 5;
  bool warmup = true;
};
inline constexpr int kMaxBenchTokens = 1 << 20;  // the native CLI's bounds
inline constexpr int kMaxBenchRepetitions = 1000;

struct LoadOptions {
  int n_ctx = 0;      // 0: the trained context where memory allows (open_default_session)
  int n_threads = 1;  // the worker's thread included
  int n_batch = 512;
  DType cache_type_k = DType::F16;  // JS cacheTypeK / cacheTypeV
  DType cache_type_v = DType::F16;
  bool swa_full = false;  // JS swaFull: sliding-window layers keep the whole context
  std::string chat_template;  // JS chatTemplate: a built-in name or Jinja source; empty: the model's
  // JS embeddings / pooling (wllama's and llama.cpp's names): the model is opened as an Embedder
  // (wasm/embeddings.cpp) instead of a generating session; pooling kRank makes it a reranker.
  bool embeddings = false;
  Pooling pooling = Pooling::kUnspecified;
};

inline constexpr int kConversationSlots = 8;

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Allocates the buffer the next load_model() will parse; frees any previous unused one.
  // kTooLarge if `size` cannot fit in wasm memory, checked before allocating. When it fits only
  // without the loaded model, that model is unloaded to make room.
  Result<uint8_t*> reserve_model_buffer(uint64_t size);
  void release_model_buffer();
  uint8_t* model_buffer() const { return buffer_; }
  uint64_t model_buffer_size() const { return buffer_size_; }

  // Parses the reserved buffer (which the model then owns) and opens a session over it; only then
  // is the previous model unloaded. On error the previous model stays loaded (with an empty
  // context when the new one's did not fit beside its context). nCtx above the trained context is
  // refused; a context too large for memory is refused with the numbers before allocating.
  // n_ctx 0: the trained context if its KV cache fits in memory, else the largest power of two
  // that does (context_choice() says which and why).
  Status load_model(std::string name, const LoadOptions& options);
  void unload();
  bool loaded() const { return session_ != nullptr; }
  // A model loaded with LoadOptions::embeddings (then loaded() is false: there is no session).
  bool embedding_loaded() const { return embedder_ != nullptr; }
  Embedder* embedder() { return embedder_.get(); }
  // The loaded model's options, n_ctx the context it got (a default resolved to its number).
  const LoadOptions& load_options() const { return load_options_; }
  const ContextChoice& context_choice() const { return context_choice_; }
  const LoadedModel& model() const { return *model_; }
  Session& session() { return *session_; }

  Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const;
  Result<std::string> detokenize(std::span<const int32_t> tokens, bool render_special) const;
  Result<std::string> apply_chat_template(std::string_view messages_json, bool add_generation_prompt) const;
  // Prompt tokens of a conversation: message text never becomes control tokens (LoadedModel::chat_prompt).
  Result<std::vector<int32_t>> chat_prompt(std::string_view messages_json, bool add_generation_prompt) const;
  // The same with tools (tools_json: {tools, tool_choice?, parallel_tool_calls?} as OpenAI's): the
  // next begin_generation() gets the tool-call constraint and parses its reply (tool_reply()).
  Result<std::vector<int32_t>> chat_prompt_with_tools(std::string_view messages_json, std::string_view tools_json);

  // A generation in steps (see Generation); starting one ends the previous.
  Status begin_generation(std::vector<int32_t> prompt, const GenerateOptions& options);
  Status step(int max_events, double budget_ms, std::vector<StepEvent>* events);
  void abort_generation(std::vector<StepEvent>* events);
  const Generation* generation() const { return generation_.get(); }
  // The running generation's reply parsed for tool calls (chat_prompt_with_tools), or null.
  ToolReply* tool_reply() { return tool_reply_.get(); }

  // Appends tokens to the context (after dropping positions >= n_keep when n_keep >= 0).
  Status evaluate(std::span<const int32_t> tokens, int n_keep);
  // The session's saved state (Session::save_state: tokens, last logits, KV cache) and loading one
  // into it; a successful load ends any generation. On error the session is unchanged.
  Result<std::vector<uint8_t>> save_state() const;
  Status load_state(std::span<const uint8_t> bytes);

  // Next-token logits after the last evaluated token: after a generation, the distribution the
  // last generated token was sampled from (that token itself is not evaluated yet).
  std::span<const float> logits() const;

  // `oxidize bench` (core/tools/bench.h: run_bench) on the loaded model, one test per
  // bench_step() so the worker returns to its event loop between tests (abort, progress). The
  // session is dropped for the run: every pthread of the wasm pool serves the benchmark's own
  // sessions (the pool holds one session's threads). end_bench() re-creates it, empty, as after
  // load_model(); it must follow every successful begin_bench(), including after an error.
  Status begin_bench(const BenchRequest& request);
  // Runs the next test and appends its result to bench_results(); true once every test has run.
  Result<bool> bench_step();
  Status end_bench();
  bool benching() const { return bench_ != nullptr; }
  int bench_tests() const;
  const std::vector<BenchResult>& bench_results() const { return bench_results_; }

 private:
  struct BenchRun;
  Status require_model() const;
  static Result<std::unique_ptr<Session>> open_session(std::shared_ptr<const LoadedModel> model,
                                                       const LoadOptions& options);
  // options.n_ctx 0: the default context (context_size.cpp); otherwise open_session.
  Result<std::unique_ptr<Session>> open_chosen_session(std::shared_ptr<const LoadedModel> model,
                                                       const LoadOptions& options, ContextChoice* choice) const;
  Result<std::unique_ptr<Session>> open_default_session(std::shared_ptr<const LoadedModel> model,
                                                        const LoadOptions& options, ContextChoice* choice) const;
  Status load_embedder(std::shared_ptr<const LoadedModel> model, const LoadOptions& options);  // embeddings.cpp

  uint8_t* buffer_ = nullptr;  // reserved, not yet handed to a model
  uint64_t buffer_size_ = 0;
  std::shared_ptr<const LoadedModel> model_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Embedder> embedder_;  // instead of session_ for LoadOptions::embeddings
  std::unique_ptr<Generation> generation_;
  // Set by chat_prompt_with_tools, taken by the next begin_generation.
  struct PendingTools {
    ToolOptions tools;
    ToolChatTurn turn;
  };
  std::unique_ptr<PendingTools> pending_tools_;
  std::unique_ptr<ToolReply> tool_reply_;
  uint64_t tool_id_seed_ = 0x6f786964697a65ull;  // call ids: a per-engine sequence (no entropy needed)
  // Conversations other than the session's, saved so that a side request does not evict the main
  // chat: 8 slots, at most a quarter of the memory left when the model was loaded.
  ConversationCache conversations_{kConversationSlots, 0};
  LoadOptions load_options_;
  ContextChoice context_choice_;
  std::unique_ptr<BenchRun> bench_;
  std::vector<BenchResult> bench_results_;  // of the last benchmark
};

}  // namespace ox::web
