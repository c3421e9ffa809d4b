// JSON Schema -> GBNF: one visit per schema node, rules named after their path as llama.cpp's
// converter names them, primitives (string, number, ...) shared. Every keyword is either used,
// an annotation, or reported: the error lists all the keywords the converter could not honour.
#include "core/sampler/json_schema.h"

#include <charconv>
#include <functional>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace ox {

std::string json_schema_detail::gbnf_literal(std::string_view text) {  // a GBNF string literal matching text exactly
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\r': out += "\\r"; break;
      case '\n': out += "\\n"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

namespace {

using Json = nlohmann::ordered_json;
using json_schema_detail::integer_range;

constexpr const char* kSpaceRule = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";
constexpr int kNoMax = std::numeric_limits<int>::max();
constexpr int64_t kMaxBound = 1'000'000'000'000'000;  // |bounds| kept where negation cannot overflow

struct Builtin {
  const char* body;
  std::vector<const char*> deps;
};

const std::map<std::string, Builtin>& primitives() {
  static const std::map<std::string, Builtin> rules = {
      {"boolean", {"(\"true\" | \"false\")", {}}},
      {"decimal-part", {"[0-9]{1,16}", {}}},
      {"integral-part", {"[0] | [1-9] [0-9]{0,15}", {}}},
      // llama.cpp allows a 16-digit exponent; two digits keep every number finite (1e999 parses as
      // Infinity in JavaScript and is refused by most JSON libraries).
      {"number", {"(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? [0-9]{1,2})?", {"integral-part", "decimal-part"}}},
      {"integer", {"(\"-\"? integral-part)", {"integral-part"}}},
      {"value", {"object | array | string | number | boolean | null", {"object", "array", "string", "number", "boolean", "null"}}},
      {"object", {"\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? space \"}\"", {"string", "value"}}},
      {"array", {"\"[\" space ( value (\",\" space value)* )? space \"]\"", {"value"}}},
      {"uuid", {"\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\"", {}}},
      {"char", {"[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})", {}}},
      {"string", {"\"\\\"\" char* \"\\\"\"", {"char"}}},
      {"null", {"\"null\"", {}}},
      {"date", {"[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )", {}}},
      {"time", {"([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( \"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )", {}}},
      {"date-time", {"date \"T\" time", {"date", "time"}}},
      {"date-string", {"\"\\\"\" date \"\\\"\"", {"date"}}},
      {"time-string", {"\"\\\"\" time \"\\\"\"", {"time"}}},
      {"date-time-string", {"\"\\\"\" date-time \"\\\"\"", {"date-time"}}},
  };
  return rules;
}

bool is_reserved_name(const std::string& name) { return name == "root" || primitives().count(name) > 0; }

const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k = {
      "type", "properties", "required", "additionalProperties", "enum", "const", "items", "prefixItems",
      "minItems", "maxItems", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "minLength", "maxLength",
      "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
      // annotations: they do not constrain the value
      "title", "description", "$schema", "$id", "$comment", "examples", "default", "deprecated", "readOnly",
      "writeOnly", "$anchor"};
  return k;
}

std::string format_literal(const std::string& s) { return json_schema_detail::gbnf_literal(s); }

std::string sanitize(const std::string& name) {  // llama.cpp: [^a-zA-Z0-9-]+ -> "-"
  std::string out;
  bool in_run = false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (ok) out += c;
    if (!ok && !in_run) out += '-';
    in_run = !ok;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// item{min,max} with an optional separator between items (llama.cpp's build_repetition).
std::string build_repetition(const std::string& item, int min_items, int max_items, const std::string& sep = "") {
  const bool has_max = max_items != kNoMax;
  if (max_items == 0) return "";
  if (min_items == 0 && max_items == 1) return item + "?";
  if (sep.empty()) {
    if (min_items == 1 && !has_max) return item + "+";
    if (min_items == 0 && !has_max) return item + "*";
    return item + "{" + std::to_string(min_items) + "," + (has_max ? std::to_string(max_items) : "") + "}";
  }
  std::string result = item + " " + build_repetition("(" + sep + " " + item + ")", min_items == 0 ? 0 : min_items - 1,
                                                     has_max ? max_items - 1 : max_items);
  return min_items == 0 ? "(" + result + ")?" : result;
}

// A JSON string that is none of `names` (keys of additional properties), via a trie of the names'
// code points (llama.cpp's _not_strings). The first char of a differing key also excludes what
// JSON cannot hold raw (llama.cpp lets a tab or newline through there).
struct NameTrie {
  std::map<std::string, NameTrie> children;  // one UTF-8 code point per edge
  bool is_end = false;
};

std::string class_char(const std::string& cp) {
  if (cp == "\"" || cp == "\\" || cp == "]" || cp == "-" || cp == "[") return "\\" + cp;
  return cp;
}

void not_strings_visit(const NameTrie& node, const std::string& char_rule, std::string& out) {
  std::string rejects;
  bool first = true;
  for (const auto& [cp, child] : node.children) {
    rejects += class_char(cp);
    out += first ? "" : " | ";
    first = false;
    out += "[" + class_char(cp) + "]";
    if (!child.children.empty()) {
      out += " (";
      not_strings_visit(child, char_rule, out);
      out += ")";
    } else {
      out += " " + char_rule + "+";
    }
  }
  if (!node.children.empty()) out += " | [^\"\\\\\\x7F\\x00-\\x1F" + rejects + "] " + char_rule + "*";
}

class Converter {
 public:
  explicit Converter(const Json& root) : root_(root) { rules_["space"] = kSpaceRule; }

  std::string visit(const Json& schema, const std::string& name, const std::string& path);

  Result<std::string> finish() {
    if (!errors_.empty()) return error(ErrorCode::kUnsupported, "json schema: " + join(errors_, "; "));
    std::string out;
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  std::string add_rule(const std::string& name, const std::string& body);
  std::string add_primitive(const std::string& name, const std::string& builtin);
  void check_keywords(const Json& schema, const std::string& path);
  std::string resolve_ref(const Json& ref, const std::string& path);
  const Json* lookup_ref(const std::string& ref, const std::string& path);
  std::string visit_object(const Json& schema, const std::string& name, const std::string& path);
  std::string visit_all_of(const Json& schema, const std::string& name, const std::string& path);
  std::string visit_array(const Json& schema, const std::string& name, const std::string& path);
  std::string visit_string(const Json& schema, const std::string& name, const std::string& path);
  std::string visit_integer(const Json& schema, const std::string& path);
  std::string visit_number(const Json& schema, const std::string& path);
  std::string build_object(const std::vector<std::pair<std::string, const Json*>>& props, const std::set<std::string>& required,
                           const std::string& name, const Json* additional, const std::string& path);
  std::string not_strings(const std::vector<std::string>& names);
  int get_count(const Json& schema, const char* key, int fallback, const std::string& path);
  bool get_bound(const Json& schema, const char* key, bool round_up, int64_t* out, const std::string& path);

  void fail(const std::string& path, const std::string& what) { errors_.push_back(path + ": " + what); }

  const Json& root_;
  std::map<std::string, std::string> rules_;
  std::set<std::string> refs_in_progress_;
  std::vector<std::string> errors_;
  int depth_ = 0;
};

std::string Converter::add_rule(const std::string& name, const std::string& body) {
  const std::string esc = sanitize(name);
  auto it = rules_.find(esc);
  if (it == rules_.end() || it->second == body) {
    rules_[esc] = body;
    return esc;
  }
  for (int i = 0;; ++i) {  // another rule already has this name: the first free or identical esc<i>
    const std::string key = esc + std::to_string(i);
    auto k = rules_.find(key);
    if (k == rules_.end() || k->second == body) {
      rules_[key] = body;
      return key;
    }
  }
}

std::string Converter::add_primitive(const std::string& name, const std::string& builtin) {
  const Builtin& b = primitives().at(builtin);
  const std::string n = add_rule(name, b.body);
  for (const char* dep : b.deps) {
    if (rules_.count(dep) == 0) add_primitive(dep, dep);
  }
  return n;
}

void Converter::check_keywords(const Json& schema, const std::string& path) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : schema.items()) {
    if (known_keywords().count(key) == 0) unknown.push_back("'" + key + "'");
  }
  if (!unknown.empty()) fail(path, "unsupported keyword" + std::string(unknown.size() > 1 ? "s " : " ") + join(unknown, ", "));
}

int Converter::get_count(const Json& schema, const char* key, int fallback, const std::string& path) {
  if (!schema.contains(key)) return fallback;
  const Json& v = schema.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 2000) {
    fail(path, std::string(key) + " must be an integer in [0, 2000] (GBNF's repetition limit)");
    return fallback;
  }
  return static_cast<int>(v.get<int64_t>());
}

// A numeric bound as an integer; fractional values round inwards (round_up for lower bounds).
bool Converter::get_bound(const Json& schema, const char* key, bool round_up, int64_t* out, const std::string& path) {
  const Json& v = schema.at(key);
  double d;
  if (v.is_number_integer()) {
    d = static_cast<double>(v.get<int64_t>());
  } else if (v.is_number()) {
    d = round_up ? std::ceil(v.get<double>()) : std::floor(v.get<double>());
  } else {
    fail(path, std::string(key) + " must be a number");
    return false;
  }
  if (!(std::fabs(d) <= static_cast<double>(kMaxBound))) {
    fail(path, std::string(key) + " beyond +-1e15 is not supported");
    return false;
  }
  *out = v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(d);
  return true;
}

// A JSON pointer into this document ("#/$defs/node"); nullptr (and an error) if it leads nowhere.
const Json* Converter::lookup_ref(const std::string& ref, const std::string& path) {
  if (ref.rfind("#/", 0) != 0 && ref != "#") {
    return fail(path, "unsupported $ref '" + ref + "' (only references into the same document)"), nullptr;
  }
  const Json* target = &root_;
  for (size_t start = 2; ref.size() > 1 && start <= ref.size();) {
    size_t end = ref.find('/', start);
    if (end == std::string::npos) end = ref.size();
    std::string sel = ref.substr(start, end - start);
    for (size_t p; (p = sel.find("~1")) != std::string::npos;) sel.replace(p, 2, "/");
    for (size_t p; (p = sel.find("~0")) != std::string::npos;) sel.replace(p, 2, "~");
    if (target->is_object() && target->contains(sel)) {
      target = &target->at(sel);
    } else if (target->is_array()) {
      size_t idx = target->size();
      std::from_chars(sel.data(), sel.data() + sel.size(), idx);
      if (idx >= target->size()) return fail(path, "cannot resolve $ref '" + ref + "'"), nullptr;
      target = &(*target)[idx];
    } else {
      return fail(path, "cannot resolve $ref '" + ref + "'"), nullptr;
    }
    start = end + 1;
  }
  return target;
}

// Recursive references end at the rule name being defined (llama.cpp's _resolve_ref).
std::string Converter::resolve_ref(const Json& ref_value, const std::string& path) {
  if (!ref_value.is_string()) return fail(path, "$ref must be a string"), "";
  const std::string ref = ref_value.get<std::string>();
  const std::string ref_name = sanitize("ref" + ref.substr(std::min<size_t>(1, ref.size())));
  if (rules_.count(ref_name) || refs_in_progress_.count(ref)) return ref_name;
  const Json* target = lookup_ref(ref, path);
  if (target == nullptr) return "";
  refs_in_progress_.insert(ref);
  const std::string name = visit(*target, ref_name, ref);
  refs_in_progress_.erase(ref);
  return name;
}

std::string Converter::not_strings(const std::vector<std::string>& names) {
  NameTrie trie;
  for (const std::string& n : names) {
    NameTrie* node = &trie;
    for (size_t i = 0; i < n.size();) {
      const unsigned char lead = static_cast<unsigned char>(n[i]);
      const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
      node = &node->children[n.substr(i, len)];
      i += len;
    }
    node->is_end = true;
  }
  const std::string char_rule = add_primitive("char", "char");
  std::string out = "[\"] ( ";
  not_strings_visit(trie, char_rule, out);
  out += " )";
  if (!trie.is_end) out += "?";
  return out + " [\"]";
}


bool constraining(const std::string& key) {
  static const std::set<std::string> k = {"properties", "required", "additionalProperties", "items", "prefixItems",
                                          "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
                                          "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  return k.count(key) > 0;
}

std::set<std::string> keywords_of_type(const std::string& t) {
  if (t == "object") return {"properties", "required", "additionalProperties"};
  if (t == "array") return {"items", "prefixItems", "minItems", "maxItems"};
  if (t == "string") return {"minLength", "maxLength", "pattern", "format"};
  if (t == "integer" || t == "number") return {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  return {};
}

// Constraining keywords that a node of this kind does not honour are errors, like unknown ones.
void only(const Json& schema, const std::string& path, std::set<std::string> allowed, const std::string& kind,
          std::vector<std::string>& errors) {
  static const std::set<std::string> kAlways = {"title", "description", "$schema", "$id", "$comment", "examples",
                                                "default", "deprecated", "readOnly", "writeOnly", "$anchor",
                                                "$defs", "definitions"};
  std::vector<std::string> ignored;
  for (const auto& [key, value] : schema.items()) {
    if (known_keywords().count(key) && !kAlways.count(key) && !allowed.count(key)) ignored.push_back("'" + key + "'");
  }
  if (!ignored.empty()) errors.push_back(path + ": " + join(ignored, ", ") + " not supported with " + kind);
}

std::string dump(const Json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string Converter::visit(const Json& schema, const std::string& name, const std::string& path) {
  const std::string rule_name = is_reserved_name(name) ? name + "-" : name.empty() ? "root" : name;
  const std::string sub = name + (name.empty() ? "" : "-");
  if (schema.is_boolean() && schema.get<bool>()) return add_rule(rule_name, add_primitive("value", "value"));
  if (!schema.is_object()) return fail(path, "a schema must be an object (or true)"), "";
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{++depth_};
  if (depth_ > 200) return fail(path, "schema nested too deeply"), "";
  check_keywords(schema, path);
  if (schema.contains("$ref")) {
    only(schema, path, {"$ref"}, "$ref", errors_);
    return add_rule(rule_name, resolve_ref(schema.at("$ref"), path));
  }
  if (schema.contains("oneOf") || schema.contains("anyOf")) {
    const char* key = schema.contains("oneOf") ? "oneOf" : "anyOf";
    only(schema, path, {key}, key, errors_);
    const Json& alts = schema.at(key);
    if (!alts.is_array() || alts.empty()) return fail(path, std::string(key) + " must be a non-empty array"), "";
    std::vector<std::string> rules;
    for (size_t i = 0; i < alts.size(); ++i) {
      rules.push_back(visit(alts[i], name + (name.empty() ? "alternative-" : "-") + std::to_string(i),
                            path + "/" + key + "/" + std::to_string(i)));
    }
    return add_rule(rule_name, join(rules, " | "));
  }
  const Json type = schema.contains("type") ? schema.at("type") : Json();
  if (type.is_array()) {  // {"type": [a, b], ...} is anyOf over copies with one type each
    if (type.empty()) return fail(path, "type must not be empty"), "";
    std::vector<std::string> rules;
    for (size_t i = 0; i < type.size(); ++i) {
      Json alt = schema;
      alt["type"] = type[i];
      // Keywords of the other types do not apply to this one (JSON Schema ignores them too).
      const std::set<std::string> keep = keywords_of_type(type[i].is_string() ? type[i].get<std::string>() : "");
      std::vector<std::string> drop;
      for (const auto& [key, value] : alt.items()) {
        if (constraining(key) && !keep.count(key)) drop.push_back(key);
      }
      for (const std::string& key : drop) alt.erase(key);
      rules.push_back(visit(alt, name + (name.empty() ? "alternative-" : "-") + std::to_string(i), path + "/type/" + std::to_string(i)));
    }
    return add_rule(rule_name, join(rules, " | "));
  }
  if (schema.contains("const")) {
    only(schema, path, {"const", "type"}, "const", errors_);
    return add_rule(rule_name, format_literal(dump(schema.at("const"))));
  }
  if (schema.contains("enum")) {
    only(schema, path, {"enum", "type"}, "enum", errors_);
    const Json& values = schema.at("enum");
    if (!values.is_array() || values.empty()) return fail(path, "enum must be a non-empty array"), "";
    std::vector<std::string> alts;
    for (const Json& v : values) alts.push_back(format_literal(dump(v)));
    return add_rule(rule_name, "(" + join(alts, " | ") + ")");
  }
  if (!type.is_null() && !type.is_string()) return fail(path, "type must be a string or an array of strings"), "";
  const std::string t = type.is_string() ? type.get<std::string>() : "";
  const bool has_properties = schema.contains("properties") ||
                              (schema.contains("additionalProperties") && schema.at("additionalProperties") != Json(true));
  if (t == "object" || (t.empty() && has_properties)) return visit_object(schema, name, path);
  if (t.empty() && schema.contains("allOf")) return visit_all_of(schema, name, path);
  if (t == "array" || (t.empty() && (schema.contains("items") || schema.contains("prefixItems")))) {
    return visit_array(schema, name, path);
  }
  if (t == "string" || (t.empty() && (schema.contains("pattern") || schema.contains("minLength") ||
                                      schema.contains("maxLength") || schema.contains("format")))) {
    return visit_string(schema, rule_name, path);
  }
  if (t == "integer") return add_rule(rule_name, visit_integer(schema, path));
  if (t == "number") return add_rule(rule_name, visit_number(schema, path));
  if (t == "boolean" || t == "null") {
    only(schema, path, {"type"}, t, errors_);
    return add_primitive(rule_name == "root" ? "root" : t, t);
  }
  if (!t.empty()) return fail(path, "unknown type '" + t + "'"), "";
  only(schema, path, {}, "a schema without type", errors_);
  return add_rule(rule_name, add_primitive("value", "value"));
}

std::string Converter::visit_object(const Json& schema, const std::string& name, const std::string& path) {
  const std::string rule_name = is_reserved_name(name) ? name + "-" : name.empty() ? "root" : name;
  const bool has_props = schema.contains("properties");
  if (!has_props && schema.contains("allOf") && !schema.contains("additionalProperties")) return visit_all_of(schema, name, path);
  only(schema, path, {"type", "properties", "required", "additionalProperties"}, "type object", errors_);
  std::vector<std::pair<std::string, const Json*>> props;
  if (has_props) {
    const Json& p = schema.at("properties");
    if (!p.is_object()) return fail(path, "properties must be an object"), "";
    for (const auto& [key, value] : p.items()) props.push_back({key, &value});
  }
  std::set<std::string> required;
  if (schema.contains("required")) {
    const Json& r = schema.at("required");
    if (!r.is_array()) return fail(path, "required must be an array"), "";
    for (const Json& n : r) {
      if (!n.is_string()) return fail(path, "required must hold strings"), "";
      const std::string key = n.get<std::string>();
      if (!has_props || !schema.at("properties").contains(key)) fail(path, "required property '" + key + "' has no schema in properties");
      required.insert(key);
    }
  }
  static const Json kAny = true;
  const Json* additional = has_props ? nullptr : &kAny;  // {"type": "object"} alone takes any object
  if (schema.contains("additionalProperties")) {
    const Json& a = schema.at("additionalProperties");
    if (a.is_boolean()) {
      additional = a.get<bool>() ? &kAny : nullptr;
    } else if (a.is_object()) {
      additional = &a;
    } else {
      return fail(path, "additionalProperties must be a boolean or a schema"), "";
    }
  }
  if (props.empty() && additional == &kAny) return add_rule(rule_name, add_primitive("object", "object"));
  return add_rule(rule_name, build_object(props, required, name, additional, path));
}

std::string Converter::build_object(const std::vector<std::pair<std::string, const Json*>>& props,
                                    const std::set<std::string>& required, const std::string& name, const Json* additional,
                                    const std::string& path) {
  const std::string sub = name + (name.empty() ? "" : "-");
  std::vector<std::string> required_props, optional_props, prop_names;
  std::map<std::string, std::string> kv;
  for (const auto& [prop, schema] : props) {
    const std::string value_rule = visit(*schema, sub + prop, path + "/properties/" + prop);
    kv[prop] = add_rule(sub + prop + "-kv", format_literal(dump(Json(prop))) + " space \":\" space " + value_rule);
    (required.count(prop) ? required_props : optional_props).push_back(prop);
    prop_names.push_back(prop);
  }
  if (additional != nullptr) {
    const std::string add_name = sub + "additional";
    const std::string value_rule = additional->is_boolean() ? add_primitive("value", "value")
                                                            : visit(*additional, add_name + "-value", path + "/additionalProperties");
    const std::string key_rule = prop_names.empty() ? add_primitive("string", "string") : add_rule(add_name + "-k", not_strings(prop_names));
    kv["*"] = add_rule(add_name + "-kv", key_rule + " \":\" space " + value_rule);
    optional_props.push_back("*");
  }
  if (required_props.empty() && optional_props.empty()) return "\"{\" space \"}\"";
  std::string rule = "\"{\" space ";
  for (size_t i = 0; i < required_props.size(); ++i) rule += (i ? " \",\" space " : "") + kv[required_props[i]];
  if (!optional_props.empty()) {
    // Optional properties in order, each chain starting at one of them: ( a (, b)? (, c)? | b (, c)? | c ).
    std::function<std::string(size_t, bool)> chain = [&](size_t i, bool first_is_optional) -> std::string {
      const std::string& k = optional_props[i];
      const std::string comma_ref = "( \",\" space " + kv[k] + " )";
      std::string res = first_is_optional ? comma_ref + (k == "*" ? "*" : "?") : kv[k] + (k == "*" ? " " + comma_ref + "*" : "");
      if (i + 1 < optional_props.size()) res += " " + add_rule(sub + k + "-rest", chain(i + 1, true));
      return res;
    };
    rule += " (";
    if (!required_props.empty()) rule += " \",\" space ( ";
    for (size_t i = 0; i < optional_props.size(); ++i) rule += (i ? " | " : "") + chain(i, false);
    if (!required_props.empty()) rule += " )";
    rule += " )?";
  }
  return rule + " space \"}\"";
}

std::string Converter::visit_all_of(const Json& schema, const std::string& name, const std::string& path) {
  const std::string rule_name = is_reserved_name(name) ? name + "-" : name.empty() ? "root" : name;
  only(schema, path, {"type", "allOf"}, "allOf", errors_);
  const Json& parts = schema.at("allOf");
  if (!parts.is_array() || parts.empty()) return fail(path, "allOf must be a non-empty array"), "";
  std::set<std::string> required;
  std::vector<std::pair<std::string, const Json*>> props;
  std::map<std::string, size_t> enum_counts;
  // As llama.cpp: the properties of every object part (all required, but those under an anyOf),
  // or the values common to every enum part. Other parts cannot be merged: an error, not a drop.
  std::function<void(const Json&, bool, const std::string&)> add = [&](const Json& part, bool is_required, const std::string& at) {
    if (part.is_object() && part.contains("$ref") && part.at("$ref").is_string()) {
      const Json* target = lookup_ref(part.at("$ref").get<std::string>(), at);
      if (target != nullptr) add(*target, is_required, at);
    } else if (part.is_object() && part.contains("properties") && part.at("properties").is_object()) {
      only(part, at, {"type", "properties", "required"}, "an allOf part", errors_);
      for (const auto& [key, value] : part.at("properties").items()) {
        props.push_back({key, &value});
        if (is_required) required.insert(key);
      }
    } else if (part.is_object() && part.contains("enum") && part.at("enum").is_array()) {
      for (const Json& v : part.at("enum")) enum_counts[format_literal(dump(v))] += 1;
    } else {
      fail(at, "allOf part is not an object with properties, an enum or a $ref to one");
    }
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string at = path + "/allOf/" + std::to_string(i);
    if (parts[i].is_object() && parts[i].contains("anyOf") && parts[i].at("anyOf").is_array()) {
      for (const Json& alt : parts[i].at("anyOf")) add(alt, false, at);
    } else {
      add(parts[i], true, at);
    }
  }
  if (!enum_counts.empty()) {
    std::vector<std::string> common;
    for (const auto& [literal, count] : enum_counts) {
      if (count == parts.size()) common.push_back(literal);
    }
    if (common.empty()) return fail(path, "allOf enums have no value in common"), "";
    return add_rule(rule_name, "(" + join(common, " | ") + ")");
  }
  return add_rule(rule_name, build_object(props, required, name, nullptr, path));
}

std::string Converter::visit_array(const Json& schema, const std::string& name, const std::string& path) {
  const std::string rule_name = is_reserved_name(name) ? name + "-" : name.empty() ? "root" : name;
  const std::string sub = name + (name.empty() ? "" : "-");
  only(schema, path, {"type", "items", "prefixItems", "minItems", "maxItems"}, "type array", errors_);
  if (schema.contains("items") && schema.contains("prefixItems")) return fail(path, "items together with prefixItems"), "";
  const int min_items = get_count(schema, "minItems", 0, path);
  const int max_items = get_count(schema, "maxItems", kNoMax, path);
  if (min_items > max_items) return fail(path, "minItems above maxItems"), "";
  const char* key = schema.contains("items") ? "items" : schema.contains("prefixItems") ? "prefixItems" : nullptr;
  if (key != nullptr && schema.at(key).is_array()) {  // a tuple: exactly these items
    const Json& items = schema.at(key);
    if (static_cast<int>(items.size()) < min_items || (max_items != kNoMax && static_cast<int>(items.size()) > max_items)) {
      return fail(path, "minItems/maxItems exclude the tuple's length"), "";
    }
    std::string rule = "\"[\" space ";
    for (size_t i = 0; i < items.size(); ++i) {
      rule += (i ? " \",\" space " : "") + visit(items[i], sub + "tuple-" + std::to_string(i), path + "/" + key + "/" + std::to_string(i));
    }
    return add_rule(rule_name, rule + " space \"]\"");
  }
  if (key == nullptr && min_items == 0 && max_items == kNoMax) return add_primitive(rule_name == "root" ? "root" : "array", "array");
  const std::string item_rule = key != nullptr ? visit(schema.at(key), sub + "item", path + "/" + key) : add_primitive("value", "value");
  return add_rule(rule_name, "\"[\" space " + build_repetition(item_rule, min_items, max_items, "\",\" space") + " space \"]\"");
}

std::string Converter::visit_string(const Json& schema, const std::string& rule_name, const std::string& path) {
  only(schema, path, {"type", "pattern", "format", "minLength", "maxLength"}, "type string", errors_);
  const bool has_length = schema.contains("minLength") || schema.contains("maxLength");
  if (schema.contains("pattern")) {
    if (has_length || schema.contains("format")) return fail(path, "pattern together with minLength/maxLength/format"), "";
    const Json& p = schema.at("pattern");
    if (!p.is_string()) return fail(path, "pattern must be a string"), "";
    Result<std::string> body = json_schema_detail::pattern_to_gbnf(p.get<std::string>());
    if (!body.ok()) return fail(path, body.status().message()), "";
    return add_rule(rule_name, "\"\\\"\" (" + *body + ") \"\\\"\"");
  }
  if (schema.contains("format")) {
    const Json& f = schema.at("format");
    const std::string format = f.is_string() ? f.get<std::string>() : "";
    if (has_length) return fail(path, "format together with minLength/maxLength"), "";
    if (format == "uuid") return add_primitive(rule_name == "root" ? "root" : "uuid", "uuid");
    if (format == "date" || format == "time" || format == "date-time") {
      return add_rule(rule_name, add_primitive(format + "-string", format + "-string"));
    }
    return fail(path, "format '" + format + "' is not supported (date, time, date-time, uuid are)"), "";
  }
  if (has_length) {
    const int min_len = get_count(schema, "minLength", 0, path);
    const int max_len = get_count(schema, "maxLength", kNoMax, path);
    if (min_len > max_len) return fail(path, "minLength above maxLength"), "";
    const std::string char_rule = add_primitive("char", "char");
    return add_rule(rule_name, "\"\\\"\" " + build_repetition(char_rule, min_len, max_len) + " \"\\\"\"");
  }
  return add_primitive(rule_name == "root" ? "root" : "string", "string");
}

// Integer bounds, exclusive ones moved in by one (fractional ones rounded inwards), as llama.cpp.
std::string Converter::visit_integer(const Json& schema, const std::string& path) {
  only(schema, path, {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}, "type integer", errors_);
  int64_t lo = 0, hi = 0;
  bool has_lo = false, has_hi = false;
  if (schema.contains("minimum")) {
    has_lo = get_bound(schema, "minimum", true, &lo, path);
  } else if (schema.contains("exclusiveMinimum")) {
    has_lo = get_bound(schema, "exclusiveMinimum", false, &lo, path);
    lo += 1;
  }
  if (schema.contains("maximum")) {
    has_hi = get_bound(schema, "maximum", false, &hi, path);
  } else if (schema.contains("exclusiveMaximum")) {
    has_hi = get_bound(schema, "exclusiveMaximum", true, &hi, path);
    hi -= 1;
  }
  if (!has_lo && !has_hi) return add_primitive("integer", "integer");
  if (has_lo && has_hi && lo > hi) return fail(path, "no integer lies within the bounds"), "";
  return "(" + integer_range(lo, has_lo, hi, has_hi) + ")";
}

// Numbers within bounds (inclusive or exclusive, integer or fractional), without exponents: see
// json_schema_numbers.cpp. Where both minimum and exclusiveMinimum are given the tighter one counts
// (likewise for the maximum), as a validator applies both.
std::string Converter::visit_number(const Json& schema, const std::string& path) {
  only(schema, path, {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}, "type number", errors_);
  std::optional<json_schema_detail::NumberBound> lo, hi;
  for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
    if (!schema.contains(key)) continue;
    const Json& v = schema.at(key);
    if (!v.is_number()) return fail(path, std::string(key) + " must be a number"), "";
    const json_schema_detail::NumberBound b{v.get<double>(), key[0] == 'e', key};
    const bool lower = std::string_view(key).find("inimum") != std::string_view::npos;
    auto& slot = lower ? lo : hi;
    const bool tighter = !slot || (lower ? b.value > slot->value : b.value < slot->value) ||
                         (b.value == slot->value && b.exclusive);
    if (tighter) slot = b;
  }
  if (!lo && !hi) return add_primitive("number", "number");
  Result<std::string> g = json_schema_detail::number_range(lo, hi);
  if (!g.ok()) return fail(path, g.status().message()), "";
  return *g;
}

}  // namespace

Result<std::string> json_schema_to_gbnf(std::string_view schema_json) {
  const Json schema = Json::parse(schema_json.begin(), schema_json.end(), nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return error(ErrorCode::kInvalidArgument, "json schema: not valid JSON");
  Converter converter(schema);
  (void)converter.visit(schema, "", "#");
  return converter.finish();
}

std::string json_object_gbnf() {
  Result<std::string> g = json_schema_to_gbnf("{\"type\": \"object\"}");
  OX_CHECK(g.ok());
  return *g;
}

}  // namespace ox
