// Value construction and Python's object protocol for it: truthiness, ==, <, hashing of dict
// keys, str() and repr() (including Python's shortest round-trip float repr).
#include "core/chat/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/chat/unicode.h"

namespace ox::chat {

namespace {
const std::string kEmpty;
const ValueList kNoItems;
const Dict kNoDict;
const std::shared_ptr<const ListData> kNoList = std::make_shared<ListData>();
}  // namespace

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.ptr_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.n_.b = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.n_.i = i;
  return v;
}

Value Value::real(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.n_.f = f;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.ptr_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

namespace {
std::shared_ptr<const ListData> make_list(ValueList items) {
  auto data = std::make_shared<ListData>();
  uint32_t depth = 0;
  for (const Value& item : items) depth = std::max(depth, item.depth());
  data->depth = depth + 1;
  data->items = std::move(items);
  return data;
}
}  // namespace

Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::kList;
  v.ptr_ = make_list(std::move(items));
  return v;
}

Value Value::tuple(ValueList items) {
  Value v;
  v.kind_ = Kind::kTuple;
  v.ptr_ = make_list(std::move(items));
  return v;
}

Value Value::iterator(ValueList items) {
  Value v;
  v.kind_ = Kind::kIterator;
  v.ptr_ = make_list(std::move(items));
  return v;
}

Value Value::dict(Dict d) {
  Value v;
  v.kind_ = Kind::kDict;
  v.ptr_ = std::make_shared<const Dict>(std::move(d));
  return v;
}

Value Value::object(Kind kind, std::shared_ptr<Object> obj) {
  Value v;
  v.kind_ = kind;
  v.ptr_ = std::move(obj);
  return v;
}

const std::string& Value::str() const {
  if ((kind_ != Kind::kString && kind_ != Kind::kUndefined) || !ptr_) return kEmpty;
  return *static_cast<const std::string*>(ptr_.get());
}

const ValueList& Value::items() const {
  if (kind_ != Kind::kList && kind_ != Kind::kTuple && kind_ != Kind::kIterator) return kNoItems;
  return static_cast<const ListData*>(ptr_.get())->items;
}

std::shared_ptr<const ListData> Value::list_data() const {
  if (kind_ != Kind::kList && kind_ != Kind::kTuple && kind_ != Kind::kIterator) return kNoList;
  return std::static_pointer_cast<const ListData>(ptr_);
}

const Dict& Value::dict() const {
  if (kind_ != Kind::kDict) return kNoDict;
  return *static_cast<const Dict*>(ptr_.get());
}

uint32_t Value::depth() const {
  switch (kind_) {
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kIterator: return static_cast<const ListData*>(ptr_.get())->depth;
    case Kind::kDict: return static_cast<const Dict*>(ptr_.get())->depth();
    case Kind::kCallable: return as<Callable>()->depth;
    case Kind::kLoop: return as<LoopState>()->items->depth + 1;
    default: return 0;
  }
}

Status Dict::set(Value key, Value value) {
  std::optional<std::string> hk = hash_key(key);
  if (!hk) return error(ErrorCode::kInvalidArgument, strfmt("unhashable type: '%s'", type_name(key)));
  depth_ = std::max(depth_, std::max(key.depth(), value.depth()) + 1);
  auto it = index_.find(*hk);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return Status::ok();
  }
  index_.emplace(std::move(*hk), static_cast<uint32_t>(entries_.size()));
  entries_.emplace_back(std::move(key), std::move(value));
  return Status::ok();
}

const Value* Dict::find(const Value& key) const {
  std::optional<std::string> hk = hash_key(key);
  if (!hk) return nullptr;
  auto it = index_.find(*hk);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Dict::find(std::string_view key) const {
  std::string hk;
  hk.reserve(key.size() + 1);
  hk += 's';
  hk += key;
  auto it = index_.find(hk);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Namespace::find(std::string_view name) const {
  for (const auto& [k, v] : attrs) {
    if (k == name) return &v;
  }
  return nullptr;
}

void Namespace::set(const std::string& name, Value v) {
  for (auto& [k, old] : attrs) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  attrs.emplace_back(name, std::move(v));
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return v.get_bool();
    case Kind::kInt: return v.get_int() != 0;
    case Kind::kFloat: return v.get_float() != 0.0;
    case Kind::kString: return !v.str().empty();
    case Kind::kList:
    case Kind::kTuple: return !v.items().empty();
    case Kind::kDict: return v.dict().size() != 0;
    default: return true;
  }
}

namespace {

bool numbers_equal(const Value& a, const Value& b) {
  if (a.kind() != Kind::kFloat && b.kind() != Kind::kFloat) return a.get_int() == b.get_int();
  if (a.kind() == Kind::kFloat && b.kind() == Kind::kFloat) return a.get_float() == b.get_float();
  // Mixed int/float: exact comparison, as Python does.
  const double f = a.kind() == Kind::kFloat ? a.get_float() : b.get_float();
  const int64_t i = a.kind() == Kind::kFloat ? b.get_int() : a.get_int();
  if (!std::isfinite(f) || f != std::floor(f)) return false;
  if (f < -9.2233720368547758e18 || f >= 9.2233720368547758e18) return false;
  return static_cast<int64_t>(f) == i;
}

}  // namespace

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.str() == b.str();
    case Kind::kList:
    case Kind::kTuple: {
      const ValueList& x = a.items();
      const ValueList& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const Dict& x = a.dict();
      const Dict& y = b.dict();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.entries()) {
        const Value* other = y.find(k);
        if (other == nullptr || !equals(v, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

Result<int> compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() != Kind::kFloat && b.kind() != Kind::kFloat) {
      return a.get_int() < b.get_int() ? -1 : (a.get_int() > b.get_int() ? 1 : 0);
    }
    const double x = a.get_float();
    const double y = b.get_float();
    return x < y ? -1 : (x > y ? 1 : 0);  // NaN compares as "equal": neither < nor >
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.str().compare(b.str());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.kind() == b.kind() && a.is_sequence()) {
    const ValueList& x = a.items();
    const ValueList& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return error(ErrorCode::kInvalidArgument, strfmt("'<' not supported between instances of '%s' and '%s'",
                                                   type_name(a), type_name(b)));
}

std::optional<std::string> hash_key(const Value& v) {
  switch (v.kind()) {
    case Kind::kNone: return std::string("N");
    case Kind::kBool:
    case Kind::kInt: return strfmt("i%lld", static_cast<long long>(v.get_int()));
    case Kind::kFloat: {
      const double f = v.get_float();
      if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < 9.2e18) {
        return strfmt("i%lld", static_cast<long long>(f));
      }
      return strfmt("f%s", float_repr(f).c_str());
    }
    case Kind::kString: return "s" + v.str();
    case Kind::kTuple: {
      std::string out = "t(";
      for (const Value& item : v.items()) {
        std::optional<std::string> k = hash_key(item);
        if (!k) return std::nullopt;
        out += std::to_string(k->size()) + ":" + *k;
      }
      return out + ")";
    }
    case Kind::kCallable:
    case Kind::kNamespace:
    case Kind::kIterator:
    case Kind::kLoop: return strfmt("o%p", static_cast<const void*>(v.identity()));
    default: return std::nullopt;
  }
}

std::string float_repr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  if (f == 0.0) return std::signbit(f) ? "-0.0" : "0.0";
  // Shortest digit string that reads back as the same double (printf is correctly rounded on
  // glibc and musl, so the first precision that round-trips gives Python's repr digits).
  char buf[48];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  std::string s(buf);
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  const size_t e = s.find('e');
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::atoi(s.c_str() + e + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp10 >= -5 + 1 && exp10 < 16) {
    if (exp10 >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exp10 + 1));
      while (int_part.size() < static_cast<size_t>(exp10 + 1)) int_part += '0';
      std::string frac = digits.size() > static_cast<size_t>(exp10 + 1) ? digits.substr(exp10 + 1) : "0";
      out = int_part + "." + frac;
    } else {
      out = "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += strfmt("e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  }
  return sign + out;
}

std::string repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    const uint32_t cp = utf8::decode(s, &pos);
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp == static_cast<uint32_t>(quote)) {
      out += '\\';
      out += quote;
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) {
      out += strfmt("\\x%02x", cp);
    } else if ((cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) ||
               cp == 0x3000 || cp == 0xFEFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out += strfmt("\\u%04x", cp);
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  out += quote;
  return out;
}

namespace {

// Containers nest at most ~250 deep, but namespaces can hold themselves or long chains of each
// other; printing stops descending past this depth, as Python's repr prints "{...}" for cycles.
constexpr int kMaxPrintDepth = 200;
thread_local int print_depth = 0;

struct PrintDepth {
  PrintDepth() { ++print_depth; }
  ~PrintDepth() { --print_depth; }
  bool too_deep() const { return print_depth > kMaxPrintDepth; }
};

std::string sequence_str(const Value& v) {
  const bool tuple = v.kind() == Kind::kTuple;
  std::string out = tuple ? "(" : "[";
  const ValueList& items = v.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += repr(items[i]);
  }
  if (tuple && items.size() == 1) out += ",";
  out += tuple ? ")" : "]";
  return out;
}

std::string dict_str(const Dict& d) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : d.entries()) {
    if (!first) out += ", ";
    first = false;
    out += repr(k) + ": " + repr(v);
  }
  return out + "}";
}

}  // namespace

std::string to_str(const Value& v) {
  const PrintDepth guard;
  if (guard.too_deep()) return "...";
  switch (v.kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return v.get_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(v.get_int());
    case Kind::kFloat: return float_repr(v.get_float());
    case Kind::kString: return v.str();
    case Kind::kList:
    case Kind::kTuple: return sequence_str(v);
    case Kind::kDict: return dict_str(v.dict());
    case Kind::kIterator: return "<generator object>";
    case Kind::kCallable: {
      const Callable* c = v.as<Callable>();
      if (c->macro != nullptr) return "<Macro " + repr_string(c->name) + ">";
      return "<built-in function " + c->name + ">";
    }
    case Kind::kNamespace: {
      if (v.as<Namespace>()->printing) return "<Namespace {...}>";
      v.as<Namespace>()->printing = true;
      Dict d;
      for (const auto& [k, item] : v.as<Namespace>()->attrs) (void)d.set(Value::string(k), item);
      std::string out = "<Namespace " + dict_str(d) + ">";
      v.as<Namespace>()->printing = false;
      return out;
    }
    case Kind::kLoop: {
      const LoopState* l = v.as<LoopState>();
      return strfmt("<LoopContext %lld/%llu>", static_cast<long long>(l->index0 + 1),
                    static_cast<unsigned long long>(l->items->items.size()));
    }
  }
  return "";
}

std::string repr(const Value& v) {
  if (v.is_string()) return repr_string(v.str());
  if (v.is_undefined()) return "Undefined";
  return to_str(v);
}

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return "list";
    case Kind::kTuple: return "tuple";
    case Kind::kIterator: return "generator";
    case Kind::kDict: return "dict";
    case Kind::kCallable: return v.as<Callable>()->macro != nullptr ? "Macro" : "builtin_function_or_method";
    case Kind::kNamespace: return "Namespace";
    case Kind::kLoop: return "LoopContext";
  }
  return "object";
}

}  // namespace ox::chat
