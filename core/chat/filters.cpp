// jinja2's filters on text and numbers (trim, replace, indent, tojson, int, round, ...) and the
// filter dispatch table. tojson follows transformers' override: json.dumps without HTML or
// ASCII escaping, keys in insertion order.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/chat/filters.h"
#include "core/chat/json_io.h"
#include "core/chat/unicode.h"

namespace ox::chat::filters {

namespace {

Value str_value(std::string s) { return Value::string(std::move(s)); }

Result<Value> trim(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "trim", {"chars"}, &p));
  const std::string s = to_str(v);
  if (p[0] != nullptr && p[0]->is_string()) {
    const std::string_view chars = p[0]->str();
    return str_value(std::string(utf8::strip(s, &chars, true, true)));
  }
  return str_value(std::string(utf8::strip(s, nullptr, true, true)));
}

Result<Value> lower(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "lower", {}, &p));
  return str_value(utf8::lower(to_str(v)));
}

Result<Value> upper(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "upper", {}, &p));
  return str_value(utf8::upper(to_str(v)));
}

Result<Value> title(Interp&, const Value& v, CallArgs&) { return str_value(pystr::jinja_title(to_str(v))); }
Result<Value> capitalize(Interp&, const Value& v, CallArgs&) { return str_value(pystr::capitalize(to_str(v))); }
Result<Value> string(Interp&, const Value& v, CallArgs&) { return str_value(to_str(v)); }
// pprint.pformat sorts dict keys (its line wrapping past 80 columns is not reproduced).
Value sort_dicts(const Value& v) {
  if (v.is_sequence()) {
    ValueList items;
    for (const Value& item : v.items()) items.push_back(sort_dicts(item));
    return v.kind() == Kind::kTuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  if (!v.is_dict()) return v;
  std::vector<std::pair<Value, Value>> entries = v.dict().entries();
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    Result<int> c = compare(a.first, b.first);
    return c.ok() && *c < 0;
  });
  Dict d;
  for (auto& [k, item] : entries) (void)d.set(k, sort_dicts(item));
  return Value::dict(std::move(d));
}

Result<Value> pprint(Interp&, const Value& v, CallArgs&) { return str_value(repr(sort_dicts(v))); }

Result<Value> escape(Interp&, const Value& v, CallArgs&) {
  std::string out;
  for (char c : to_str(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return str_value(std::move(out));
}

Result<Value> length(Interp&, const Value& v, CallArgs&) {
  switch (v.kind()) {
    case Kind::kUndefined: return Value::integer(0);
    case Kind::kString: return Value::integer(static_cast<int64_t>(utf8::length(v.str())));
    case Kind::kList:
    case Kind::kTuple: return Value::integer(static_cast<int64_t>(v.items().size()));
    case Kind::kDict: return Value::integer(static_cast<int64_t>(v.dict().size()));
    case Kind::kLoop: return Value::integer(static_cast<int64_t>(v.as<LoopState>()->items->items.size()));
    default: break;
  }
  return type_error(strfmt("object of type '%s' has no len()", type_name(v)));
}

Result<Value> default_(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "default", {"default_value", "boolean"}, &p));
  const bool boolean = p[1] != nullptr && truthy(*p[1]);
  if (v.is_undefined() || (boolean && !truthy(v))) return p[0] != nullptr ? *p[0] : str_value("");
  return v;
}

Result<Value> replace(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "replace", {"old", "new", "count"}, &p));
  if (p[0] == nullptr || p[1] == nullptr) return type_error("replace() needs 'old' and 'new'");
  const int64_t count = (p[2] != nullptr && p[2]->is_int()) ? p[2]->get_int() : -1;
  OX_ASSIGN_OR_RETURN(std::string out, pystr::replace(to_str(v), to_str(*p[0]), to_str(*p[1]), count,
                                                      in.options().max_output_bytes));
  return str_value(std::move(out));
}

Result<Value> indent(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "indent", {"width", "first", "blank"}, &p));
  std::string pad = "    ";
  if (p[0] != nullptr) {
    if (p[0]->is_string()) {
      pad = p[0]->str();
    } else if (p[0]->is_int()) {
      const int64_t w = p[0]->get_int();
      OX_TRY(in.check_string_size(static_cast<uint64_t>(std::max<int64_t>(w, 0))));
      pad.assign(static_cast<size_t>(std::max<int64_t>(w, 0)), ' ');
    } else {
      return type_error("indent width must be an integer or a string");
    }
  }
  // jinja2 appends "\n" to the value itself, so only strings can be indented.
  if (v.is_undefined()) return undefined_error(v);
  if (!v.is_string()) return type_error(strfmt("indent() needs a string, not '%s'", type_name(v)));
  const std::string& s = v.str();
  const uint64_t lines = static_cast<uint64_t>(std::count(s.begin(), s.end(), '\n')) + 2;
  OX_TRY(in.check_string_size(s.size() + lines * pad.size()));
  return str_value(pystr::indent(s, pad, p[1] != nullptr && truthy(*p[1]), p[2] != nullptr && truthy(*p[2])));
}

Result<Value> center(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "center", {"width"}, &p));
  CallArgs inner;
  inner.args.push_back(p[0] != nullptr ? *p[0] : Value::integer(80));
  std::optional<Value> m = bound_method(str_value(to_str(v)), "center");
  return in.call(*m, inner);
}

// Python float(str): surrounding whitespace and digit underscores allowed, no hex.
bool parse_float(std::string_view text, double* out) {
  std::string s(utf8::strip(text, nullptr, true, true));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  if (s.empty() || s.find_first_of("xXpP") != std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

bool parse_int(std::string_view text, int base, int64_t* out) {
  std::string s(utf8::strip(text, nullptr, true, true));
  bool neg = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (base == 16 && s.compare(i, 2, "0x") == 0) i += 2;
  if (i >= s.size()) return false;
  uint64_t v = 0;
  bool prev_digit = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' && prev_digit && i + 1 < s.size()) {
      prev_digit = false;
      continue;
    }
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'z') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') d = c - 'A' + 10;
    if (d < 0 || d >= base) return false;
    if (v > (static_cast<uint64_t>(INT64_MAX) - d) / base) return false;
    v = v * base + d;
    prev_digit = true;
  }
  *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return prev_digit;
}

Result<Value> int_(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "int", {"default", "base"}, &p));
  if (v.is_undefined()) return undefined_error(v);  // int(Undefined) raises
  const Value fallback = p[0] != nullptr ? *p[0] : Value::integer(0);
  const int base = (p[1] != nullptr && p[1]->is_int()) ? static_cast<int>(p[1]->get_int()) : 10;
  if (v.is_int()) return Value::integer(v.get_int());
  double f = 0.0;
  if (v.kind() == Kind::kFloat) {
    f = v.get_float();
  } else if (v.is_string()) {
    int64_t i = 0;
    if (base >= 2 && base <= 36 && parse_int(v.str(), base, &i)) return Value::integer(i);
    if (!parse_float(v.str(), &f)) return fallback;
  } else {
    return fallback;
  }
  if (std::isnan(f)) return fallback;
  if (!(std::fabs(f) < 9.2e18)) return type_error("cannot convert float infinity to integer");
  return Value::integer(static_cast<int64_t>(std::trunc(f)));
}

Result<Value> float_(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "float", {"default"}, &p));
  if (v.is_undefined()) return undefined_error(v);  // float(Undefined) raises
  if (v.is_number()) return Value::real(v.get_float());
  double f = 0.0;
  if (v.is_string() && parse_float(v.str(), &f)) return Value::real(f);
  return p[0] != nullptr ? *p[0] : Value::real(0.0);
}

Result<Value> abs_(Interp&, const Value& v, CallArgs&) {
  if (v.kind() == Kind::kFloat) return Value::real(std::fabs(v.get_float()));
  if (v.is_int()) {
    if (v.get_int() == INT64_MIN) return type_error("integer overflow");
    return Value::integer(v.get_int() < 0 ? -v.get_int() : v.get_int());
  }
  if (v.is_undefined()) return undefined_error(v);
  return type_error(strfmt("bad operand type for abs(): '%s'", type_name(v)));
}

Result<Value> round_(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "round", {"precision", "method"}, &p));
  const int64_t precision = (p[0] != nullptr && p[0]->is_int()) ? p[0]->get_int() : 0;
  const std::string method = p[1] != nullptr ? to_str(*p[1]) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    return type_error("method must be common, ceil or floor");
  }
  if (v.is_undefined()) return undefined_error(v);
  if (!v.is_number()) return type_error(strfmt("type %s doesn't define __round__ method", type_name(v)));
  const double x = v.get_float();
  if (method != "common") {
    const double scale = std::pow(10.0, static_cast<double>(precision));
    return Value::real((method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale);
  }
  if (v.kind() != Kind::kFloat && precision >= 0) return Value::integer(v.get_int());  // round(int, n) stays int
  if (!std::isfinite(x)) return Value::real(x);
  if (precision > 0 && precision < 30) {
    // printf rounds the exact binary value half-to-even, like Python's correctly rounded round().
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
    return Value::real(std::strtod(buf, nullptr));
  }
  if (precision >= 30) return Value::real(x);
  const double scale = std::pow(10.0, static_cast<double>(-precision));
  return Value::real(std::nearbyint(x / scale) * scale);
}

Result<Value> tojson(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"}, &p));
  JsonDumpOptions o;
  o.ensure_ascii = p[0] != nullptr && truthy(*p[0]);
  if (p[1] != nullptr && !p[1]->is_none()) {
    if (p[1]->is_string()) {
      o.indent = p[1]->str();
    } else if (p[1]->is_int()) {
      const int64_t n = std::max<int64_t>(0, p[1]->get_int());
      if (n > 1024) return type_error("tojson indent too large");
      o.indent = std::string(static_cast<size_t>(n), ' ');
    } else {
      return type_error("tojson indent must be an integer or a string");
    }
  }
  if (p[2] != nullptr && !p[2]->is_none()) {
    if (!p[2]->is_sequence() || p[2]->items().size() != 2 || !p[2]->items()[0].is_string() || !p[2]->items()[1].is_string()) {
      return type_error("tojson separators must be a pair of strings");
    }
    o.item_sep = p[2]->items()[0].str();
    o.key_sep = p[2]->items()[1].str();
  }
  o.sort_keys = p[3] != nullptr && truthy(*p[3]);
  OX_ASSIGN_OR_RETURN(std::string s, dump_json(v, o));
  OX_TRY(in.check_string_size(s.size()));
  return str_value(std::move(s));
}

Result<Value> format(Interp&, const Value& v, CallArgs& a) {
  if (!a.args.empty() && !a.kwargs.empty()) return type_error("can't handle positional and keyword arguments at the same time");
  Value args;
  if (!a.kwargs.empty()) {
    Dict d;
    for (const auto& [k, item] : a.kwargs) OX_TRY(d.set(Value::string(k), item));
    args = Value::dict(std::move(d));
  } else {
    args = Value::tuple(a.args);
  }
  OX_ASSIGN_OR_RETURN(std::string s, pystr::percent_format(to_str(v), args));
  return str_value(std::move(s));
}

Result<Value> wordcount(Interp&, const Value& v, CallArgs&) {
  const std::string s = to_str(v);
  int64_t n = 0;
  bool in_word = false;
  size_t pos = 0;
  while (pos < s.size()) {
    const bool w = utf8::is_word(utf8::decode(s, &pos));
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

Result<Value> truncate(Interp&, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "truncate", {"length", "killwords", "end", "leeway"}, &p));
  // jinja2 measures the value itself: Undefined is short enough to pass through, other
  // non-strings fail like Python's len() or slicing would.
  if (v.is_undefined()) return v;
  const int64_t length = (p[0] != nullptr && p[0]->is_int()) ? p[0]->get_int() : 255;
  const int64_t leeway_arg = (p[3] != nullptr && p[3]->is_int()) ? p[3]->get_int() : 5;
  if (!v.is_string()) {
    const int64_t n = v.is_sequence() ? static_cast<int64_t>(v.items().size())
                                      : (v.is_dict() ? static_cast<int64_t>(v.dict().size()) : -1);
    if (n >= 0 && n <= length + leeway_arg) return v;
    return type_error(strfmt("truncate() needs a string, not '%s'", type_name(v)));
  }
  const std::string& s = v.str();
  const bool killwords = p[1] != nullptr && truthy(*p[1]);
  const std::string end = p[2] != nullptr ? to_str(*p[2]) : "...";
  const int64_t leeway = (p[3] != nullptr && p[3]->is_int()) ? p[3]->get_int() : 5;
  const auto end_len = static_cast<int64_t>(utf8::length(end));
  if (length < end_len) return type_error(strfmt("expected length >= %lld, got %lld", static_cast<long long>(end_len), static_cast<long long>(length)));
  if (leeway < 0) return type_error("expected leeway >= 0");
  if (static_cast<int64_t>(utf8::length(s)) <= length + leeway) return str_value(s);
  OX_ASSIGN_OR_RETURN(Value head, slice_value(str_value(s), Value::none(), Value::integer(length - end_len), Value::none()));
  if (killwords) return str_value(head.str() + end);
  const std::string space = " ";
  std::vector<std::string> parts = pystr::rsplit(head.str(), &space, 1);
  return str_value(parts[0] + end);
}

Result<Value> striptags(Interp&, const Value& v, CallArgs&) {
  const std::string s = to_str(v);
  std::string text;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 4, "<!--") == 0) {
      const size_t e = s.find("-->", i + 4);
      if (e != std::string::npos) {
        i = e + 3;
        continue;
      }
    }
    if (s[i] == '<') {
      const size_t e = s.find('>', i + 1);
      if (e != std::string::npos) {
        i = e + 1;
        continue;
      }
    }
    text += s[i++];
  }
  std::string out;
  for (const std::string& w : pystr::split(text, nullptr, -1)) out += (out.empty() ? "" : " ") + w;
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#34;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities) {
    Result<std::string> r = pystr::replace(out, from, to, -1, UINT64_MAX);
    if (r.ok()) out = std::move(*r);
  }
  return str_value(std::move(out));
}

Result<Value> attr(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "attr", {"name"}, &p));
  if (p[0] == nullptr) return type_error("attr() needs a name");
  const std::string name = to_str(*p[0]);
  if (v.kind() == Kind::kNamespace || v.kind() == Kind::kLoop) return in.getattr(v, name);
  if (v.is_undefined()) return undefined_error(v);
  if (std::optional<Value> m = bound_method(v, name)) return *m;
  return Value::undefined(strfmt("'%s object' has no attribute '%s'", type_name(v), name.c_str()));
}

struct FilterEntry {
  const char* name;
  FilterFn fn;
};

const FilterEntry kFilters[] = {
    {"abs", abs_},           {"attr", attr},           {"batch", batch},         {"capitalize", capitalize},
    {"center", center},      {"count", length},        {"d", default_},          {"default", default_},
    {"dictsort", dictsort},  {"e", escape},            {"escape", escape},       {"first", first},
    {"float", float_},       {"forceescape", escape},  {"format", format},       {"indent", indent},
    {"int", int_},           {"items", items},         {"join", join},           {"last", last},
    {"length", length},      {"list", list},           {"lower", lower},         {"map", map},
    {"max", max},            {"min", min},             {"pprint", pprint},       {"reject", reject},
    {"rejectattr", rejectattr}, {"replace", replace},  {"reverse", reverse},     {"round", round_},
    {"safe", string},        {"select", select},       {"selectattr", selectattr}, {"slice", slice},
    {"sort", sort},          {"string", string},       {"striptags", striptags}, {"sum", sum},
    {"title", title},        {"tojson", tojson},       {"trim", trim},           {"truncate", truncate},
    {"unique", unique},      {"upper", upper},         {"wordcount", wordcount},
};

}  // namespace

}  // namespace ox::chat::filters

namespace ox::chat {

bool is_filter_name(std::string_view name) {
  for (const auto& f : filters::kFilters) {
    if (name == f.name) return true;
  }
  return false;
}

Result<Value> call_filter(Interp& in, std::string_view name, const Value& input, CallArgs& args) {
  for (const auto& f : filters::kFilters) {
    if (name == f.name) return f.fn(in, input, args);
  }
  return type_error("no filter named '" + std::string(name) + "'");
}

}  // namespace ox::chat
