// `oxidize run` (streamed generation) and `oxidize logits` (top-K next-token logits), plus the
// option readers run, chat and logits share.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "core/base/cpu_info.h"
#include "core/chat/builtin_templates.h"
#include "core/kv_cache/kv_cache.h"
#include "core/sampler/registry.h"
#include "kernels/kernels.h"
#include "native/commands.h"
#include "native/prompt_cache.h"

namespace ox::cli {

Status cache_types(Args& args, DType* type_k, DType* type_v) {
  OX_ASSIGN_OR_RETURN(std::string k, args.string({"-ctk", "--cache-type-k"}, "f16"));
  OX_ASSIGN_OR_RETURN(std::string v, args.string({"-ctv", "--cache-type-v"}, "f16"));
  OX_ASSIGN_OR_RETURN(*type_k, parse_kv_cache_type(k, "-ctk"));
  OX_ASSIGN_OR_RETURN(*type_v, parse_kv_cache_type(v, "-ctv"));
  return Status::ok();
}

Result<std::string> chat_template_arg(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string value, args.string({"--chat-template"}, ""));
  if (value.empty() || chat::find_builtin_template(value) != nullptr) return value;
  std::error_code ec;
  if (!std::filesystem::exists(value, ec)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("--chat-template %s: not a built-in template nor a file; the built-in names: %s", value.c_str(),
                        chat::builtin_template_list().c_str()));
  }
  return read_text_file(value);
}

Result<LoadedSession> open_session(Args& args, const OpenSessionOptions& open) {
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  if (path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::string isa, args.string({"--isa"}, ""));
  if (!isa.empty()) OX_TRY(kernels::set_isa_override(isa));
  SessionOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, open.default_n_ctx, 0, 1 << 24));
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, default_thread_count(), 1, 256));
  OX_ASSIGN_OR_RETURN(int64_t n_batch, args.integer({"-b", "--batch-size"}, 512, 1, 1 << 16));
  OX_ASSIGN_OR_RETURN(int64_t n_gpu_layers, args.integer({"-ngl", "--n-gpu-layers"}, 0, -1, 1 << 20));
  (void)n_gpu_layers;  // accepted for llama.cpp scripts (a warning was printed)
  options.n_ctx = static_cast<int>(n_ctx);
  options.n_threads = static_cast<int>(n_threads);
  options.n_batch = static_cast<int>(n_batch);
  OX_TRY(cache_types(args, &options.cache_type_k, &options.cache_type_v));
  options.swa_full = args.flag({"--swa-full"});
  std::string chat_template;
  if (open.chat_template) {
    OX_ASSIGN_OR_RETURN(chat_template, chat_template_arg(args));
  }
  LoadedSession out;
  OX_ASSIGN_OR_RETURN(out.model, LoadedModel::open(path));
  if (!chat_template.empty()) {
    OX_ASSIGN_OR_RETURN(out.model, out.model->with_chat_template(chat_template));
  }
  const int n_ctx_train = out.model->hparams().n_ctx_train;
  if (open.ctx_within_training && options.n_ctx > n_ctx_train) {
    return error(ErrorCode::kInvalidArgument, strfmt("-c %d is larger than the model's training context (%d tokens)",
                                                     options.n_ctx, n_ctx_train));
  }
  OX_ASSIGN_OR_RETURN(out.session, Session::create(out.model, options));
  return out;
}

Result<std::string> prompt_text(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string prompt, args.string({"-p", "--prompt"}, ""));
  OX_ASSIGN_OR_RETURN(std::string file, args.string({"-f", "--file"}, ""));
  const bool from_stdin = args.flag({"--stdin"});
  const bool escape = !args.flag({"--no-escape"});
  if (args.has({"-f", "--file"})) {
    if (args.has({"-p", "--prompt"})) return error(ErrorCode::kInvalidArgument, "give either -p or -f, not both");
    return read_text_file(file);
  }
  if (from_stdin) return read_stdin();
  return escape ? process_escapes(prompt) : prompt;
}

namespace {

// At most one of --grammar TEXT, --grammar-file F, -j/--json-schema TEXT, -jf/--json-schema-file F
// (llama.cpp's spellings): the constraint the sampler chain ends with, or null.
Result<std::shared_ptr<TokenConstraint>> constraint_from_args(Args& args, const LoadedModel& model) {
  OX_ASSIGN_OR_RETURN(std::string grammar, args.string({"--grammar"}, ""));
  OX_ASSIGN_OR_RETURN(std::string grammar_file, args.string({"--grammar-file"}, ""));
  OX_ASSIGN_OR_RETURN(std::string schema, args.string({"-j", "--json-schema"}, ""));
  OX_ASSIGN_OR_RETURN(std::string schema_file, args.string({"-jf", "--json-schema-file"}, ""));
  const int given = args.has({"--grammar"}) + args.has({"--grammar-file"}) + args.has({"-j", "--json-schema"}) +
                    args.has({"-jf", "--json-schema-file"});
  if (given > 1) {
    return error(ErrorCode::kInvalidArgument,
                 "give one of --grammar, --grammar-file, --json-schema and --json-schema-file");
  }
  if (args.has({"--grammar-file"})) {
    OX_ASSIGN_OR_RETURN(grammar, read_text_file(grammar_file));
  }
  if (args.has({"-jf", "--json-schema-file"})) {
    OX_ASSIGN_OR_RETURN(schema, read_text_file(schema_file));
  }
  if (args.has({"--grammar"}) || args.has({"--grammar-file"})) {
    Result<std::shared_ptr<TokenConstraint>> c = model.grammar_constraint(grammar);
    if (!c.ok()) return c.status().with_context(args.has({"--grammar"}) ? "--grammar" : grammar_file);
    return c;
  }
  if (args.has({"-j", "--json-schema"}) || args.has({"-jf", "--json-schema-file"})) {
    Result<std::shared_ptr<TokenConstraint>> c = model.json_schema_constraint(schema.empty() ? "{}" : schema);
    if (!c.ok()) return c.status().with_context(args.has({"-j", "--json-schema"}) ? "--json-schema" : schema_file);
    return c;
  }
  return std::shared_ptr<TokenConstraint>();
}

}  // namespace

Status use_tool_constraint(ToolChatTurn& turn, GenerateOptions* gen) {
  if (turn.constraint != nullptr && gen->constraint != nullptr) {
    return error(ErrorCode::kInvalidArgument,
                 "--tools-file (unless --tool-choice none) and --grammar / --json-schema cannot be combined");
  }
  if (turn.constraint != nullptr) gen->constraint = std::move(turn.constraint);
  gen->render_special = true;  // tool-call markers may be control tokens ([TOOL_CALLS], <|python_tag|>)
  return Status::ok();
}

Result<GenerateOptions> generate_options(Args& args, const LoadedModel& model, int64_t default_n_predict) {
  GenerateOptions gen;
  OX_ASSIGN_OR_RETURN(gen.constraint, constraint_from_args(args, model));
  OX_ASSIGN_OR_RETURN(int64_t n_predict, args.integer({"-n", "--n-predict"}, default_n_predict, -1, 1 << 24));
  OX_ASSIGN_OR_RETURN(gen.stop, args.strings({"--stop"}));
  OX_ASSIGN_OR_RETURN(std::vector<std::string> reverse, args.strings({"-r", "--reverse-prompt"}));
  gen.stop.insert(gen.stop.end(), reverse.begin(), reverse.end());
  gen.ignore_eos = args.flag({"--ignore-eos"});
  OX_ASSIGN_OR_RETURN(int64_t keep, args.integer({"--keep"}, 0, -1, 1 << 24));
  gen.n_keep = static_cast<int>(keep);  // resolved against the prompt by resolve_n_keep()
  const bool no_shift = args.flag({"--no-context-shift"});
  const bool shift = args.flag({"--context-shift"});
  gen.context_shift = shift || !no_shift;
  gen.max_tokens = static_cast<int>(n_predict);
  // Every sampler flag from the registry (core/sampler/registry.h), then its one validation.
  for (const ParamDef& d : sampler_params()) {
    if (d.names[0].empty() || !args.accepts(d.names[0])) continue;
    OX_ASSIGN_OR_RETURN(std::vector<std::string> values, args.strings({d.names[0]}));
    OX_TRY(set_param(gen.sampling, d, values));
  }
  OX_TRY(validate(gen.sampling));
  return gen;
}

Result<ToolOptions> tool_options(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string file, args.string({"--tools-file"}, ""));
  OX_ASSIGN_OR_RETURN(std::string choice, args.string({"--tool-choice"}, "auto"));
  const bool single = args.flag({"--no-parallel-tool-calls"});
  ToolOptions out;
  if (!args.has({"--tools-file"})) {
    if (args.has({"--tool-choice"}) || single) {  // never silently ignored
      return error(ErrorCode::kInvalidArgument, "--tool-choice and --no-parallel-tool-calls need --tools-file");
    }
    return out;
  }
  OX_ASSIGN_OR_RETURN(std::string text, read_text_file(file));
  out.tools = nlohmann::ordered_json::parse(text, nullptr, false);
  if (out.tools.is_discarded()) return error(ErrorCode::kInvalidFile, "--tools-file " + file + ": not valid JSON");
  if (!out.tools.is_array() || out.tools.empty()) {
    return error(ErrorCode::kInvalidFile, "--tools-file " + file + ": expected a non-empty JSON array of function tools");
  }
  OX_TRY(check_tools(out.tools).with_context("--tools-file " + file));
  const nlohmann::json choice_json =
      choice == "auto" || choice == "none" || choice == "required"
          ? nlohmann::json(choice)
          : nlohmann::json{{"type", "function"}, {"function", {{"name", choice}}}};
  Result<chat::ToolChoice> c = chat::parse_tool_choice(choice_json);
  if (!c.ok()) return c.status().with_context("--tool-choice");
  out.choice = std::move(c).value();
  out.parallel_tool_calls = !single;
  return out;
}

namespace {

// Prompt tokens for run/logits: BOS (as the vocabulary wants) + the prompt with special tokens
// parsed, as llama.cpp's -p; with --chat the prompt is a user message, rendered by the model's chat
// template with its text kept as text (no control tokens from what the user typed). With tools
// (`tools` active; only with --chat), *turn gets the reply's format and tool-call constraint.
Result<std::vector<int32_t>> prompt_tokens(Args& args, const LoadedSession& ls, std::string* text_out,
                                           const ToolOptions& tools = {}, ToolChatTurn* turn = nullptr) {
  const bool chat = args.flag({"--chat", "-cnv"}) && !args.flag({"-no-cnv", "--no-conversation"});
  OX_ASSIGN_OR_RETURN(std::string system, args.string({"--system", "-sys"}, ""));
  OX_ASSIGN_OR_RETURN(std::string text, prompt_text(args));
  if (text_out != nullptr) *text_out = text;
  if (!chat && args.has({"--chat-template"})) {  // never silently ignored
    return error(ErrorCode::kInvalidArgument, "--chat-template renders --chat prompts only; give --chat too");
  }
  if (!chat && tools.active()) return error(ErrorCode::kInvalidArgument, "--tools-file needs --chat (tools go through the chat template)");
  if (!chat) return ls.session->tokenize(text, /*add_special=*/true, /*parse_special=*/true);
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  messages.push_back({{"role", "user"}, {"content", text}});
  if (!tools.active()) return ls.model->chat_prompt(std::move(messages), /*add_generation_prompt=*/true);
  OX_ASSIGN_OR_RETURN(*turn, prepare_tool_chat(*ls.model, messages, tools));
  return std::move(turn->prompt);
}

// --n-probs N: one line per generated token on stderr (llama-completion prints none):
// `probs: ID P | ID:P ID:P ...`, the chosen token and its probability, then the top N, from the
// softmax of the raw logits (llama-server's n_probs).
void print_probs(const TokenProbs& probs) {
  std::string line = strfmt("probs: %d %.6f |", probs.token, probs.p);
  for (const TokenProb& t : probs.top) line += strfmt(" %d:%.6f", t.id, t.p);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

Status cmd_run(Args& args) {
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args, {.chat_template = true}));
  OX_ASSIGN_OR_RETURN(GenerateOptions gen, generate_options(args, *ls.model, -1));
  OX_ASSIGN_OR_RETURN(ToolOptions tools, tool_options(args));
  const bool print_ids = args.flag({"--ids"});
  const bool display_prompt = args.flag({"--display-prompt"}) && !args.flag({"--no-display-prompt"});
  OX_ASSIGN_OR_RETURN(PromptCache cache, PromptCache::from_args(args));
  std::string text;
  ToolChatTurn turn;
  OX_ASSIGN_OR_RETURN(std::vector<int32_t> prompt, prompt_tokens(args, ls, &text, tools, &turn));
  OX_TRY(args.finish());
  if (tools.active()) {
    if (print_ids) return error(ErrorCode::kInvalidArgument, "--ids and --tools-file: give one (tools print a JSON message)");
    OX_TRY(use_tool_constraint(turn, &gen));
  }
  gen.n_keep = resolve_n_keep(gen.n_keep, prompt, ls.model->tokenizer().bos_id());
  OX_TRY(cache.load(*ls.session, prompt));
  if (display_prompt && !print_ids) std::fwrite(text.data(), 1, text.size(), stdout);

  bool first = true;
  Status cache_status;
  auto on_event = [&](const GenerateEvent& e) {
    if (cache_status.is_ok()) cache_status = cache.after_token(*ls.session);
    if (!cache_status.is_ok()) return false;  // a failed save ends the run with its error
    if (e.probs != nullptr) print_probs(*e.probs);
    if (print_ids) {
      if (e.token >= 0) std::printf(first ? "%d" : " %d", e.token);
      first = false;
    } else if (!tools.active()) {  // (tools: the whole reply, parsed, at the end)
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    }
    std::fflush(stdout);
    return true;
  };
  OX_ASSIGN_OR_RETURN(GenerateStats stats, ls.session->generate(prompt, gen, on_event));
  if (tools.active()) {
    ToolReply reply(turn.format, tools, turn.thinking_forced_open, std::random_device{}());
    reply.append(stats.text);
    reply.finish();
    std::fputs(reply.message().to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str(), stdout);
    stats.finish_reason = reply.finish_reason(stats.finish_reason);
  }
  std::printf("\n");
  std::fflush(stdout);
  OX_TRY(cache_status);
  OX_TRY(cache.finish(*ls.session, stats));
  std::fprintf(stderr, "prompt: %d tokens in %.1f ms (%.1f t/s) | generation: %d tokens in %.1f ms (%.1f t/s) | "
               "threads %d, kernels %s, finish: %s\n",
               stats.n_prompt, stats.prompt_ms, stats.prompt_ms > 0 ? stats.n_prompt * 1000.0 / stats.prompt_ms : 0.0,
               stats.n_generated, stats.generate_ms,
               stats.generate_ms > 0 ? stats.n_generated * 1000.0 / stats.generate_ms : 0.0, ls.session->n_threads(),
               kernels::best_kernels().isa, stats.finish_reason.c_str());
  if (stats.n_prompt_dropped > 0) {
    std::fprintf(stderr, "context: the prompt was longer than the context (%d); %d tokens after the first %d were "
                 "left out\n", ls.session->n_ctx(), stats.n_prompt_dropped, gen.n_keep);
  }
  if (stats.n_context_shifts > 0) {
    std::fprintf(stderr, "context: shifted %d times (kept the first %d tokens, dropped half of the rest each time)\n",
                 stats.n_context_shifts, gen.n_keep);
  }
  return Status::ok();
}

Status cmd_logits(Args& args) {
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args));
  OX_ASSIGN_OR_RETURN(int64_t top, args.integer({"--top"}, 5, 1, 1 << 24));
  OX_ASSIGN_OR_RETURN(std::string text, prompt_text(args));
  OX_TRY(args.finish());
  OX_ASSIGN_OR_RETURN(std::vector<int32_t> prompt, ls.session->tokenize(text, true, true));
  if (prompt.empty()) return error(ErrorCode::kInvalidArgument, "the prompt is empty and the vocabulary adds no BOS");
  OX_TRY(ls.session->eval(prompt));
  std::span<const float> logits = ls.session->logits();
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min(order.size(), static_cast<size_t>(top));
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  for (size_t i = 0; i < k; ++i) std::printf("%d %.6f\n", order[i], logits[order[i]]);
  return Status::ok();
}

}  // namespace ox::cli
