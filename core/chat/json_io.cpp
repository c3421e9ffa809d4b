// JSON <-> Value. Input conversion bounds nesting (a hostile context must not overflow the
// stack); output follows Python's json.dumps byte for byte (separators, indent, float repr).
#include "core/chat/json_io.h"

#include <algorithm>
#include <cmath>

#include "core/chat/unicode.h"

namespace ox::chat {

namespace {

constexpr int kMaxJsonDepth = 200;

template <typename Json>
Result<Value> convert(const Json& j, int depth) {
  if (depth > kMaxJsonDepth) {
    return error(ErrorCode::kInvalidArgument, strfmt("template context JSON nests deeper than %d levels", kMaxJsonDepth));
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t u = j.template get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::real(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::real(j.template get<double>());
    case nlohmann::json::value_t::string: return Value::string(j.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& item : j) {
        OX_ASSIGN_OR_RETURN(Value v, convert(item, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) {
        OX_ASSIGN_OR_RETURN(Value v, convert(it.value(), depth + 1));
        OX_TRY(d.set(Value::string(it.key()), std::move(v)));
      }
      return Value::dict(std::move(d));
    }
    case nlohmann::json::value_t::binary: return error(ErrorCode::kInvalidArgument, "binary JSON values are not supported");
  }
  return Value::none();
}

const char* hex = "0123456789abcdef";

void append_u16(std::string* out, uint32_t unit) {
  *out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(hex[(unit >> shift) & 0xF]);
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& o) : o_(o) {
    item_sep_ = o.item_sep ? *o.item_sep : (o.indent ? "," : ", ");
  }

  Status dump(const Value& v, int level) {
    switch (v.kind()) {
      case Kind::kNone: out_ += "null"; return Status::ok();
      case Kind::kBool: out_ += v.get_bool() ? "true" : "false"; return Status::ok();
      case Kind::kInt: out_ += std::to_string(v.get_int()); return Status::ok();
      case Kind::kFloat: out_ += float_text(v.get_float()); return Status::ok();
      case Kind::kString: append_json_string(&out_, v.str(), o_.ensure_ascii); return Status::ok();
      case Kind::kList:
      case Kind::kTuple: return dump_list(v.items(), level);
      case Kind::kDict: return dump_dict(v.dict(), level);
      default: break;
    }
    return error(ErrorCode::kInvalidArgument, strfmt("Object of type %s is not JSON serializable", type_name(v)));
  }

  std::string take() { return std::move(out_); }

 private:
  static std::string float_text(double f) {
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f < 0 ? "-Infinity" : "Infinity";
    return float_repr(f);
  }

  void newline(int level) {
    if (!o_.indent) return;
    out_ += '\n';
    for (int i = 0; i < level; ++i) out_ += *o_.indent;
  }

  Status dump_list(const ValueList& items, int level) {
    if (items.empty()) {
      out_ += "[]";
      return Status::ok();
    }
    out_ += '[';
    newline(level + 1);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) {
        out_ += item_sep_;
        newline(level + 1);
      }
      OX_TRY(dump(items[i], level + 1));
    }
    newline(level);
    out_ += ']';
    return Status::ok();
  }

  static Result<std::string> key_text(const Value& k) {
    switch (k.kind()) {
      case Kind::kString: return k.str();
      case Kind::kNone: return std::string("null");
      case Kind::kBool: return std::string(k.get_bool() ? "true" : "false");
      case Kind::kInt: return std::to_string(k.get_int());
      case Kind::kFloat: return float_text(k.get_float());
      default: break;
    }
    return error(ErrorCode::kInvalidArgument,
                 strfmt("keys must be str, int, float, bool or None, not %s", type_name(k)));
  }

  Status dump_dict(const Dict& d, int level) {
    if (d.size() == 0) {
      out_ += "{}";
      return Status::ok();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [k, v] : d.entries()) {
      OX_ASSIGN_OR_RETURN(std::string key, key_text(k));
      entries.emplace_back(std::move(key), &v);
    }
    if (o_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out_ += '{';
    newline(level + 1);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) {
        out_ += item_sep_;
        newline(level + 1);
      }
      append_json_string(&out_, entries[i].first, o_.ensure_ascii);
      out_ += o_.key_sep;
      OX_TRY(dump(*entries[i].second, level + 1));
    }
    newline(level);
    out_ += '}';
    return Status::ok();
  }

  const JsonDumpOptions& o_;
  std::string item_sep_;
  std::string out_;
};

}  // namespace

Result<Value> value_from_json(const nlohmann::json& j) { return convert(j, 0); }
Result<Value> value_from_json(const nlohmann::ordered_json& j) { return convert(j, 0); }

void append_json_string(std::string* out, std::string_view s, bool ensure_ascii) {
  out->push_back('"');
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    const uint32_t cp = utf8::decode(s, &pos);
    switch (cp) {
      case '"': *out += "\\\""; continue;
      case '\\': *out += "\\\\"; continue;
      case '\n': *out += "\\n"; continue;
      case '\r': *out += "\\r"; continue;
      case '\t': *out += "\\t"; continue;
      case '\b': *out += "\\b"; continue;
      case '\f': *out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20) {
      append_u16(out, cp);
    } else if (ensure_ascii && cp >= 0x80) {
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        append_u16(out, 0xD800 + (v >> 10));
        append_u16(out, 0xDC00 + (v & 0x3FF));
      } else {
        append_u16(out, cp);
      }
    } else {
      out->append(s.substr(start, pos - start));
    }
  }
  out->push_back('"');
}

Result<std::string> dump_json(const Value& v, const JsonDumpOptions& options) {
  Dumper d(options);
  OX_TRY(d.dump(v, 0));
  return d.take();
}

}  // namespace ox::chat
