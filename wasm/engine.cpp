// Engine: model buffer management, load/unload and the calls the browser worker forwards.
#include "wasm/engine.h"

#include "core/base/memory.h"

#include <cstdlib>
#include <utility>

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#endif

namespace ox::web {
namespace {

// Memory already taken by the runtime, the stacks and whatever is loaded (the heap only grows).
uint64_t heap_in_use() {
#ifdef __EMSCRIPTEN__
  return static_cast<uint64_t>(emscripten_get_heap_size());
#else
  return 0;
#endif
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

struct Engine::BenchRun {
  BenchOptions options;  // the whole plan; each step runs one of `tests` through run_bench
  struct Test {
    int n_depth, n_prompt, n_gen;  // one of n_prompt, n_gen is 0
  };
  std::vector<Test> tests;
  size_t next = 0;
};

Engine::Engine() = default;  // here, where BenchRun is complete

Engine::~Engine() {
  unload();
  release_model_buffer();
}

Result<uint8_t*> Engine::reserve_model_buffer(uint64_t size) {
  release_model_buffer();
  if (size == 0) return error(ErrorCode::kInvalidFile, "the model file is empty");
  // The weights are used in place, but the session also needs room (KV cache, activations):
  // keep 64 MiB of the 4 GiB for them so the obvious failure is reported here, not as an abort.
  constexpr uint64_t kHeadroom = uint64_t{64} << 20;
  const uint64_t in_use = heap_in_use();
  if (size > kMaxWasmMemory - kHeadroom) {
    return error(ErrorCode::kTooLarge,
                 strfmt("the model is %llu bytes (%.0f MiB), larger than wasm memory: a wasm32 module addresses at "
                        "most 4096 MiB, and the runtime and the context need part of it",
                        static_cast<unsigned long long>(size), mib(size)));
  }
  void* p = std::malloc(static_cast<size_t>(size));
  if (p == nullptr && (model_ != nullptr || bench_ != nullptr)) {
    // The new file and the loaded model do not fit together: only now is the loaded one given up
    // (a load that fails before this point, a bad URL say, leaves it loaded).
    unload();
    p = std::malloc(static_cast<size_t>(size));
  }
  if (p == nullptr) {
    return error(ErrorCode::kTooLarge,
                 strfmt("cannot allocate %.0f MiB of wasm memory for the model (%.0f MiB already in use, at most "
                        "4096 MiB; the browser may allow less): the model is too large for this device",
                        mib(size), mib(in_use)));
  }
  buffer_ = static_cast<uint8_t*>(p);
  buffer_size_ = size;
  return buffer_;
}

void Engine::release_model_buffer() {
  std::free(buffer_);
  buffer_ = nullptr;
  buffer_size_ = 0;
}

Status Engine::load_model(std::string name, const LoadOptions& options) {
  // Everything of the new model is built before the loaded one is let go: any error (a bad file,
  // an unknown template, a context too large for memory) leaves the previous model loaded.
  if (buffer_ == nullptr) return error(ErrorCode::kInvalidArgument, "no model bytes were written before loading");
  uint8_t* bytes = buffer_;
  const uint64_t size = buffer_size_;
  buffer_ = nullptr;  // from here the model (or this scope, on error) owns the bytes
  buffer_size_ = 0;
  std::shared_ptr<const void> owner(bytes, [](const void* p) { std::free(const_cast<void*>(p)); });
  // Writable: the buffer is ours, and the weights may be converted in place to the layouts the
  // kernels ask for (KernelTable::relayout). JS caches the file from it before this call.
  OX_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model,
                      LoadedModel::from_bytes(std::span<const uint8_t>(bytes, static_cast<size_t>(size)),
                                              std::move(name), std::move(owner), /*writable=*/true));
  if (!options.chat_template.empty()) {
    OX_ASSIGN_OR_RETURN(model, model->with_chat_template(options.chat_template));
  }
  const int n_ctx_train = model->hparams().n_ctx_train;
  if (n_ctx_train > 0 && options.n_ctx > n_ctx_train) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("nCtx = %d is above %s's trained context of %d tokens", options.n_ctx,
                        model->file().name().c_str(), n_ctx_train));
  }
  if (options.embeddings) return load_embedder(std::move(model), options);
  ContextChoice choice;
  Result<std::unique_ptr<Session>> session = open_chosen_session(model, options, &choice);
  if (!session.ok() && session.status().code() == ErrorCode::kTooLarge && session_ != nullptr) {
    // No room beside the loaded model's context: free that context and try again; if the new one
    // still does not fit, the previous model gets a fresh (empty) context back and stays loaded.
    bench_.reset();
    generation_.reset();
    conversations_.clear();
    session_.reset();
    session = open_chosen_session(model, options, &choice);
    if (!session.ok()) {
      Result<std::unique_ptr<Session>> previous = open_session(model_, load_options_);
      if (previous.ok()) {
        session_ = std::move(previous.value());
      } else {
        unload();
      }
      return session.status();
    }
  }
  if (!session.ok()) return session.status();
  unload();
  model_ = std::move(model);
  session_ = std::move(session.value());
  conversations_ = ConversationCache(kConversationSlots, memory_budget().available / 4);
  load_options_ = options;
  load_options_.n_ctx = session_->n_ctx();  // end_bench and a restore re-create this context, not a new choice
  context_choice_ = std::move(choice);
  return Status::ok();
}

Result<std::unique_ptr<Session>> Engine::open_chosen_session(std::shared_ptr<const LoadedModel> model,
                                                             const LoadOptions& options, ContextChoice* choice) const {
  if (options.n_ctx == 0) return open_default_session(std::move(model), options, choice);
  *choice = {ContextSource::kRequested, strfmt("nCtx = %d as requested", options.n_ctx)};
  return open_session(std::move(model), options);
}

Result<std::unique_ptr<Session>> Engine::open_session(std::shared_ptr<const LoadedModel> model,
                                                      const LoadOptions& options) {
  SessionOptions session_options;
  session_options.n_ctx = options.n_ctx;
  session_options.n_threads = options.n_threads;
  session_options.n_batch = options.n_batch;
  session_options.cache_type_k = options.cache_type_k;
  session_options.cache_type_v = options.cache_type_v;
  session_options.swa_full = options.swa_full;
  return Session::create(std::move(model), session_options);
}

void Engine::unload() {
  bench_.reset();
  generation_.reset();
  conversations_.clear();
  session_.reset();  // before the model: the session refers to it
  embedder_.reset();
  model_.reset();
}

Status Engine::require_model() const {
  if (session_ == nullptr && embedder_ != nullptr) {
    return error(ErrorCode::kInvalidArgument, "the model was loaded with embeddings: true: only embeddings and "
                                              "rerank are available (load it without embeddings to generate)");
  }
  if (session_ == nullptr) return error(ErrorCode::kInvalidArgument, "no model is loaded");
  return Status::ok();
}

Result<std::vector<int32_t>> Engine::tokenize(std::string_view text, bool add_special, bool parse_special) const {
  OX_TRY(require_model());
  return session_->tokenize(text, add_special, parse_special);
}

Result<std::string> Engine::detokenize(std::span<const int32_t> tokens, bool render_special) const {
  OX_TRY(require_model());
  return model_->tokenizer().decode(tokens, render_special);
}

Result<std::string> Engine::apply_chat_template(std::string_view messages_json, bool add_generation_prompt) const {
  OX_TRY(require_model());
  return model_->apply_chat_template(messages_json, add_generation_prompt);
}

Result<std::vector<int32_t>> Engine::chat_prompt(std::string_view messages_json, bool add_generation_prompt) const {
  OX_TRY(require_model());
  return model_->chat_prompt_from_json(messages_json, add_generation_prompt);
}

Result<std::vector<int32_t>> Engine::chat_prompt_with_tools(std::string_view messages_json, std::string_view tools_json) {
  OX_TRY(require_model());
  pending_tools_.reset();
  const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(messages_json, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) {
    return error(ErrorCode::kInvalidArgument, "messages must be a JSON array of messages");
  }
  const nlohmann::ordered_json req = nlohmann::ordered_json::parse(tools_json, nullptr, false);
  if (req.is_discarded() || !req.is_object()) return error(ErrorCode::kInvalidArgument, "tools: expected JSON");
  auto pending = std::make_unique<PendingTools>();
  if (req.contains("tools") && !req["tools"].is_null()) {
    if (!req["tools"].is_array() || req["tools"].empty()) {
      return error(ErrorCode::kInvalidArgument, "tools: expected a non-empty array of function tools");
    }
    pending->tools.tools = req["tools"];
  }
  if (req.contains("tool_choice") && !req["tool_choice"].is_null()) {
    OX_ASSIGN_OR_RETURN(pending->tools.choice, chat::parse_tool_choice(nlohmann::json::parse(req["tool_choice"].dump())));
    if (!pending->tools.active() && pending->tools.choice.mode != chat::ToolChoice::Mode::kAuto &&
        pending->tools.choice.mode != chat::ToolChoice::Mode::kNone) {
      return error(ErrorCode::kInvalidArgument, "tool_choice requires tools with at least one function");
    }
  }
  if (req.contains("parallel_tool_calls") && !req["parallel_tool_calls"].is_null()) {
    if (!req["parallel_tool_calls"].is_boolean()) return error(ErrorCode::kInvalidArgument, "parallel_tool_calls must be a boolean");
    pending->tools.parallel_tool_calls = req["parallel_tool_calls"].get<bool>();
  }
  OX_ASSIGN_OR_RETURN(pending->turn, prepare_tool_chat(*model_, messages, pending->tools));
  std::vector<int32_t> prompt = std::move(pending->turn.prompt);
  if (pending->tools.active()) pending_tools_ = std::move(pending);
  return prompt;
}

Status Engine::begin_generation(std::vector<int32_t> prompt, const GenerateOptions& given) {
  OX_TRY(require_model());
  generation_.reset();
  tool_reply_.reset();
  GenerateOptions options = given;
  if (std::unique_ptr<PendingTools> pending = std::move(pending_tools_); pending != nullptr) {
    if (pending->turn.constraint != nullptr && options.constraint != nullptr) {
      return error(ErrorCode::kInvalidArgument,
                   "tools (with tool_choice other than \"none\") cannot be combined with response_format, grammar or json_schema");
    }
    if (pending->turn.constraint != nullptr) options.constraint = pending->turn.constraint;
    options.render_special = true;  // tool-call markers may be control tokens
    tool_reply_ = std::make_unique<ToolReply>(pending->turn.format, pending->tools, pending->turn.thinking_forced_open,
                                              tool_id_seed_++);
  }
  // A prompt that does not continue the session's conversation: bring in the saved one it
  // continues, and keep the session's (see ConversationCache).
  OX_TRY(conversations_.swap_in(*session_, prompt).status());
  auto generation = std::make_unique<Generation>(*session_, std::move(prompt), options, load_options_.n_batch);
  OX_TRY(generation->begin());
  generation_ = std::move(generation);
  return Status::ok();
}

Status Engine::step(int max_events, double budget_ms, std::vector<StepEvent>* events) {
  OX_TRY(require_model());
  if (generation_ == nullptr) return error(ErrorCode::kInvalidArgument, "no generation is running");
  Status status = generation_->step(max_events, budget_ms, events);
  if (!status.is_ok()) generation_.reset();
  return status;
}

void Engine::abort_generation(std::vector<StepEvent>* events) {
  if (generation_ != nullptr) generation_->abort(events);
}

Status Engine::evaluate(std::span<const int32_t> tokens, int n_keep) {
  OX_TRY(require_model());
  generation_.reset();
  if (n_keep >= 0) OX_TRY(session_->truncate(n_keep < session_->n_past() ? n_keep : session_->n_past()));
  return session_->eval(tokens);
}

Result<std::vector<uint8_t>> Engine::save_state() const {
  OX_TRY(require_model());
  return session_->save_state();
}

Status Engine::load_state(std::span<const uint8_t> bytes) {
  OX_TRY(require_model());
  OX_TRY(session_->load_state(bytes));
  generation_.reset();  // it referred to positions the loaded state replaced
  return Status::ok();
}

std::span<const float> Engine::logits() const {
  if (session_ == nullptr) return {};
  return session_->logits();
}

// ---- benchmark ------------------------------------------------------------------------------

namespace {

Status check_sizes(const std::vector<int>& sizes, const char* what) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sizes[i] > kMaxBenchTokens) {
      return error(ErrorCode::kInvalidArgument, strfmt("bench: %s[%zu] = %d is not a token count in [0, %d]", what, i,
                                                       sizes[i], kMaxBenchTokens));
    }
  }
  return Status::ok();
}

}  // namespace

Status Engine::begin_bench(const BenchRequest& request) {
  OX_TRY(require_model());
  OX_TRY(check_sizes(request.n_prompt, "nPrompt"));
  OX_TRY(check_sizes(request.n_gen, "nGen"));
  OX_TRY(check_sizes(request.n_depth, "nDepth"));
  if (request.repetitions < 1 || request.repetitions > kMaxBenchRepetitions) {
    return error(ErrorCode::kInvalidArgument, strfmt("bench: reps = %d is not a repetition count in [1, %d]",
                                                     request.repetitions, kMaxBenchRepetitions));
  }
  auto run = std::make_unique<BenchRun>();
  // The order run_bench uses: per depth, every pp test, then every tg test (one thread count here).
  for (int d : request.n_depth) {
    for (int n : request.n_prompt) if (n > 0) run->tests.push_back({d, n, 0});
    for (int n : request.n_gen) if (n > 0) run->tests.push_back({d, 0, n});
  }
  if (run->tests.empty()) {
    return error(ErrorCode::kInvalidArgument, "bench: nothing to run (nPrompt and nGen hold no size above 0)");
  }
  run->options.n_threads = {session_->n_threads()};
  run->options.repetitions = request.repetitions;
  run->options.n_batch = load_options_.n_batch;
  run->options.warmup = request.warmup;
  generation_.reset();
  session_.reset();  // joins its threads: their pool workers go back to Emscripten's pool at once
  bench_ = std::move(run);
  bench_results_.clear();
  return Status::ok();
}

int Engine::bench_tests() const { return bench_ == nullptr ? 0 : static_cast<int>(bench_->tests.size()); }

Result<bool> Engine::bench_step() {
  if (bench_ == nullptr || model_ == nullptr) return error(ErrorCode::kInvalidArgument, "no benchmark is running");
  if (bench_->next < bench_->tests.size()) {
    const BenchRun::Test test = bench_->tests[bench_->next++];
    BenchOptions one = bench_->options;
    one.n_depth = {test.n_depth};
    one.n_prompt = {test.n_prompt};
    one.n_gen = {test.n_gen};
    OX_ASSIGN_OR_RETURN(std::vector<BenchResult> results, run_bench(model_, one));
    for (BenchResult& r : results) bench_results_.push_back(std::move(r));
  }
  return bench_->next == bench_->tests.size();
}

Status Engine::end_bench() {
  if (bench_ == nullptr) return Status::ok();
  bench_.reset();
  if (session_ != nullptr || model_ == nullptr) return Status::ok();
  Result<std::unique_ptr<Session>> session = open_session(model_, load_options_);
  if (!session.ok()) {
    unload();  // no session, no model: the engine reports "no model is loaded" from here on
    return session.status();
  }
  session_ = std::move(session.value());
  return Status::ok();
}

}  // namespace ox::web
