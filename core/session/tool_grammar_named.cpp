// named_args_call: the call syntaxes whose arguments are named parameters (llama.cpp's
// common/parsers/qwen3-coder.cpp, the autoparser's tagged arguments for GLM, lfm2.cpp, gemma4.cpp),
// each parameter's value raw text or its schema's JSON grammar.
#include "core/session/tool_grammar_named.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "core/sampler/json_schema.h"
#include "core/session/tool_grammar.h"

namespace ox::tool_grammar_detail {
namespace {

using chat::ChatFormat;
using json_schema_detail::gbnf_literal;
using Json = nlohmann::ordered_json;

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += p;
  return out;
}

// A byte inside a GBNF character class.
std::string class_char(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return std::string(1, c);
  return strfmt("\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(c)));
}

// The JSON types a schema admits, as bits (llama.cpp's common_chat_schema::value_types).
enum : unsigned { kString = 1, kNumber = 2, kBoolean = 4, kNull = 8, kObject = 16, kArray = 32, kAny = 63 };

unsigned type_bit(std::string_view t) {
  if (t == "string") return kString;
  if (t == "number" || t == "integer") return kNumber;
  if (t == "boolean") return kBoolean;
  if (t == "null") return kNull;
  if (t == "object") return kObject;
  if (t == "array") return kArray;
  return 0;
}

unsigned value_bit(const Json& v) {
  if (v.is_string()) return kString;
  if (v.is_number()) return kNumber;
  if (v.is_boolean()) return kBoolean;
  if (v.is_null()) return kNull;
  return v.is_object() ? kObject : kArray;
}

unsigned value_types(const Json& s, const Json& root, int depth) {
  if (depth > 32) return kAny;  // a $ref cycle: assume anything
  if (s.is_boolean()) return s.get<bool>() ? unsigned{kAny} : 0u;
  if (!s.is_object()) return kAny;
  if (const auto c = s.find("const"); c != s.end()) return value_bit(*c);
  if (const auto e = s.find("enum"); e != s.end() && e->is_array()) {
    unsigned bits = 0;
    for (const Json& v : *e) bits |= value_bit(v);
    return bits;
  }
  if (const auto t = s.find("type"); t != s.end()) {
    if (t->is_string()) return type_bit(t->get<std::string>());
    unsigned bits = 0;
    if (t->is_array()) {
      for (const Json& v : *t) bits |= v.is_string() ? type_bit(v.get<std::string>()) : 0;
    }
    return bits;
  }
  if (const auto r = s.find("$ref"); r != s.end() && r->is_string()) {
    const std::string ref = r->get<std::string>();
    for (const char* defs : {"$defs", "definitions"}) {
      const std::string head = cat({"#/", defs, "/"});
      if (ref.rfind(head, 0) == 0 && root.contains(defs) && root[defs].contains(ref.substr(head.size()))) {
        return value_types(root[defs][ref.substr(head.size())], root, depth + 1);
      }
    }
    return kAny;
  }
  for (const char* any : {"anyOf", "oneOf"}) {
    if (const auto a = s.find(any); a != s.end() && a->is_array()) {
      unsigned bits = 0;
      for (const Json& c : *a) bits |= value_types(c, root, depth + 1);
      return bits;
    }
  }
  if (const auto a = s.find("allOf"); a != s.end() && a->is_array()) {
    unsigned bits = kAny;
    for (const Json& c : *a) bits &= value_types(c, root, depth + 1);
    return bits;
  }
  if (s.contains("properties") || s.contains("additionalProperties")) return kObject;
  if (s.contains("items") || s.contains("prefixItems")) return kArray;
  return kAny;
}

// How one format writes a call and its parameters.
struct Syntax {
  ChatFormat format;
  const MarkFn& mark;

  // The text after which a raw string ends (what it may not contain).
  std::string_view raw_stop() const {
    switch (format) {
      case ChatFormat::kQwen3Coder: return "</parameter>";
      case ChatFormat::kGlm45: return "</arg_value>";
      default: return "<|\"|>";  // Gemma 4 (LFM2's strings are quoted, with escapes)
    }
  }
  // Between two parameters.
  std::string_view separator() const {
    switch (format) {
      case ChatFormat::kQwen3Coder: return "";  // each ends with "\n"
      case ChatFormat::kGlm45: return "ws";
      default: return "\",\" ws";
    }
  }
  // Bytes a name or key may not hold (they would end it early in the reply).
  bool bad_name(std::string_view s, bool key) const {
    if (s.empty()) return true;
    for (char c : s) {
      switch (format) {
        case ChatFormat::kQwen3Coder: if (c == '>' || c == '\n') return true; break;
        case ChatFormat::kGlm45: if (c == '<' || c == '\n') return true; break;
        case ChatFormat::kLfm2:
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && (key || c != '.')) return true;
          break;
        default: if (c == ':' || c == '}' || c == '{' || c == ',') return true; break;
      }
    }
    return false;
  }
  // A parameter: its key and `value` (a GBNF expression).
  std::string param(std::string_view key, std::string_view value) const {
    switch (format) {
      case ChatFormat::kQwen3Coder:
        return cat({gbnf_literal(cat({"<parameter=", key, ">\n"})), " ", value, " ", gbnf_literal("\n</parameter>\n")});
      case ChatFormat::kGlm45:
        return cat({mark("<arg_key>"), " ", gbnf_literal(key), " ", mark("</arg_key>"), " ws ", mark("<arg_value>"), " ", value, " ",
                    mark("</arg_value>")});
      case ChatFormat::kLfm2: return cat({gbnf_literal(cat({key, "="})), " ", value});
      default: return cat({gbnf_literal(cat({key, ":"})), " ws ", value});
    }
  }
  // A raw string value equal to `text` (an enum's value).
  std::string raw_literal(std::string_view text) const {
    switch (format) {
      case ChatFormat::kQwen3Coder:
      case ChatFormat::kGlm45: return gbnf_literal(text);
      case ChatFormat::kLfm2: {
        std::string q = "\"";
        for (char c : text) q += c == '\n' ? std::string("\\n") : c == '"' || c == '\\' ? cat({"\\", std::string(1, c)}) : std::string(1, c);
        return gbnf_literal(q + "\"");
      }
      default: return cat({mark("<|\"|>"), " ", gbnf_literal(text), " ", mark("<|\"|>")});
    }
  }
  // Any raw string value; `text` is the rule of text without raw_stop().
  std::string raw_any(std::string_view text) const {
    switch (format) {
      case ChatFormat::kQwen3Coder:
      case ChatFormat::kGlm45: return std::string(text);
      case ChatFormat::kLfm2: return R"("\"" ( [^"\\] | "\\" ["\\nt] )* "\"")";  // the escapes tool_parse's python_kwargs reads
      default: return cat({mark("<|\"|>"), " ", text, " ", mark("<|\"|>")});
    }
  }
  // The call around `args` (a GBNF expression, empty for none).
  std::string call(std::string_view name, std::string_view args) const {
    const std::string a = args.empty() ? std::string() : cat({" ", args});
    switch (format) {
      case ChatFormat::kQwen3Coder:
        return cat({mark("<tool_call>"), " ", gbnf_literal(cat({"\n<function=", name, ">\n"})), a, " ", gbnf_literal("</function>\n"),
                    " ", mark("</tool_call>")});
      case ChatFormat::kGlm45:
        return cat({mark("<tool_call>"), " ", gbnf_literal(name), args.empty() ? "" : " ws", a, " ws ", mark("</tool_call>")});
      case ChatFormat::kLfm2: return cat({gbnf_literal(cat({name, "("})), " ws", a, " ws \")\""});
      default:
        return cat({mark("<|tool_call>"), " ", gbnf_literal(cat({"call:", name, "{"})), " ws", a, " ws \"}\" ", mark("<tool_call|>")});
    }
  }
};

// Gemma 4's own value syntax (llama.cpp's gemma4-value rules), for objects and arrays.
std::string gemma_value_rules(const Syntax& syn, const std::string& p, std::string_view text) {
  return cat({p, "gv ::= ", syn.raw_any(text), " | ", p, "gd | ", p, "ga | ", p,
              R"(gn | "true" | "false" | "null")", "\n", p, R"(gn ::= "-"? ([0-9] | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?)",
              "\n", p, "gd ::= \"{\" ws (\"}\" | ", p, "gkv (\",\" ws ", p, "gkv)* ws \"}\")\n", p, "gkv ::= [^:}]+ \":\" ws ", p,
              "gv\n", p, "ga ::= \"[\" ws (\"]\" | ", p, "gv (\",\" ws ", p, "gv)* ws \"]\")\n"});
}

// The rule for the parameters (each a rule name in `args`, `required` flags): all required ones,
// each at most once. Returns the top rule's name.
std::string params_rule(const std::string& p, const std::vector<std::string>& args, const std::vector<bool>& required,
                        std::string_view sep, std::string* rules) {
  const size_t n = args.size();
  auto sep_then = [&](const std::string& arg) { return sep.empty() ? arg : cat({sep, " ", arg}); };
  if (n <= kMaxPermuted) {
    // Any order: a rule per set of parameters still to come (after at least one was written).
    const unsigned full = (1u << n) - 1;
    auto alternatives = [&](unsigned left, bool first) {
      bool all_optional = true;
      std::string alts;
      for (size_t i = 0; i < n; ++i) {
        if (!(left >> i & 1)) continue;
        all_optional = all_optional && !required[i];
        const unsigned rest = left & ~(1u << i);
        const std::string one = cat({first ? args[i] : sep_then(args[i]), rest ? cat({" ", p, "a", std::to_string(rest)}) : ""});
        alts += alts.empty() ? one : cat({" | ", one});
      }
      return all_optional ? cat({"| ", alts}) : alts;
    };
    for (unsigned left = 1; left < full; ++left) *rules += cat({p, "a", std::to_string(left), " ::= ", alternatives(left, false), "\n"});
    *rules += cat({p, "args ::= ", alternatives(full, true), "\n"});
    return p + "args";
  }
  // Beyond that, the schema's order: s<k> (nothing written yet) and r<k> (after a parameter).
  for (size_t k = n; k-- > 0;) {
    const std::string next = k + 1 < n ? cat({" ", p, "r", std::to_string(k + 1)}) : "";
    const std::string skip_s = k + 1 < n ? cat({p, "s", std::to_string(k + 1), " | "}) : "| ";
    const std::string skip_r = k + 1 < n ? cat({p, "r", std::to_string(k + 1), " | "}) : "| ";
    *rules += cat({p, "r", std::to_string(k), " ::= ", required[k] ? "" : skip_r, sep_then(args[k]), next, "\n"});
    *rules += cat({p, "s", std::to_string(k), " ::= ", required[k] ? "" : skip_s, args[k], next, "\n"});
  }
  return p + "s0";
}

// Top-level keywords of `parameters` the named syntax can honour or that say nothing about values.
bool known_object_keyword(std::string_view k) {
  for (std::string_view ok : {"type", "properties", "required", "additionalProperties", "description", "title", "$schema", "$id",
                              "$defs", "definitions", "$comment", "examples", "default", "strict"}) {
    if (k == ok) return true;
  }
  return false;
}

}  // namespace

bool has_named_args(ChatFormat format) {
  return format == ChatFormat::kQwen3Coder || format == ChatFormat::kGlm45 || format == ChatFormat::kLfm2 ||
         format == ChatFormat::kGemma4;
}

std::string text_without(std::string_view prefix, std::string_view stop, std::string* rules) {
  const size_t n = stop.size();
  std::vector<size_t> fail(n, 0);  // KMP: the longest proper border of stop[0..i]
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && stop[i] != stop[k]) k = fail[k - 1];
    if (stop[i] == stop[k]) ++k;
    fail[i] = k;
  }
  std::string distinct;
  for (char c : stop) {
    if (distinct.find(c) == std::string::npos) distinct += c;
  }
  for (size_t state = 0; state < n; ++state) {
    std::map<size_t, std::string> by_next;  // next state (past 0) -> the bytes leading there
    std::string excluded;                   // those bytes, and the one that would complete `stop`
    for (char c : distinct) {
      size_t k = state;
      while (k > 0 && stop[k] != c) k = fail[k - 1];
      if (stop[k] == c) ++k;
      if (k == 0) continue;
      excluded += class_char(c);
      if (k < n) by_next[k] += class_char(c);
    }
    std::string rule = cat({prefix, std::to_string(state), " ::= |"});
    for (const auto& [next, chars] : by_next) rule += cat({" [", chars, "] ", prefix, std::to_string(next), " |"});
    *rules += cat({rule, " [^", excluded, "] ", prefix, "0\n"});  // anything else starts over
  }
  return cat({prefix, "0"});
}

Result<std::string> named_args_call(ChatFormat format, std::string_view name, size_t index, const nlohmann::ordered_json& params,
                                    const MarkFn& mark, std::string* rules) {
  const Syntax syn{format, mark};
  const std::string where = strfmt("tools[%zu] (%s) parameters", index, std::string(name).c_str());
  const std::string fmt(chat::chat_format_name(format));
  if (syn.bad_name(name, false)) {
    return error(ErrorCode::kInvalidArgument, strfmt("tools[%zu]: the name '%s' cannot be written in the %s call syntax", index,
                                                     std::string(name).c_str(), fmt.c_str()));
  }
  if (!params.is_object()) return error(ErrorCode::kInvalidArgument, where + ": expected an object schema");
  for (const auto& [k, v] : params.items()) {
    if (!known_object_keyword(k)) {
      return error(ErrorCode::kUnsupported, cat({where, ": '", k, "' is not supported for the named parameters of ", fmt}));
    }
  }
  if (params.contains("type") && params["type"] != "object") {
    return error(ErrorCode::kInvalidArgument, cat({where, ": ", fmt, " passes named parameters; expected type \"object\""}));
  }
  const Json props = params.value("properties", Json::object());
  if (!props.is_object()) return error(ErrorCode::kInvalidArgument, where + ".properties: expected an object");
  const Json req = params.value("required", Json::array());
  if (!req.is_array()) return error(ErrorCode::kInvalidArgument, where + ".required: expected an array");
  for (const Json& r : req) {
    if (!r.is_string() || !props.contains(r.get<std::string>())) {
      return error(ErrorCode::kInvalidArgument,
                   cat({where, ".required: ", r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), " is not in properties"}));
    }
  }
  const std::string p = strfmt("t%zu-", index);
  const std::string text = syn.format == ChatFormat::kLfm2 ? "" : text_without(p + "raw", syn.raw_stop(), rules);
  bool gemma_values = false;
  std::vector<std::string> args;
  std::vector<bool> required;
  for (const auto& [key, schema] : props.items()) {
    if (syn.bad_name(key, true)) {
      return error(ErrorCode::kInvalidArgument,
                   cat({where, ": the parameter name '", key, "' cannot be written in the ", fmt, " call syntax"}));
    }
    const std::string arg = strfmt("%sp%zu", p.c_str(), args.size());
    const unsigned types = value_types(schema, params, 0);
    std::string value;
    const Json* values = schema.is_object() && schema.contains("const") ? &schema["const"]
                         : schema.is_object() && schema.contains("enum") ? &schema["enum"]
                                                                          : nullptr;
    if (types == kString && values != nullptr) {  // enum or const of strings: those texts
      for (const Json& v : values->is_array() ? *values : Json::array({*values})) {
        value += cat({value.empty() ? "" : " | ", syn.raw_literal(v.get<std::string>())});
      }
      value = cat({"(", value, ")"});
    } else if (types & kString) {
      value = syn.raw_any(text);
    } else if (format == ChatFormat::kGemma4 && (types & (kObject | kArray))) {
      if (!gemma_values) *rules += gemma_value_rules(syn, p, text);
      gemma_values = true;
      value = p + "gv";
    } else {
      Json s = schema;  // the value's own schema, with the definitions its $refs may name
      for (const char* defs : {"$defs", "definitions"}) {
        if (params.contains(defs) && !s.contains(defs)) s[defs] = params[defs];
      }
      Result<std::string> g = json_schema_to_gbnf(s.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      if (!g.ok()) return g.status().with_context(cat({where, ".properties.", key}));
      *rules += prefix_rules(*g, arg + "-");
      value = arg + "-root";
    }
    *rules += cat({arg, " ::= ", syn.param(key, value), "\n"});
    args.push_back(arg);
    required.push_back(std::find(req.begin(), req.end(), Json(key)) != req.end());
  }
  const std::string all = args.empty() ? "" : params_rule(p, args, required, syn.separator(), rules);
  return syn.call(name, all);
}

}  // namespace ox::tool_grammar_detail
