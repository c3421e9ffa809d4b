// Methods templates call on values: str (strip, split, startswith, replace, format, ...),
// dict (items, keys, values, get) and list (index, count). Mutating methods are refused the
// way transformers' immutable sandbox refuses them.
#include <cmath>

#include "core/chat/builtins.h"
#include "core/chat/unicode.h"

namespace ox::chat {

namespace {

Status need_str(const Value* v, const char* what) {
  if (v != nullptr && !v->is_string()) return type_error(strfmt("%s must be str, not %s", what, type_name(*v)));
  return Status::ok();
}

Result<Value> strip_impl(const Value& self, CallArgs& a, const char* name, bool left, bool right) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, name, {"chars"}, &p));
  if (p[0] != nullptr && !p[0]->is_none()) {
    OX_TRY(need_str(p[0], "strip arg"));
    const std::string_view chars = p[0]->str();
    return Value::string(std::string(utf8::strip(self.str(), &chars, left, right)));
  }
  return Value::string(std::string(utf8::strip(self.str(), nullptr, left, right)));
}

Result<Value> string_list(Interp& in, std::vector<std::string> parts) {
  OX_TRY(in.check_list_size(parts.size()));
  ValueList out;
  out.reserve(parts.size());
  for (std::string& s : parts) out.push_back(Value::string(std::move(s)));
  return Value::list(std::move(out));
}

Result<Value> split_impl(Interp& in, const Value& self, CallArgs& a, bool right) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, right ? "rsplit" : "split", {"sep", "maxsplit"}, &p));
  const std::string* sep = nullptr;
  if (p[0] != nullptr && !p[0]->is_none()) {
    OX_TRY(need_str(p[0], "separator"));
    if (p[0]->str().empty()) return type_error("empty separator");
    sep = &p[0]->str();
  }
  int64_t maxsplit = -1;
  if (p[1] != nullptr) {
    if (!p[1]->is_int()) return type_error("maxsplit must be an integer");
    maxsplit = p[1]->get_int();
  }
  return string_list(in, right ? pystr::rsplit(self.str(), sep, maxsplit) : pystr::split(self.str(), sep, maxsplit));
}

// startswith/endswith accept a str or a tuple of str.
Result<Value> affix_impl(const Value& self, CallArgs& a, bool start) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, start ? "startswith" : "endswith", {"prefix", "start", "end"}, &p));
  if (p[0] == nullptr) return type_error("startswith/endswith takes at least 1 argument");
  std::string_view s = self.str();
  if (p[1] != nullptr || p[2] != nullptr) {
    OX_ASSIGN_OR_RETURN(Value sub, slice_value(self, p[1] ? *p[1] : Value::none(), p[2] ? *p[2] : Value::none(), Value::none()));
    CallArgs inner;
    inner.args.push_back(*p[0]);
    return affix_impl(sub, inner, start);
  }
  ValueList options = p[0]->kind() == Kind::kTuple ? p[0]->items() : ValueList{*p[0]};
  for (const Value& o : options) {
    if (!o.is_string()) return type_error(strfmt("%s first arg must be str or a tuple of str, not %s", start ? "startswith" : "endswith", type_name(o)));
    const std::string& x = o.str();
    const bool hit = x.size() <= s.size() && (start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0);
    if (hit) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Result<Value> find_impl(const Value& self, CallArgs& a, const char* name, bool last, bool raise) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, name, {"sub", "start", "end"}, &p));
  if (p[0] == nullptr) return type_error(strfmt("%s() takes at least 1 argument", name));
  OX_TRY(need_str(p[0], "substring"));
  const int64_t start = (p[1] != nullptr && p[1]->is_int()) ? p[1]->get_int() : 0;
  const int64_t end = (p[2] != nullptr && p[2]->is_int()) ? p[2]->get_int() : INT64_MAX / 2;
  const int64_t i = pystr::find(self.str(), p[0]->str(), start, end, last);
  if (i < 0 && raise) return type_error("substring not found");
  return Value::integer(i);
}

Result<Value> justify_impl(Interp& in, const Value& self, CallArgs& a, const char* name) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, name, {"width", "fillchar"}, &p));
  if (p[0] == nullptr || !p[0]->is_int()) return type_error(strfmt("%s() needs an integer width", name));
  const std::string fill = p[1] != nullptr && p[1]->is_string() ? p[1]->str() : " ";
  if (utf8::length(fill) != 1) return type_error("The fill character must be exactly one character long");
  const int64_t width = p[0]->get_int();
  const auto len = static_cast<int64_t>(utf8::length(self.str()));
  if (width <= len) return self;
  OX_TRY(in.check_string_size(static_cast<uint64_t>(width) * fill.size()));
  const int64_t marg = width - len;
  int64_t left = 0;
  if (std::string_view(name) == "center") {
    left = marg / 2 + (marg & width & 1);
  } else if (std::string_view(name) == "rjust") {
    left = marg;
  }
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += self.str();
  for (int64_t i = left; i < marg; ++i) out += fill;
  return Value::string(std::move(out));
}

// Every str method a template may call; aliases map to the same implementation.
const char* const kStrMethods[] = {
    "strip",   "lstrip",  "rstrip",    "split",    "rsplit",     "splitlines",   "startswith",   "endswith",
    "upper",   "lower",   "casefold",  "title",    "capitalize", "swapcase",     "replace",      "join",
    "find",    "rfind",   "index",     "rindex",   "count",      "format",       "isdigit",      "isnumeric",
    "isdecimal", "isalpha", "isalnum", "isspace",  "isupper",    "islower",      "center",       "ljust",
    "rjust",   "zfill",   "partition", "rpartition", "removeprefix", "removesuffix",
};

// Methods without arguments: case mapping and the is*() predicates.
Result<Value> str_method_no_args(const Value& self, CallArgs& a, const std::string& name) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, name.c_str(), {}, &p));
  const std::string& s = self.str();
  if (name == "upper") return Value::string(utf8::upper(s));
  if (name == "lower" || name == "casefold") return Value::string(utf8::lower(s));
  if (name == "title") return Value::string(pystr::title(s));
  if (name == "capitalize") return Value::string(pystr::capitalize(s));
  if (name == "swapcase") return Value::string(pystr::swapcase(s));
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") return Value::boolean(pystr::is_all(s, utf8::is_digit));
  if (name == "isalpha") return Value::boolean(pystr::is_all(s, utf8::is_alpha));
  if (name == "isalnum") return Value::boolean(pystr::is_all(s, [](uint32_t c) { return utf8::is_alpha(c) || utf8::is_digit(c); }));
  if (name == "isspace") return Value::boolean(pystr::is_all(s, utf8::is_space));
  if (name == "isupper" || name == "islower") {
    const bool want_upper = name == "isupper";
    bool any_cased = false;
    size_t pos = 0;
    while (pos < s.size()) {
      const uint32_t cp = utf8::decode(s, &pos);
      if (utf8::is_upper(cp) || utf8::is_lower(cp)) {
        any_cased = true;
        if (want_upper ? utf8::is_lower(cp) : utf8::is_upper(cp)) return Value::boolean(false);
      }
    }
    return Value::boolean(any_cased);
  }
  return type_error("'str' object has no method '" + name + "'");
}

Result<Value> str_method(Interp& in, const Value& self, CallArgs& a, const std::string& name) {
  const std::string& s = self.str();
  if (name == "strip") return strip_impl(self, a, "strip", true, true);
  if (name == "lstrip") return strip_impl(self, a, "lstrip", true, false);
  if (name == "rstrip") return strip_impl(self, a, "rstrip", false, true);
  if (name == "split") return split_impl(in, self, a, false);
  if (name == "rsplit") return split_impl(in, self, a, true);
  if (name == "startswith" || name == "endswith") return affix_impl(self, a, name == "startswith");
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    return find_impl(self, a, name.c_str(), name[0] == 'r', name.find("index") != std::string::npos);
  }
  if (name == "center" || name == "ljust" || name == "rjust") return justify_impl(in, self, a, name.c_str());
  std::vector<const Value*> p;
  if (name == "splitlines") {
    OX_TRY(bind_args(a, "splitlines", {"keepends"}, &p));
    return string_list(in, pystr::splitlines(s, p[0] != nullptr && truthy(*p[0])));
  }
  if (name == "replace") {
    OX_TRY(bind_args(a, "replace", {"old", "new", "count"}, &p));
    if (p[0] == nullptr || p[1] == nullptr) return type_error("replace() takes at least 2 arguments");
    OX_TRY(need_str(p[0], "replace() argument 1"));
    OX_TRY(need_str(p[1], "replace() argument 2"));
    const int64_t count = (p[2] != nullptr && p[2]->is_int()) ? p[2]->get_int() : -1;
    OX_ASSIGN_OR_RETURN(std::string out, pystr::replace(s, p[0]->str(), p[1]->str(), count, in.options().max_output_bytes));
    return Value::string(std::move(out));
  }
  if (name == "join") {
    OX_TRY(bind_args(a, "join", {"iterable"}, &p));
    if (p[0] == nullptr) return type_error("join() takes exactly one argument");
    OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(*p[0]));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return type_error(strfmt("sequence item %zu: expected str instance, %s found", i, type_name(items[i])));
      }
      if (i > 0) out += s;
      out += items[i].str();
      OX_TRY(in.check_string_size(out.size()));
    }
    return Value::string(std::move(out));
  }
  if (name == "count") {
    OX_TRY(bind_args(a, "count", {"sub"}, &p));
    if (p[0] == nullptr) return type_error("count() takes at least 1 argument");
    OX_TRY(need_str(p[0], "count() argument"));
    return Value::integer(pystr::count(s, p[0]->str()));
  }
  if (name == "format") {
    OX_ASSIGN_OR_RETURN(std::string out, pystr::brace_format(s, a));
    return Value::string(std::move(out));
  }
  if (name == "zfill") {
    OX_TRY(bind_args(a, "zfill", {"width"}, &p));
    if (p[0] == nullptr || !p[0]->is_int()) return type_error("zfill() needs an integer width");
    const auto len = static_cast<int64_t>(utf8::length(s));
    const int64_t width = p[0]->get_int();
    if (width <= len) return self;
    OX_TRY(in.check_string_size(static_cast<uint64_t>(width)));
    const std::string zeros(static_cast<size_t>(width - len), '0');
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) return Value::string(s.substr(0, 1) + zeros + s.substr(1));
    return Value::string(zeros + s);
  }
  if (name == "partition" || name == "rpartition") {
    OX_TRY(bind_args(a, name.c_str(), {"sep"}, &p));
    if (p[0] == nullptr || !p[0]->is_string() || p[0]->str().empty()) return type_error("partition() needs a non-empty str separator");
    const std::string& sep = p[0]->str();
    const size_t hit = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (hit == std::string::npos) {
      const Value e = Value::string("");
      return name == "partition" ? Value::tuple({self, e, e}) : Value::tuple({e, e, self});
    }
    return Value::tuple({Value::string(s.substr(0, hit)), *p[0], Value::string(s.substr(hit + sep.size()))});
  }
  if (name == "removeprefix" || name == "removesuffix") {
    OX_TRY(bind_args(a, name.c_str(), {"affix"}, &p));
    if (p[0] == nullptr || !p[0]->is_string()) return type_error(name + "() argument must be str");
    const std::string& x = p[0]->str();
    if (name == "removeprefix") return Value::string(s.compare(0, x.size(), x) == 0 ? s.substr(x.size()) : s);
    const bool ends = x.size() <= s.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
    return Value::string(ends && !x.empty() ? s.substr(0, s.size() - x.size()) : s);
  }
  return str_method_no_args(self, a, name);
}

Result<Value> dict_method(Interp& in, const Value& self, CallArgs& a, const std::string& name) {
  std::vector<const Value*> p;
  if (name == "get") {
    OX_TRY(bind_args(a, "get", {"key", "default"}, &p));
    if (p[0] == nullptr) return type_error("get expected at least 1 argument, got 0");
    if (!hash_key(*p[0])) return type_error(strfmt("unhashable type: '%s'", type_name(*p[0])));
    if (const Value* v = self.dict().find(*p[0])) return *v;
    return p[1] != nullptr ? *p[1] : Value::none();
  }
  OX_TRY(bind_args(a, name.c_str(), {}, &p));
  if (name == "copy") return self;
  ValueList out;
  for (const auto& [k, v] : self.dict().entries()) {
    if (name == "keys") out.push_back(k);
    if (name == "values") out.push_back(v);
    if (name == "items") out.push_back(Value::tuple({k, v}));
  }
  return Value::list(std::move(out));
}

Result<Value> list_method(Interp& in, const Value& self, CallArgs& a, const std::string& name) {
  std::vector<const Value*> p;
  if (name == "copy") {
    OX_TRY(bind_args(a, name.c_str(), {}, &p));
    return self;
  }
  OX_TRY(bind_args(a, name.c_str(), {"value"}, &p));
  if (p[0] == nullptr) return type_error(name + "() takes exactly one argument");
  int64_t n = 0;
  const ValueList& items = self.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (!equals(items[i], *p[0])) continue;
    if (name == "index") return Value::integer(static_cast<int64_t>(i));
    ++n;
  }
  if (name == "index") return type_error(repr(*p[0]) + " is not in list");
  return Value::integer(n);
}

bool in_list(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

Value bind_named(const Value& self, const std::string& name,
                 Result<Value> (*m)(Interp&, const Value&, CallArgs&, const std::string&)) {
  auto c = std::make_shared<Callable>();
  c->name = name;
  c->depth = self.depth() + 1;
  c->fn = [self, name, m](Interp& in, CallArgs& a) { return m(in, self, a, name); };
  return Value::object(Kind::kCallable, std::move(c));
}

Value unsafe(const Value& self, const std::string& name) {
  return Value::undefined("access to attribute '" + name + "' of '" + type_name(self) + "' object is unsafe");
}

}  // namespace

std::optional<Value> bound_method(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Kind::kString:
      for (const char* m : kStrMethods) {
        if (name == m) return bind_named(obj, name, str_method);
      }
      return std::nullopt;
    case Kind::kDict:
      if (in_list(name, {"items", "keys", "values", "get", "copy"})) return bind_named(obj, name, dict_method);
      if (in_list(name, {"pop", "popitem", "setdefault", "update", "clear"})) return unsafe(obj, name);
      return std::nullopt;
    case Kind::kList:
    case Kind::kTuple:
      if (in_list(name, {"index", "count"}) || (obj.kind() == Kind::kList && name == "copy")) {
        return bind_named(obj, name, list_method);
      }
      if (obj.kind() == Kind::kList && in_list(name, {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"})) {
        return unsafe(obj, name);
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace ox::chat
