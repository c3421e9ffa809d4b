// prepare_tool_chat and ToolReply: the glue between core/chat's formats and parsers, the session's
// template rendering and the tool-call grammars.
#include "core/session/tool_chat.h"

#include "core/session/session.h"
#include "core/session/tool_grammar.h"

namespace ox {

Status check_tools(const nlohmann::ordered_json& tools) {
  if (tools.is_null()) return Status::ok();
  if (!tools.is_array()) return error(ErrorCode::kInvalidArgument, "tools: expected an array of function tools");
  for (size_t i = 0; i < tools.size(); ++i) {
    const nlohmann::ordered_json& t = tools[i];
    const std::string at = strfmt("tools[%zu]", i);
    if (!t.is_object()) return error(ErrorCode::kInvalidArgument, at + ": expected an object");
    const auto type = t.find("type");
    if (type == t.end() || *type != "function") {
      return error(ErrorCode::kInvalidArgument, at + ".type: only \"function\" tools are supported");
    }
    const auto fn = t.find("function");
    if (fn == t.end() || !fn->is_object()) return error(ErrorCode::kInvalidArgument, at + ".function: expected an object");
    const auto name = fn->find("name");
    if (name == fn->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return error(ErrorCode::kInvalidArgument, at + ".function.name: expected a non-empty string");
    }
    const auto desc = fn->find("description");
    if (desc != fn->end() && !desc->is_string() && !desc->is_null()) {
      return error(ErrorCode::kInvalidArgument, at + ".function.description: expected a string");
    }
    const auto params = fn->find("parameters");
    if (params != fn->end() && !params->is_object() && !params->is_null()) {
      return error(ErrorCode::kInvalidArgument, at + ".function.parameters: expected a JSON Schema object");
    }
  }
  return Status::ok();
}

chat::ChatFormat tool_chat_format(const LoadedModel& model) {
  const chat::ChatFormat f = chat::detect_chat_format(model.chat_template().source);
  return f == chat::ChatFormat::kContentOnly ? chat::ChatFormat::kGeneric : f;
}

namespace {

Result<std::shared_ptr<TokenConstraint>> tool_constraint(const LoadedModel& model, chat::ChatFormat format,
                                                         const ToolOptions& tools) {
  if (!tools.active() || tools.choice.mode == chat::ToolChoice::Mode::kNone) return std::shared_ptr<TokenConstraint>();
  const std::shared_ptr<const TokenTrie> trie = model.token_trie();
  ToolGrammarOptions options;
  options.parallel_tool_calls = tools.parallel_tool_calls;
  options.control_token_id = [&trie](std::string_view marker) -> std::optional<int32_t> {
    const std::optional<int32_t> id = trie->find(marker);
    return id && trie->is_control(*id) ? id : std::nullopt;
  };
  Result<ToolGrammar> g = tool_call_grammar(format, tools.tools, tools.choice, options);
  if (!g.ok()) {
    // auto in a format without a call syntax: the reply is free and parsed afterwards.
    if (g.status().code() == ErrorCode::kUnsupported && tools.choice.mode == chat::ToolChoice::Mode::kAuto) {
      return std::shared_ptr<TokenConstraint>();
    }
    const Status& st = g.status();
    return st.message().rfind("tool_choice", 0) == 0 ? st : st.with_context("tool_choice");
  }
  if (!g->lazy) return model.grammar_constraint(g->gbnf);
  return model.lazy_grammar_constraint(g->gbnf, std::move(g->triggers));
}

// What the template gets: the messages in the format's shape and the tool variables.
struct TemplateInput {
  chat::ChatFormat format;
  nlohmann::ordered_json messages;
  nlohmann::ordered_json extra;
};

Result<TemplateInput> template_input(const LoadedModel& model, const nlohmann::ordered_json& messages, const ToolOptions& tools) {
  OX_TRY(check_tools(tools.tools));
  TemplateInput in;
  in.format = tool_chat_format(model);
  OX_ASSIGN_OR_RETURN(in.messages, chat::prepare_tool_messages(in.format, messages));
  OX_ASSIGN_OR_RETURN(in.extra, chat::tool_template_context(in.format, tools.active() ? tools.tools : nlohmann::ordered_json()));
  return in;
}

}  // namespace

Result<std::string> render_tool_chat(const LoadedModel& model, const nlohmann::ordered_json& messages, const ToolOptions& tools) {
  OX_ASSIGN_OR_RETURN(TemplateInput in, template_input(model, messages, tools));
  return model.render_chat(in.messages, /*add_generation_prompt=*/true, in.extra);
}

Result<ToolChatTurn> prepare_tool_chat(const LoadedModel& model, const nlohmann::ordered_json& messages,
                                       const ToolOptions& tools) {
  OX_ASSIGN_OR_RETURN(TemplateInput in, template_input(model, messages, tools));
  ToolChatTurn turn;
  turn.format = in.format;
  if (tools.active()) {  // (only a parsed reply needs to know; a plain chat is rendered once)
    OX_ASSIGN_OR_RETURN(std::string rendered, model.render_chat(in.messages, /*add_generation_prompt=*/true, in.extra));
    turn.thinking_forced_open = chat::prompt_opens_reasoning(turn.format, rendered);
  }
  OX_ASSIGN_OR_RETURN(turn.prompt, model.chat_prompt(std::move(in.messages), /*add_generation_prompt=*/true, std::move(in.extra)));
  OX_ASSIGN_OR_RETURN(turn.constraint, tool_constraint(model, turn.format, tools));
  return turn;
}

ToolReply::ToolReply(chat::ChatFormat format, const ToolOptions& tools, bool thinking_forced_open, uint64_t id_seed)
    : format_(format), rng_(id_seed) {
  if (tools.active()) {
    tools_ = nlohmann::json::parse(tools.tools.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    options_.tools = &tools_;
  }
  options_.thinking_forced_open = thinking_forced_open;
  options_.parse_tool_calls = tools.active() && tools.choice.mode != chat::ToolChoice::Mode::kNone;
}

std::vector<nlohmann::ordered_json> ToolReply::advance(bool is_partial) {
  Result<chat::ParsedMessage> next = chat::parse_assistant_output(format_, text_, is_partial, options_);
  if (!next.ok()) return {};
  chat::assign_tool_call_ids(&next.value(), &ids_, [this] { return chat::random_tool_call_id(format_, &rng_); });
  Result<std::vector<nlohmann::ordered_json>> deltas = chat::message_deltas(message_, *next);
  // A partial parse that does not extend the last one is skipped (the next may); the final parse
  // is the reply, whatever was streamed.
  if (!deltas.ok() && is_partial) return {};
  message_ = std::move(next).value();
  return deltas.ok() ? std::move(deltas).value() : std::vector<nlohmann::ordered_json>{};
}

std::vector<nlohmann::ordered_json> ToolReply::append(std::string_view text) {
  if (text.empty()) return {};
  text_ += text;
  return advance(/*is_partial=*/true);
}

std::vector<nlohmann::ordered_json> ToolReply::finish() { return advance(/*is_partial=*/false); }

std::string ToolReply::finish_reason(std::string_view generation_reason) const {
  if (generation_reason == "stop" && !message_.tool_calls.empty()) return "tool_calls";
  return std::string(generation_reason);
}

}  // namespace ox
