// tool_call_grammar: per format, the text around a call's name and arguments (the shapes
// llama.cpp's chat handlers constrain), each tool's schema converted by json_schema_to_gbnf.
#include "core/session/tool_grammar.h"

#include <cctype>

#include "core/sampler/json_schema.h"
#include "core/session/tool_grammar_named.h"

namespace ox {
namespace tool_grammar_detail {

std::string prefix_rules(std::string_view gbnf, std::string_view prefix) {
  std::string out;
  out.reserve(gbnf.size() * 2);
  size_t i = 0;
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
  while (i < gbnf.size()) {
    const char c = gbnf[i];
    if (c == '"' || c == '[') {  // literal or class: copied with its escapes
      const char close = c == '"' ? '"' : ']';
      out.push_back(c);
      ++i;
      while (i < gbnf.size() && gbnf[i] != close) {
        if (gbnf[i] == '\\' && i + 1 < gbnf.size()) out.push_back(gbnf[i++]);
        out.push_back(gbnf[i++]);
      }
      if (i < gbnf.size()) out.push_back(gbnf[i++]);
    } else if (c == '#') {
      while (i < gbnf.size() && gbnf[i] != '\n') out.push_back(gbnf[i++]);
    } else if (c == '<') {  // token reference
      while (i < gbnf.size() && gbnf[i] != '>') out.push_back(gbnf[i++]);
      if (i < gbnf.size()) out.push_back(gbnf[i++]);
    } else if (c == '{') {  // repetition counts are not names
      while (i < gbnf.size() && gbnf[i] != '}') out.push_back(gbnf[i++]);
      if (i < gbnf.size()) out.push_back(gbnf[i++]);
    } else if (is_name(c)) {
      const size_t b = i;
      while (i < gbnf.size() && is_name(gbnf[i])) ++i;
      out += prefix;
      out += gbnf.substr(b, i - b);
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace tool_grammar_detail

namespace {

using chat::ChatFormat;
using json_schema_detail::gbnf_literal;

struct Builder {
  const ToolGrammarOptions& options;
  // A marker: its control token when the vocabulary has one, else its text.
  std::string mark(std::string_view marker) const {
    if (options.control_token_id) {
      if (const std::optional<int32_t> id = options.control_token_id(marker)) return "<[" + std::to_string(*id) + "]>";
    }
    return gbnf_literal(marker);
  }
};

// Concatenation by appends (GCC 12 warns falsely, -Wrestrict, on "literal" + std::string chains).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += p;
  return out;
}

// `{"NAME_KEY": "NAME", "ARGS_KEY": ARGS}` (with an id member for Mistral).
std::string json_call(std::string_view name_key, std::string_view name, std::string_view args_key, std::string_view args_rule,
                      bool mistral_id = false) {
  std::string r = cat({"\"{\" ws ", gbnf_literal(cat({"\"", name_key, "\""})), " ws \":\" ws ",
                       gbnf_literal(cat({"\"", name, "\""})), " ws \",\" ws ", gbnf_literal(cat({"\"", args_key, "\""})),
                       " ws \":\" ws ", args_rule});
  if (mistral_id) r += " ws \",\" ws \"\\\"id\\\"\" ws \":\" ws \"\\\"\" [a-zA-Z0-9]{9} \"\\\"\"";
  return r + " ws \"}\"";
}

// One call of `format` to tool `name` whose arguments match rule `args`.
Result<std::string> call_rule(const Builder& b, ChatFormat format, std::string_view name, std::string_view args) {
  const std::string n(name);
  switch (format) {
    case ChatFormat::kHermes:
      return b.mark("<tool_call>") + " ws " + json_call("name", name, "arguments", args) + " ws " + b.mark("</tool_call>");
    case ChatFormat::kLlama3:
      return json_call("name", name, "parameters", args);
    case ChatFormat::kMistralNemo:
      return json_call("name", name, "arguments", args, /*mistral_id=*/true);
    case ChatFormat::kGranite:
    case ChatFormat::kGeneric:
      return json_call("name", name, "arguments", args);
    case ChatFormat::kCommandR:
      return json_call("tool_name", name, "parameters", args);
    case ChatFormat::kGptOss:
      return b.mark("<|channel|>") + " " + gbnf_literal("commentary to=functions." + n) + " (\" \" " + b.mark("<|constrain|>") +
             " \"json\")? " + b.mark("<|message|>") + " " + std::string(args);
    case ChatFormat::kFunctionaryV32:
      return gbnf_literal(n + "\n") + " " + std::string(args);
    case ChatFormat::kDeepSeekR1:
      return b.mark("<｜tool▁call▁begin｜>") + " \"function\" " + b.mark("<｜tool▁sep｜>") + " " +
             gbnf_literal(n + "\n```json\n") + " " + std::string(args) + " \"\\n```\" " + b.mark("<｜tool▁call▁end｜>");
    case ChatFormat::kKimiK2:
      return b.mark("<|tool_call_begin|>") + " " + gbnf_literal("functions." + n + ":") + " [0-9]+ " +
             b.mark("<|tool_call_argument_begin|>") + " " + std::string(args) + " " + b.mark("<|tool_call_end|>");
    case ChatFormat::kQwen3Coder:  // named parameters: tool_grammar_named.cpp
    case ChatFormat::kGlm45:
    case ChatFormat::kLfm2:
    case ChatFormat::kGemma4:
    case ChatFormat::kContentOnly:
      break;
  }
  return error(ErrorCode::kUnsupported,
               "no tool-call grammar for chat format " + std::string(chat::chat_format_name(format)) + " (it has no tool-call syntax)");
}

// The whole reply: the calls (`call`: the rule matching any one) in the format's framing.
std::string root_rule(const Builder& b, ChatFormat format, bool parallel) {
  const std::string more = parallel ? " (ws call)*" : "";
  const std::string list = parallel ? "\"[\" ws call (ws \",\" ws call)* ws \"]\"" : "\"[\" ws call ws \"]\"";
  switch (format) {
    case ChatFormat::kLlama3: return "call" + (parallel ? std::string(" (ws \";\"? ws call)*") : "");
    case ChatFormat::kMistralNemo: return b.mark("[TOOL_CALLS]") + " " + list;
    case ChatFormat::kGranite: return b.mark("<|tool_call|>") + " " + list;
    case ChatFormat::kGeneric: return cat({"\"{\" ws \"\\\"tool_calls\\\"\" ws \":\" ws ", list, " ws \"}\""});
    case ChatFormat::kCommandR:
      return cat({"(", b.mark("<|START_ACTION|>"), " ws ", list, " ws ", b.mark("<|END_ACTION|>"), ") | (\"Action:\" ws \"```json\" ws ",
                  list, " ws \"```\")"});
    case ChatFormat::kGptOss: return "call";  // harmony ends a reply at each call's <|call|>
    case ChatFormat::kFunctionaryV32: return "call" + (parallel ? std::string(" (ws \">>>\" call)*") : "");
    case ChatFormat::kDeepSeekR1:
      return b.mark("<｜tool▁calls▁begin｜>") + " call" + (parallel ? " (ws call)*" : "") + " " + b.mark("<｜tool▁calls▁end｜>");
    case ChatFormat::kKimiK2:
      return b.mark("<|tool_calls_section_begin|>") + " call" + (parallel ? " (ws call)*" : "") + " " +
             b.mark("<|tool_calls_section_end|>");
    case ChatFormat::kLfm2:  // one block holding a Python list of calls
      return cat({b.mark("<|tool_call_start|>"), " \"[\" ws call", parallel ? " (\",\" ws call)*" : "", " ws \"]\" ",
                  b.mark("<|tool_call_end|>")});
    case ChatFormat::kGemma4: return parallel ? "call+" : "call";  // llama.cpp writes them back to back
    default: return "call" + more;
  }
}

// The lazy grammar's triggers: the markers root_rule() starts with (a trigger the grammar could
// not continue from would never constrain anything). Functionary v3.2's first call has no marker
// (the prompt ends with ">>>"): a reply that starts with a tool's name and a newline is a call,
// and so is ">>>NAME\n" later on, the grammar starting at the name (llama.cpp's pattern triggers).
std::vector<GrammarTrigger> lazy_triggers(ChatFormat format, const std::vector<std::string>& names) {
  if (format == ChatFormat::kFunctionaryV32) {
    std::vector<GrammarTrigger> out;
    for (const std::string& n : names) {
      out.push_back({n + "\n", /*at_start=*/true});
      out.push_back({">>>" + n + "\n", /*at_start=*/false, /*grammar_offset=*/3});
    }
    return out;
  }
  switch (format) {
    case ChatFormat::kHermes:
    case ChatFormat::kQwen3Coder:
    case ChatFormat::kGlm45: return {{"<tool_call>"}};
    case ChatFormat::kLfm2: return {{"<|tool_call_start|>"}};
    case ChatFormat::kGemma4: return {{"<|tool_call>"}};
    case ChatFormat::kLlama3:
    case ChatFormat::kGeneric: return {{"{\"", /*at_start=*/true}};
    case ChatFormat::kMistralNemo: return {{"[TOOL_CALLS]"}};
    case ChatFormat::kGranite: return {{"<|tool_call|>"}};
    case ChatFormat::kCommandR: return {{"<|START_ACTION|>"}, {"Action:"}};
    case ChatFormat::kGptOss: return {{"<|channel|>commentary to=functions."}};
    case ChatFormat::kDeepSeekR1: return {{"<｜tool▁calls▁begin｜>"}};
    case ChatFormat::kKimiK2: return {{"<|tool_calls_section_begin|>"}};
    default: return {};
  }
}

}  // namespace

Result<ToolGrammar> tool_call_grammar(ChatFormat format, const nlohmann::ordered_json& tools, const chat::ToolChoice& choice,
                                      const ToolGrammarOptions& options) {
  if (choice.mode == chat::ToolChoice::Mode::kNone) {
    return error(ErrorCode::kInvalidArgument, "tool_choice \"none\": no tool call to constrain");
  }
  if (!tools.is_array() || tools.empty()) return error(ErrorCode::kInvalidArgument, "tools: expected a non-empty array");
  const Builder b{options};
  std::string rules;
  std::vector<std::string> alternatives;
  std::vector<std::string> names;
  const tool_grammar_detail::MarkFn mark = [&b](std::string_view m) { return b.mark(m); };
  for (size_t i = 0; i < tools.size(); ++i) {
    const nlohmann::ordered_json& t = tools[i];
    const nlohmann::ordered_json* fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
    if (fn == nullptr || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
      return error(ErrorCode::kInvalidArgument, strfmt("tools[%zu]: expected {\"type\": \"function\", \"function\": {\"name\": ...}}", i));
    }
    const std::string name = (*fn)["name"].get<std::string>();
    if (choice.mode == chat::ToolChoice::Mode::kNamed && name != choice.name) continue;
    nlohmann::ordered_json params = fn->contains("parameters") ? (*fn)["parameters"] : nlohmann::ordered_json::object();
    if (params.is_null() || (params.is_object() && params.empty())) params = {{"type", "object"}};
    names.push_back(name);
    if (tool_grammar_detail::has_named_args(format)) {
      OX_ASSIGN_OR_RETURN(std::string call, tool_grammar_detail::named_args_call(format, name, i, params, mark, &rules));
      alternatives.push_back(cat({"(", call, ")"}));
      continue;
    }
    Result<std::string> schema = json_schema_to_gbnf(params.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!schema.ok()) return schema.status().with_context(strfmt("tools[%zu] (%s) parameters", i, name.c_str()));
    const std::string prefix = strfmt("t%zu-", i);
    rules += tool_grammar_detail::prefix_rules(*schema, prefix);
    OX_ASSIGN_OR_RETURN(std::string call, call_rule(b, format, name, cat({prefix, "root"})));
    alternatives.push_back(cat({"(", call, ")"}));
  }
  if (alternatives.empty()) {
    return error(ErrorCode::kInvalidArgument, "tool_choice names function '" + choice.name + "', which is not in tools");
  }
  ToolGrammar out;
  out.gbnf = "root ::= " + root_rule(b, format, options.parallel_tool_calls) + "\ncall ::= ";
  for (size_t i = 0; i < alternatives.size(); ++i) out.gbnf += (i ? " | " : "") + alternatives[i];
  // (llama.cpp json-schema-to-grammar's SPACE_RULE, as the schemas' own "space")
  out.gbnf += "\nws ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n" + rules;
  out.lazy = choice.mode == chat::ToolChoice::Mode::kAuto;
  out.triggers = lazy_triggers(format, names);
  return out;
}

}  // namespace ox
