// embind surface of the browser package: class Engine, called only from the worker thread that
// created the module (emscripten::val lives on that thread). Every fallible call returns
// {ok: true, ...} or {ok: false, code, message}; web/src/worker.ts turns the latter into EngineError.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/memory.h"
#include "core/tokenizer/stream_decoder.h"
#include "core/tools/bench.h"
#include "kernels/kernels.h"
#include "wasm/embeddings.h"
#include "wasm/engine.h"
#include "wasm/generate_options.h"
#include "wasm/js_input.h"
#include "wasm/sha256.h"

namespace ox::web {
namespace {

using emscripten::val;

val ok_object() {
  val out = val::object();
  out.set("ok", true);
  return out;
}

val error_object(const Status& status) {
  val out = val::object();
  out.set("ok", false);
  out.set("code", std::string(error_code_name(status.code())));
  out.set("message", status.message());
  return out;
}

val error_object(ErrorCode code, const std::string& message) { return error_object(Status(code, message)); }

// Reads a numeric option, or the fallback when it is absent; JS validated the types already,
// and anything else (a string, NaN) falls back instead of trapping.
double number_or(const val& options, const char* key, double fallback) {
  if (options.isUndefined() || options.isNull()) return fallback;
  val v = options[key];
  if (!v.isNumber()) return fallback;
  const double d = v.as<double>();
  return std::isfinite(d) ? d : fallback;
}

bool bool_or(const val& options, const char* key, bool fallback) {
  if (options.isUndefined() || options.isNull()) return fallback;
  val v = options[key];
  return v.isTrue() ? true : v.isFalse() ? false : fallback;
}

int int_option(const val& options, const char* key, int fallback, int lo, int hi) {
  const double d = number_or(options, key, fallback);
  if (d < lo) return lo;
  if (d > hi) return hi;
  return static_cast<int>(d);
}

// A JS array of sizes as ints; anything but an array of integers in int range is an error (so a
// fraction or NaN is reported, never truncated).
Result<std::vector<int>> int_array(const val& options, const char* key) {
  val v = options[key];
  if (!val::global("Array").call<bool>("isArray", v)) {
    return error(ErrorCode::kInvalidArgument, strfmt("bench: %s must be an array of token counts", key));
  }
  std::vector<int> out;
  const int n = v["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const val item = v[i];
    const double d = item.isNumber() ? item.as<double>() : NAN;
    if (!(d == std::floor(d)) || d < -2147483648.0 || d > 2147483647.0) {
      return error(ErrorCode::kInvalidArgument, strfmt("bench: %s[%d] is not an integer", key, i));
    }
    out.push_back(static_cast<int>(d));
  }
  return out;
}

Result<BenchRequest> bench_request(const val& options) {
  if (options.isUndefined() || options.isNull()) return error(ErrorCode::kInvalidArgument, "bench: no options");
  BenchRequest r;
  OX_ASSIGN_OR_RETURN(r.n_prompt, int_array(options, "n_prompt"));
  OX_ASSIGN_OR_RETURN(r.n_gen, int_array(options, "n_gen"));
  if (!options["n_depth"].isUndefined()) {
    OX_ASSIGN_OR_RETURN(r.n_depth, int_array(options, "n_depth"));
  }
  if (r.n_depth.empty()) return error(ErrorCode::kInvalidArgument, "bench: nDepth holds no depth");
  const double reps = number_or(options, "repetitions", NAN);
  if (!(reps == std::floor(reps)) || reps < 1 || reps > kMaxBenchRepetitions) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("bench: reps = %.17g is not a repetition count in [1, %d]", reps, kMaxBenchRepetitions));
  }
  r.repetitions = static_cast<int>(reps);
  r.warmup = bool_or(options, "warmup", true);
  return r;
}

// Text for JS as well-formed UTF-8: each maximal invalid subpart becomes U+FFFD, as TextDecoder
// does. Model output can hold any bytes (byte tokens, a sequence cut by the end of generation), and
// embind's own UTF-8 reader turns invalid ones into lone surrogates. Generation text arrives here
// already cut at complete characters (tok::StreamDecoder holds back an unfinished one).
std::string well_formed_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    if (b0 < 0x80) {
      out.push_back(static_cast<char>(b0));
      ++i;
      continue;
    }
    // Continuation bytes needed and the range of the first one (no overlongs, surrogates or
    // values past U+10FFFF: the Unicode Standard's table 3-7).
    size_t need = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    }
    size_t k = 1;  // bytes of the (possibly partial) sequence consumed
    for (; need > 0 && k <= need && i + k < s.size(); ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if (b < lo || b > hi) break;
      lo = 0x80;
      hi = 0xBF;
    }
    if (need > 0 && k == need + 1) {
      out.append(s.substr(i, k));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    i += k;
  }
  return out;
}

template <typename T>
val copy_to_js(std::span<const T> values) {
  // slice() copies out of wasm memory (a SharedArrayBuffer in the threaded build) into a fresh buffer.
  return val(emscripten::typed_memory_view(values.size(), values.data())).call<val>("slice");
}

val stats_object(const GenerateStats& s) {
  val out = val::object();
  out.set("n_prompt", s.n_prompt);
  out.set("n_prompt_cached", s.n_prompt_cached);
  out.set("n_generated", s.n_generated);
  out.set("prompt_ms", s.prompt_ms);
  out.set("generate_ms", s.generate_ms);
  out.set("finish_reason", s.finish_reason);
  out.set("n_context_shifts", s.n_context_shifts);
  out.set("n_prompt_dropped", s.n_prompt_dropped);
  return out;
}

// A token's bytes (as numbers) and its text cut before an unfinished UTF-8 character, for logprobs
// (as llama-server's `bytes` and `token`).
void set_piece(val& item, const tok::Tokenizer& tokenizer, int32_t id) {
  Result<std::string> piece = tokenizer.token_to_piece(id, /*render_special=*/false);
  const std::string bytes = piece.ok() ? *piece : std::string();
  val array = val::array();
  for (char c : bytes) array.call<void>("push", static_cast<int>(static_cast<unsigned char>(c)));
  item.set("bytes", array);
  item.set("piece", well_formed_utf8(std::string_view(bytes).substr(0, tok::complete_utf8_prefix(bytes))));
}

val events_array(const std::vector<StepEvent>& events, const tok::Tokenizer& tokenizer) {
  val out = val::array();
  for (const StepEvent& e : events) {
    val item = val::object();
    item.set("token", e.token);
    item.set("text", well_formed_utf8(e.text));
    if (e.probs.token >= 0) {  // n_probs > 0: the chosen token's probability and the top ones
      val top = val::array();
      for (const TokenProb& t : e.probs.top) {
        val entry = val::object();
        entry.set("token", t.id);
        entry.set("p", t.p);
        entry.set("logprob", t.logp);
        set_piece(entry, tokenizer, t.id);
        top.call<void>("push", entry);
      }
      item.set("p", e.probs.p);
      item.set("logprob", e.probs.logp);
      set_piece(item, tokenizer, e.token);
      item.set("top", top);
    }
    out.call<void>("push", item);
  }
  return out;
}

class JsEngine {
 public:
  // {ok, threaded, max_threads, kernels}: what this build can do.
  val runtime() const {
    val out = ok_object();
#ifdef __EMSCRIPTEN_PTHREADS__
    out.set("threaded", true);
#else
    out.set("threaded", false);
#endif
    out.set("kernels", std::string(kernels::best_kernels().isa));
    out.set("max_memory", static_cast<double>(kMaxWasmMemory));
    return out;
  }

  // size is a JS number (models can pass 2^31 bytes); {ok, ptr} or {ok: false, code: "too_large"}.
  val reserve(double size) {
    if (!(size >= 0) || size != std::floor(size) || size > 1e15) {
      return error_object(ErrorCode::kInvalidArgument, strfmt("model size %.17g is not a byte count", size));
    }
    Result<uint8_t*> buffer = engine_.reserve_model_buffer(static_cast<uint64_t>(size));
    if (!buffer.ok()) return error_object(buffer.status());
    val out = ok_object();
    out.set("ptr", static_cast<double>(reinterpret_cast<uintptr_t>(buffer.value())));
    return out;
  }

  void release() { engine_.release_model_buffer(); }

  // A Uint8Array over [offset, offset + length) of the reserved buffer, for JS to fill (and to cache
  // from, before load(): loading may convert weights in place). Valid until the next call into the
  // module (memory growth replaces the underlying buffer).
  val buffer_view(double offset, double length) {
    const double size = static_cast<double>(engine_.model_buffer_size());
    if (engine_.model_buffer() == nullptr || offset < 0 || length < 0 || offset + length > size) return val::null();
    return val(emscripten::typed_memory_view(static_cast<size_t>(length),
                                             engine_.model_buffer() + static_cast<size_t>(offset)));
  }

  // SHA-256 of the reserved buffer, as 64 hex digits (checked before parsing).
  std::string buffer_sha256() const {
    if (engine_.model_buffer() == nullptr) return "";
    return sha256_hex(std::span<const uint8_t>(engine_.model_buffer(), static_cast<size_t>(engine_.model_buffer_size())));
  }

  val load(std::string name, val options) {
    LoadOptions o;
    o.n_ctx = int_option(options, "n_ctx", 0, 0, 1 << 24);
    o.n_batch = int_option(options, "n_batch", 512, 1, 1 << 16);
    for (auto [key, type] : {std::pair{"cacheTypeK", &o.cache_type_k}, std::pair{"cacheTypeV", &o.cache_type_v}}) {
      const val v = options.isUndefined() || options.isNull() ? val::undefined() : options[key];
      if (v.isUndefined()) continue;
      if (!v.isString()) return error_object(ErrorCode::kInvalidArgument, strfmt("%s must be a string", key));
      Result<DType> parsed = parse_kv_cache_type(v.as<std::string>(), key);
      if (!parsed.ok()) return error_object(parsed.status());
      *type = parsed.value();
    }
    const val chat_template = options.isUndefined() || options.isNull() ? val::undefined() : options["chatTemplate"];
    if (!chat_template.isUndefined()) {
      if (!chat_template.isString()) return error_object(ErrorCode::kInvalidArgument, "chatTemplate must be a string");
      o.chat_template = chat_template.as<std::string>();
    }
    o.embeddings = bool_or(options, "embeddings", false);
    o.swa_full = bool_or(options, "swaFull", false);
    if (const val pooling = options.isUndefined() || options.isNull() ? val::undefined() : options["pooling"];
        !pooling.isUndefined()) {
      Result<Pooling> parsed = parse_pooling(pooling.isString() ? pooling.as<std::string>() : "", "pooling");
      if (!parsed.ok()) return error_object(parsed.status());
      if (!o.embeddings) return error_object(ErrorCode::kInvalidArgument, "pooling needs embeddings: true");
      o.pooling = parsed.value();
    }
#ifdef __EMSCRIPTEN_PTHREADS__
    o.n_threads = int_option(options, "n_threads", 1, 1, 256);
#else
    o.n_threads = 1;  // no pthreads in this build: a second thread would abort
#endif
    Status status = engine_.load_model(std::move(name), o);
    if (!status.is_ok()) return error_object(status);
    return info();
  }

  void unload() { engine_.unload(); }

  val info() {
    const bool embedding = engine_.embedding_loaded();  // no session: the embedder's numbers
    if (!engine_.loaded() && !embedding) return error_object(ErrorCode::kInvalidArgument, "no model is loaded");
    const LoadedModel& m = engine_.model();
    const HParams& hp = m.hparams();
    const tok::Tokenizer& t = m.tokenizer();
    val out = ok_object();
    out.set("name", m.file().name());
    out.set("arch", hp.arch);
    out.set("n_vocab", hp.n_vocab);
    out.set("n_ctx_train", hp.n_ctx_train);
    out.set("n_ctx", embedding ? engine_.embedder()->n_ctx() : engine_.session().n_ctx());
    out.set("n_ctx_source", std::string(context_source_name(engine_.context_choice().source)));
    out.set("n_ctx_reason", engine_.context_choice().reason);
    out.set("n_embd", hp.n_embd);
    out.set("n_layer", hp.n_layer);
    out.set("n_head", hp.n_head);
    out.set("n_head_kv", hp.n_head_kv);
    out.set("n_threads", embedding ? engine_.load_options().n_threads : engine_.session().n_threads());
    out.set("cache_type_k", kv_cache_type_name(embedding ? DType::F16 : engine_.session().cache_type_k()));
    out.set("cache_type_v", kv_cache_type_name(embedding ? DType::F16 : engine_.session().cache_type_v()));
    out.set("kv_bytes", embedding ? 0.0 : static_cast<double>(engine_.session().kv_bytes()));
    out.set("embeddings", embedding_model_info(engine_));
    out.set("size_bytes", static_cast<double>(m.file().file_bytes()));
    out.set("bos_id", t.bos_id());
    out.set("eos_id", t.eos_id());
    out.set("has_chat_template", !t.chat_template().empty());
    val chat_template = val::object();
    chat_template.set("name", m.chat_template().name);
    chat_template.set("origin", std::string(chat_template_origin_name(m.chat_template().origin)));
    out.set("chatTemplate", chat_template);
    out.set("kernels", std::string(kernels::best_kernels().isa));
    return out;
  }

  val tokenize(val text_js, bool add_special, bool parse_special) {
    Result<std::string> text = string_from_js(text_js, "tokenize: text");
    if (!text.ok()) return error_object(text.status());
    Result<std::vector<int32_t>> ids = engine_.tokenize(text.value(), add_special, parse_special);
    if (!ids.ok()) return error_object(ids.status());
    val out = ok_object();
    out.set("tokens", copy_to_js(std::span<const int32_t>(ids.value())));
    return out;
  }

  val detokenize(val tokens, bool render_special) {
    Result<std::vector<int32_t>> ids = tokens_from_js(tokens, "detokenize: tokens");
    if (!ids.ok()) return error_object(ids.status());
    Result<std::string> text = engine_.detokenize(ids.value(), render_special);
    if (!text.ok()) return error_object(text.status());
    val out = ok_object();
    out.set("text", well_formed_utf8(text.value()));
    return out;
  }

  val apply_chat_template(val messages_js, bool add_generation_prompt) {
    Result<std::string> messages_json = json_from_js(messages_js, "applyChatTemplate: messages");
    if (!messages_json.ok()) return error_object(messages_json.status());
    Result<std::string> text = engine_.apply_chat_template(messages_json.value(), add_generation_prompt);
    if (!text.ok()) return error_object(text.status());
    val out = ok_object();
    out.set("text", text.value());
    return out;
  }

  val chat_prompt(val messages_js, bool add_generation_prompt) {
    Result<std::string> messages_json = json_from_js(messages_js, "chatPrompt: messages");
    if (!messages_json.ok()) return error_object(messages_json.status());
    Result<std::vector<int32_t>> ids = engine_.chat_prompt(messages_json.value(), add_generation_prompt);
    if (!ids.ok()) return error_object(ids.status());
    val out = ok_object();
    out.set("tokens", copy_to_js(std::span<const int32_t>(ids.value())));
    return out;
  }

  // tools_json: {tools, tool_choice, parallel_tool_calls}; the next begin() constrains and parses
  // its reply for tool calls (step results then carry message_deltas, and message when done).
  val chat_prompt_tools(val messages_js, val tools_js) {
    Result<std::string> messages_json = json_from_js(messages_js, "chatPromptTools: messages");
    if (!messages_json.ok()) return error_object(messages_json.status());
    Result<std::string> tools_json = json_from_js(tools_js, "chatPromptTools: tools");
    if (!tools_json.ok()) return error_object(tools_json.status());
    Result<std::vector<int32_t>> ids = engine_.chat_prompt_with_tools(messages_json.value(), tools_json.value());
    if (!ids.ok()) return error_object(ids.status());
    val out = ok_object();
    out.set("tokens", copy_to_js(std::span<const int32_t>(ids.value())));
    return out;
  }

  // options: {max_tokens | max_completion_tokens, stop, ignore_eos, render_special, n_keep,
  // context_shift, response_format | grammar | json_schema, and every sampler field by its
  // llama-server key (temperature, top_k, frequency_penalty, logit_bias, ...)}; any other key is an
  // "unsupported" error naming it (generate_options.cpp).
  val begin(val prompt, val options) {
    if (!engine_.loaded()) return error_object(ErrorCode::kInvalidArgument, "no model is loaded");
    Result<std::vector<int32_t>> prompt_or = tokens_from_js(prompt, "begin: prompt");
    if (!prompt_or.ok()) return error_object(prompt_or.status());
    const std::vector<int32_t>& prompt_ids = prompt_or.value();
    Result<GenerateOptions> options_or = generate_options_from_js(options, engine_.model(), prompt_ids);
    if (!options_or.ok()) return error_object(options_or.status());
    const GenerateOptions& g = options_or.value();
    Status status = engine_.begin_generation(prompt_ids, g);
    if (!status.is_ok()) return error_object(status);
    val out = ok_object();
    out.set("stats", stats_object(engine_.generation()->stats()));
    return out;
  }

  // {ok, events: [{token, text}], done, stats}
  val step(int max_events, double budget_ms) {
    std::vector<StepEvent> events;
    Status status = engine_.step(max_events, budget_ms, &events);
    if (!status.is_ok()) return error_object(status);
    return step_result(events);
  }

  val abort() {
    std::vector<StepEvent> events;
    engine_.abort_generation(&events);
    if (engine_.generation() == nullptr) return error_object(ErrorCode::kInvalidArgument, "no generation is running");
    return step_result(events);
  }

  val evaluate(val tokens, int n_keep) {
    Result<std::vector<int32_t>> ids = tokens_from_js(tokens, "evaluate: tokens");
    if (!ids.ok()) return error_object(ids.status());
    Status status = engine_.evaluate(ids.value(), n_keep);
    if (!status.is_ok()) return error_object(status);
    val out = ok_object();
    out.set("n_past", engine_.session().n_past());
    return out;
  }

  // options: {n_prompt: number[], n_gen: number[], repetitions, warmup}; {ok, n_tests}. The
  // session's thread count is used; the session is gone until benchEnd().
  val bench_begin(val options) {
    Result<BenchRequest> request = bench_request(options);
    if (!request.ok()) return error_object(request.status());
    Status status = engine_.begin_bench(request.value());
    if (!status.is_ok()) return error_object(status);
    val out = ok_object();
    out.set("n_tests", engine_.bench_tests());
    return out;
  }

  // Runs one test: {ok, done, n_done, records}, records being `oxidize bench -o json` of that test.
  val bench_step() {
    const size_t before = engine_.bench_results().size();
    Result<bool> done = engine_.bench_step();
    if (!done.ok()) return error_object(done.status());
    const std::vector<BenchResult>& all = engine_.bench_results();
    val out = ok_object();
    out.set("done", done.value());
    out.set("n_done", static_cast<int>(all.size()));
    out.set("records", bench_json(std::vector<BenchResult>(all.begin() + static_cast<std::ptrdiff_t>(before), all.end())));
    return out;
  }

  // Ends the benchmark (re-creates the session): {ok, markdown, records} over every test that ran.
  val bench_end() {
    Status status = engine_.end_bench();
    if (!status.is_ok()) return error_object(status);
    val out = ok_object();
    out.set("markdown", bench_markdown(engine_.bench_results()));
    out.set("records", bench_json(engine_.bench_results()));
    out.set("n_threads", engine_.loaded() ? engine_.session().n_threads() : 0);
    return out;
  }

  // {ok, bytes: Uint8Array (a copy)}: the session's state (core/session/state_file.h).
  val save_state() {
    Result<std::vector<uint8_t>> bytes = engine_.save_state();
    if (!bytes.ok()) return error_object(bytes.status());
    val out = ok_object();
    out.set("bytes", copy_to_js(std::span<const uint8_t>(bytes.value())));
    return out;
  }

  // bytes: a Uint8Array from saveState(); {ok, n_past} or the error naming what is wrong with it.
  val load_state(val bytes) {
    if (!bytes.instanceof(val::global("Uint8Array"))) {
      return error_object(ErrorCode::kInvalidArgument, "loadState takes the Uint8Array saveState() made");
    }
    const double n = bytes["length"].as<double>();
    Status room = check_memory(static_cast<uint64_t>(n), "the state to load", "");
    if (!room.is_ok()) return error_object(room);
    std::vector<uint8_t> copy(static_cast<size_t>(n));
    // One copy into wasm memory: a view over the vector, filled by TypedArray.set (no allocation
    // in between, so the view's buffer stays the memory's).
    val(emscripten::typed_memory_view(copy.size(), copy.data())).call<void>("set", bytes);
    Status status = engine_.load_state(copy);
    if (!status.is_ok()) return error_object(status);
    val out = ok_object();
    out.set("n_past", engine_.session().n_past());
    return out;
  }

  // engine.embeddings.create / engine.rerank (wasm/embeddings.h): {ok, ...OpenAI's response}.
  val embeddings(val options) {
    val out = ok_object();
    const Status status = create_embeddings(engine_, options, &out);
    return status.is_ok() ? with_ok(out) : error_object(status);
  }
  val rerank(val options) {
    val out = ok_object();
    const Status status = rerank_documents(engine_, options, &out);
    return status.is_ok() ? with_ok(out) : error_object(status);
  }

  // Float32Array [n_vocab] (a copy), or null before anything was evaluated.
  val logits() {
    std::span<const float> l = engine_.logits();
    if (l.empty()) return val::null();
    return copy_to_js(l);
  }

 private:
  val step_result(const std::vector<StepEvent>& events) {
    const Generation* g = engine_.generation();
    val out = ok_object();
    out.set("events", events_array(events, engine_.model().tokenizer()));
    out.set("done", g->done());
    out.set("stats", stats_object(g->stats()));
    if (ToolReply* reply = engine_.tool_reply(); reply != nullptr) {
      // OpenAI delta objects ({content} / {reasoning_content} / {tool_calls: [...]}) of this step,
      // and when done the whole parsed message and the finish reason ("tool_calls" for calls).
      nlohmann::ordered_json deltas = nlohmann::ordered_json::array();
      for (const StepEvent& e : events) {
        for (nlohmann::ordered_json& d : reply->append(e.text)) deltas.push_back(std::move(d));
      }
      if (g->done()) {
        for (nlohmann::ordered_json& d : reply->finish()) deltas.push_back(std::move(d));
        out.set("message", json_value(reply->message().to_json()));
        out.set("tool_finish_reason", reply->finish_reason(g->stats().finish_reason));
      }
      out.set("message_deltas", json_value(deltas));
    }
    return out;
  }

  static val json_value(const nlohmann::ordered_json& j) {
    return val::global("JSON").call<val>("parse", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  static val with_ok(val v) {
    v.set("ok", true);
    return v;
  }

  Engine engine_;
};

}  // namespace
}  // namespace ox::web

EMSCRIPTEN_BINDINGS(oxidize_web) {
  emscripten::class_<ox::web::JsEngine>("Engine")
      .constructor<>()
      .function("runtime", &ox::web::JsEngine::runtime)
      .function("reserve", &ox::web::JsEngine::reserve)
      .function("release", &ox::web::JsEngine::release)
      .function("bufferView", &ox::web::JsEngine::buffer_view)
      .function("bufferSha256", &ox::web::JsEngine::buffer_sha256)
      .function("load", &ox::web::JsEngine::load)
      .function("unload", &ox::web::JsEngine::unload)
      .function("info", &ox::web::JsEngine::info)
      .function("tokenize", &ox::web::JsEngine::tokenize)
      .function("detokenize", &ox::web::JsEngine::detokenize)
      .function("applyChatTemplate", &ox::web::JsEngine::apply_chat_template)
      .function("chatPrompt", &ox::web::JsEngine::chat_prompt)
      .function("chatPromptTools", &ox::web::JsEngine::chat_prompt_tools)
      .function("begin", &ox::web::JsEngine::begin)
      .function("step", &ox::web::JsEngine::step)
      .function("abort", &ox::web::JsEngine::abort)
      .function("evaluate", &ox::web::JsEngine::evaluate)
      .function("logits", &ox::web::JsEngine::logits)
      .function("saveState", &ox::web::JsEngine::save_state)
      .function("loadState", &ox::web::JsEngine::load_state)
      .function("benchBegin", &ox::web::JsEngine::bench_begin)
      .function("benchStep", &ox::web::JsEngine::bench_step)
      .function("benchEnd", &ox::web::JsEngine::bench_end)
      .function("embeddings", &ox::web::JsEngine::embeddings)
      .function("rerank", &ox::web::JsEngine::rerank);
}
