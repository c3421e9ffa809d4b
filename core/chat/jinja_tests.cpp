// jinja2's tests (`x is defined`, `x is string`, `n is divisibleby 3`, ...) and the argument
// binding and error helpers every builtin shares.
#include <cmath>
#include <cstring>

#include "core/chat/builtins.h"
#include "core/chat/unicode.h"

namespace ox::chat {

Status type_error(const std::string& msg) { return error(ErrorCode::kInvalidFile, msg); }

Status undefined_error(const Value& undefined) {
  return error(ErrorCode::kInvalidFile, undefined.str().empty() ? std::string("value is undefined") : undefined.str());
}

Status bind_args(const CallArgs& args, const char* fn, std::initializer_list<const char*> params,
                 std::vector<const Value*>* out) {
  out->assign(params.size(), nullptr);
  if (args.args.size() > params.size()) {
    return type_error(strfmt("%s() takes at most %zu argument(s) (%zu given)", fn, params.size(), args.args.size()));
  }
  for (size_t i = 0; i < args.args.size(); ++i) (*out)[i] = &args.args[i];
  for (const auto& [key, value] : args.kwargs) {
    size_t i = 0;
    for (const char* p : params) {
      if (key == p) break;
      ++i;
    }
    if (i == params.size()) return type_error(strfmt("%s() got an unexpected keyword argument '%s'", fn, key.c_str()));
    if ((*out)[i] != nullptr) return type_error(strfmt("%s() got multiple values for argument '%s'", fn, key.c_str()));
    (*out)[i] = &value;
  }
  return Status::ok();
}

namespace {

const char* const kTests[] = {
    "defined", "undefined", "none",     "boolean",     "false",   "true",     "integer",  "float",
    "number",  "string",    "mapping",  "iterable",    "sequence", "callable", "sameas",  "escaped",
    "lower",   "upper",     "odd",      "even",        "divisibleby", "eq",    "equalto", "==",
    "ne",      "!=",        "lt",       "lessthan",    "<",       "le",       "<=",       "gt",
    "greaterthan", ">",     "ge",       ">=",          "in",      "filter",   "test",
};

Result<bool> compare_test(std::string_view name, const Value& a, const Value& b) {
  if (name == "eq" || name == "equalto" || name == "==") return equals(a, b);
  if (name == "ne" || name == "!=") return !equals(a, b);
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  OX_ASSIGN_OR_RETURN(int c, compare(a, b));
  if (name == "lt" || name == "lessthan" || name == "<") return c < 0;
  if (name == "le" || name == "<=") return c <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return c > 0;
  return c >= 0;
}

Result<bool> modulo_test(const Value& v, const Value& by, int64_t want) {
  if (v.is_undefined()) return undefined_error(v);
  if (!v.is_number() || !by.is_number()) {
    return type_error(strfmt("unsupported operand type(s) for %%: '%s' and '%s'", type_name(v), type_name(by)));
  }
  if (v.kind() == Kind::kFloat || by.kind() == Kind::kFloat) {
    if (by.get_float() == 0.0) return type_error("float modulo");
    double m = std::fmod(v.get_float(), by.get_float());
    if (m != 0.0 && ((m < 0) != (by.get_float() < 0))) m += by.get_float();
    return m == static_cast<double>(want);
  }
  if (by.get_int() == 0) return type_error("integer division or modulo by zero");
  int64_t m = v.get_int() % by.get_int();
  if (m != 0 && ((m < 0) != (by.get_int() < 0))) m += by.get_int();
  return m == want;
}

// jinja2's lower/upper tests look at str(value), so "{'x': 'y'}" is lower case.
bool case_test(const Value& v, bool upper) {
  bool any = false;
  const std::string s = to_str(v);
  size_t pos = 0;
  while (pos < s.size()) {
    const uint32_t cp = utf8::decode(s, &pos);
    if (utf8::is_upper(cp) || utf8::is_lower(cp)) {
      any = true;
      if (upper ? utf8::is_lower(cp) : utf8::is_upper(cp)) return false;
    }
  }
  return any;
}

}  // namespace

bool is_test_name(std::string_view name) {
  for (const char* t : kTests) {
    if (name == t) return true;
  }
  return false;
}

Result<bool> call_test(Interp& in, std::string_view name, const Value& v, CallArgs& args) {
  const Kind k = v.kind();
  std::vector<const Value*> p;
  const bool one_arg = name == "sameas" || name == "divisibleby" || name == "in" || name == "eq" || name == "equalto" ||
                       name == "==" || name == "ne" || name == "!=" || name == "lt" || name == "lessthan" ||
                       name == "<" || name == "le" || name == "<=" || name == "gt" || name == "greaterthan" ||
                       name == ">" || name == "ge" || name == ">=";
  if (one_arg) {
    OX_TRY(bind_args(args, std::string(name).c_str(), {"other"}, &p));
    if (p[0] == nullptr) return type_error(strfmt("test '%.*s' needs an argument", static_cast<int>(name.size()), name.data()));
    const Value& other = *p[0];
    if (name == "sameas") {
      if (k != other.kind()) return false;
      if (k == Kind::kNone || k == Kind::kUndefined) return true;
      if (k == Kind::kBool || k == Kind::kInt) return v.get_int() == other.get_int() && (k == Kind::kBool || (v.get_int() >= -5 && v.get_int() <= 256));
      if (k == Kind::kString) return &v.str() == &other.str();
      if (v.is_sequence()) return v.list_data() == other.list_data();
      if (k == Kind::kDict) return &v.dict() == &other.dict();
      return v.identity() == other.identity();
    }
    if (name == "divisibleby") return modulo_test(v, other, 0);
    if (name == "in") {
      if (other.is_string()) {
        if (!v.is_string()) return type_error(strfmt("'in <string>' requires string as left operand, not %s", type_name(v)));
        return other.str().find(v.str()) != std::string::npos;
      }
      if (other.is_dict()) return other.dict().find(v) != nullptr;
      if (other.is_sequence() || other.kind() == Kind::kIterator) {
        for (const Value& item : other.items()) {
          if (equals(item, v)) return true;
        }
        return false;
      }
      if (other.is_undefined()) return false;
      return type_error(strfmt("argument of type '%s' is not iterable", type_name(other)));
    }
    return compare_test(name, v, other);
  }
  OX_TRY(bind_args(args, std::string(name).c_str(), {}, &p));
  if (name == "filter" || name == "test") {
    if (!v.is_string()) return false;
    return name == "filter" ? is_filter_name(v.str()) : is_test_name(v.str());
  }
  if (name == "defined") return k != Kind::kUndefined;
  if (name == "undefined") return k == Kind::kUndefined;
  if (name == "none") return k == Kind::kNone;
  if (name == "boolean") return k == Kind::kBool;
  if (name == "false") return k == Kind::kBool && !v.get_bool();
  if (name == "true") return k == Kind::kBool && v.get_bool();
  if (name == "integer") return k == Kind::kInt;
  if (name == "float") return k == Kind::kFloat;
  if (name == "number") return v.is_number();
  if (name == "string") return k == Kind::kString;
  if (name == "mapping") return k == Kind::kDict;
  // Undefined defines __iter__, __len__ and __getitem__, so it passes both of these.
  if (name == "iterable") {
    return k == Kind::kUndefined || k == Kind::kString || v.is_sequence() || k == Kind::kDict || k == Kind::kLoop ||
           k == Kind::kIterator;
  }
  if (name == "sequence") return k == Kind::kUndefined || k == Kind::kString || v.is_sequence() || k == Kind::kDict;
  if (name == "callable") return k == Kind::kCallable || k == Kind::kUndefined || k == Kind::kLoop;
  if (name == "escaped") return false;
  if (name == "lower") return case_test(v, false);
  if (name == "upper") return case_test(v, true);
  if (name == "odd") return modulo_test(v, Value::integer(2), 1);
  if (name == "even") return modulo_test(v, Value::integer(2), 0);
  (void)in;
  return type_error(strfmt("no test named '%.*s'", static_cast<int>(name.size()), name.data()));
}

}  // namespace ox::chat
