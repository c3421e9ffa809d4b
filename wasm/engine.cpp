// Engine: model buffer management, load/unload and the calls the browser worker forwards.
#include "wasm/engine.h"

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
  unload();
  if (buffer_ == nullptr) return error(ErrorCode::kInvalidArgument, "no model bytes were written before loading");
  uint8_t* bytes = buffer_;
  const uint64_t size = buffer_size_;
  buffer_ = nullptr;  // from here the model (or this scope, on error) owns the bytes
  buffer_size_ = 0;
  std::shared_ptr<const void> owner(bytes, [](const void* p) { std::free(const_cast<void*>(p)); });
  OX_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model,
                      LoadedModel::from_bytes(std::span<const uint8_t>(bytes, static_cast<size_t>(size)),
                                              std::move(name), std::move(owner)));
  SessionOptions session_options;
  session_options.n_ctx = options.n_ctx;
  session_options.n_threads = options.n_threads;
  session_options.n_batch = options.n_batch;
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, session_options));
  model_ = std::move(model);
  session_ = std::move(session);
  n_batch_ = options.n_batch;
  return Status::ok();
}

void Engine::unload() {
  generation_.reset();
  session_.reset();  // before the model: the session refers to it
  model_.reset();
}

Status Engine::require_model() const {
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

Status Engine::begin_generation(std::vector<int32_t> prompt, const GenerateOptions& options) {
  OX_TRY(require_model());
  generation_.reset();
  auto generation = std::make_unique<Generation>(*session_, std::move(prompt), options, n_batch_);
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

std::span<const float> Engine::logits() const {
  if (session_ == nullptr) return {};
  return session_->logits();
}

}  // namespace ox::web
