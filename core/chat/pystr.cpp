// Python str operations on UTF-8 text, counting code points where Python does: split,
// replace, title/capitalize, splitlines, indent, find/count, and %-formatting.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/chat/builtins.h"
#include "core/chat/unicode.h"

namespace ox::chat::pystr {

namespace {

bool cased(uint32_t cp) { return utf8::is_upper(cp) || utf8::is_lower(cp); }

// Byte offset of code point index i (clamped) in s.
size_t byte_offset(std::string_view s, int64_t i) {
  if (i <= 0) return 0;
  size_t pos = 0;
  while (pos < s.size() && i > 0) {
    utf8::decode(s, &pos);
    --i;
  }
  return pos;
}

}  // namespace

std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep == nullptr) {
    size_t pos = 0;
    auto skip_space = [&] {
      while (pos < s.size()) {
        size_t next = pos;
        if (!utf8::is_space(utf8::decode(s, &next))) break;
        pos = next;
      }
    };
    skip_space();
    while (pos < s.size()) {
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        out.emplace_back(s.substr(pos));  // the rest, leading whitespace already skipped
        return out;
      }
      const size_t start = pos;
      while (pos < s.size()) {
        size_t next = pos;
        if (utf8::is_space(utf8::decode(s, &next))) break;
        pos = next;
      }
      out.emplace_back(s.substr(start, pos - start));
      skip_space();
    }
    return out;
  }
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t hit = s.find(*sep, start);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(start, hit - start));
    start = hit + sep->size();
  }
  out.emplace_back(s.substr(start));
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::string* sep, int64_t maxsplit) {
  if (maxsplit < 0) return split(s, sep, -1);
  std::vector<std::string> rev;
  if (sep == nullptr) {
    size_t end = s.size();
    auto prev_start = [&](size_t p) {
      size_t q = p - 1;
      while (q > 0 && (static_cast<uint8_t>(s[q]) & 0xC0) == 0x80) --q;
      return q;
    };
    auto space_before = [&](size_t p) {
      size_t q = prev_start(p);
      size_t probe = q;
      return utf8::is_space(utf8::decode(s, &probe));
    };
    while (end > 0 && space_before(end)) end = prev_start(end);
    while (end > 0) {
      if (static_cast<int64_t>(rev.size()) == maxsplit) {
        rev.emplace_back(s.substr(0, end));
        break;
      }
      size_t start = end;
      while (start > 0 && !space_before(start)) start = prev_start(start);
      rev.emplace_back(s.substr(start, end - start));
      end = start;
      while (end > 0 && space_before(end)) end = prev_start(end);
    }
  } else {
    size_t end = s.size();
    while (static_cast<int64_t>(rev.size()) < maxsplit && end >= sep->size()) {
      const size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      rev.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    rev.emplace_back(s.substr(0, end));
  }
  return std::vector<std::string>(rev.rbegin(), rev.rend());
}

Result<std::string> replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count,
                            uint64_t max_bytes) {
  std::string out;
  if (old.empty()) {  // Python inserts `repl` before every code point and at the end
    const uint64_t n = utf8::length(s) + 1;
    const uint64_t k = count < 0 ? n : std::min<uint64_t>(n, static_cast<uint64_t>(count));
    if (s.size() + k * repl.size() > max_bytes) return error(ErrorCode::kTooLarge, "replace() result too large");
    size_t pos = 0;
    uint64_t done = 0;
    while (true) {
      if (done < k) {
        out += repl;
        ++done;
      }
      if (pos >= s.size()) break;
      const size_t start = pos;
      utf8::decode(s, &pos);
      out.append(s.substr(start, pos - start));
    }
    return out;
  }
  uint64_t hits = 0;
  for (size_t p = s.find(old); p != std::string_view::npos && (count < 0 || static_cast<int64_t>(hits) < count);
       p = s.find(old, p + old.size())) {
    ++hits;
  }
  if (s.size() + hits * repl.size() > max_bytes + hits * old.size()) {
    return error(ErrorCode::kTooLarge, "replace() result too large");
  }
  size_t start = 0;
  for (uint64_t i = 0; i < hits; ++i) {
    const size_t p = s.find(old, start);
    out.append(s.substr(start, p - start));
    out.append(repl);
    start = p + old.size();
  }
  out.append(s.substr(start));
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  size_t pos = 0;
  while (pos < s.size()) {
    const uint32_t cp = utf8::decode(s, &pos);
    utf8::append(&out, prev_cased ? utf8::to_lower(cp) : utf8::to_upper(cp));
    prev_cased = cased(cp);
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  size_t pos = 0;
  bool first = true;
  while (pos < s.size()) {
    const uint32_t cp = utf8::decode(s, &pos);
    utf8::append(&out, first ? utf8::to_upper(cp) : utf8::to_lower(cp));
    first = false;
  }
  return out;
}

std::string jinja_title(std::string_view s) {
  // Words start after runs of '-', whitespace, '(', '{', '[' or '<'; each word gets its first
  // character upper-cased and the rest lower-cased.
  std::string out;
  bool word_start = true;
  size_t pos = 0;
  while (pos < s.size()) {
    const uint32_t cp = utf8::decode(s, &pos);
    const bool sep = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || utf8::is_space(cp);
    if (sep) {
      utf8::append(&out, cp);
      word_start = true;
      continue;
    }
    utf8::append(&out, word_start ? utf8::to_upper(cp) : utf8::to_lower(cp));
    word_start = false;
  }
  return out;
}

std::string swapcase(std::string_view s) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    const uint32_t cp = utf8::decode(s, &pos);
    utf8::append(&out, utf8::is_upper(cp) ? utf8::to_lower(cp) : utf8::to_upper(cp));
  }
  return out;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  size_t start = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t here = pos;
    const uint32_t cp = utf8::decode(s, &pos);
    const bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || (cp >= 0x1C && cp <= 0x1E) ||
                     cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!brk) continue;
    if (cp == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    out.emplace_back(s.substr(start, (keepends ? pos : here) - start));
    start = pos;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

std::string indent(std::string_view s, const std::string& pad, bool first, bool blank) {
  std::string text(s);
  text += '\n';  // jinja2 appends a newline so splitlines keeps a trailing empty line
  std::vector<std::string> lines = splitlines(text, false);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) rv += "\n" + pad;
      rv += lines[i];
    }
  } else if (!lines.empty()) {
    rv = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += '\n';
      if (!lines[i].empty()) rv += pad;
      rv += lines[i];
    }
  }
  if (first) rv = pad + rv;
  return rv;
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(utf8::length(s)) + 1;
  int64_t n = 0;
  for (size_t p = s.find(sub); p != std::string_view::npos; p = s.find(sub, p + sub.size())) ++n;
  return n;
}

int64_t find(std::string_view s, std::string_view sub, int64_t start, int64_t end, bool last) {
  const auto len = static_cast<int64_t>(utf8::length(s));
  if (start < 0) start = std::max<int64_t>(0, start + len);
  if (end < 0) end = std::max<int64_t>(0, end + len);
  end = std::min(end, len);
  if (start > end) return -1;
  const size_t b = byte_offset(s, start);
  const size_t e = byte_offset(s, end);
  const std::string_view window = s.substr(b, e - b);
  const size_t hit = last ? window.rfind(sub) : window.find(sub);
  if (hit == std::string_view::npos) return -1;
  return start + static_cast<int64_t>(utf8::length(window.substr(0, hit)));
}

bool is_all(std::string_view s, bool (*pred)(uint32_t)) {
  if (s.empty()) return false;
  size_t pos = 0;
  while (pos < s.size()) {
    if (!pred(utf8::decode(s, &pos))) return false;
  }
  return true;
}

namespace {

std::string pad_to(std::string s, int64_t width, bool left_align, char fill) {
  const auto len = static_cast<int64_t>(utf8::length(s));
  if (width <= len) return s;
  const std::string pad(static_cast<size_t>(width - len), fill);
  return left_align ? s + pad : pad + s;
}

}  // namespace

Result<std::string> percent_format(std::string_view fmt, const Value& args) {
  std::vector<Value> positional;
  const Value* mapping = nullptr;
  // Python treats a non-tuple argument with __getitem__ (dict, list, Undefined) as a mapping:
  // no "not all arguments converted" error when the format has no fields for it.
  if (args.kind() == Kind::kTuple) {
    positional = args.items();
  } else if (args.is_dict() || args.kind() == Kind::kList || args.is_undefined()) {
    mapping = &args;
    positional.push_back(args);
  } else {
    positional.push_back(args);
  }
  size_t next_arg = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) return type_error("incomplete format");
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string_view::npos || mapping == nullptr || !mapping->is_dict()) return type_error("format requires a mapping");
      const Value* v = mapping->dict().find(fmt.substr(i + 1, close - i - 1));
      if (v == nullptr) return type_error("format key not found: " + std::string(fmt.substr(i + 1, close - i - 1)));
      arg = v;
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos) flags += fmt[i++];
    int64_t width = 0;
    while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') width = std::min<int64_t>(width * 10 + (fmt[i++] - '0'), 1 << 20);
    int64_t precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = 0;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') precision = std::min<int64_t>(precision * 10 + (fmt[i++] - '0'), 100);
    }
    if (i >= fmt.size()) return type_error("incomplete format");
    const char conv = fmt[i];
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (arg == nullptr) {
      if (next_arg >= positional.size()) return type_error("not enough arguments for format string");
      arg = &positional[next_arg++];
    }
    const bool left = flags.find('-') != std::string::npos;
    std::string piece;
    switch (conv) {
      case 's':
      case 'r':
      case 'a': {
        piece = conv == 's' ? to_str(*arg) : repr(*arg);
        if (precision >= 0) piece = piece.substr(0, byte_offset(piece, precision));
        out += pad_to(std::move(piece), width, left, ' ');
        continue;
      }
      case 'd':
      case 'i':
      case 'x':
      case 'X':
      case 'o':
      case 'c': {
        if (!arg->is_number()) return type_error(strfmt("%%%c format: a real number is required, not %s", conv, type_name(*arg)));
        const double f = arg->get_float();
        const long long n = arg->kind() == Kind::kFloat ? static_cast<long long>(std::trunc(f)) : static_cast<long long>(arg->get_int());
        if (conv == 'c') {
          std::string ch;
          utf8::append(&ch, static_cast<uint32_t>(n));
          out += pad_to(ch, width, left, ' ');
          continue;
        }
        const std::string spec = "%" + flags + std::to_string(width) + (precision >= 0 ? "." + std::to_string(precision) : "") +
                                 "ll" + (conv == 'i' ? 'd' : conv);
        piece = strfmt(spec.c_str(), n);
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G': {
        if (!arg->is_number()) return type_error(strfmt("must be real number, not %s", type_name(*arg)));
        const std::string spec = "%" + flags + std::to_string(width) + "." + std::to_string(precision >= 0 ? precision : 6) + conv;
        piece = strfmt(spec.c_str(), arg->get_float());
        break;
      }
      default: return type_error(strfmt("unsupported format character '%c'", conv));
    }
    out += piece;
  }
  if (mapping == nullptr && next_arg < positional.size()) return type_error("not all arguments converted during string formatting");
  return out;
}

}  // namespace ox::chat::pystr

namespace ox::chat::pystr {

namespace {

// The format-spec mini-language: [[fill]align][sign][#][0][width][,|_][.precision][type].
struct FormatSpec {
  std::string fill = " ";
  char align = '\0';
  char sign = '-';
  bool alt = false;
  int64_t width = 0;
  char grouping = '\0';
  int64_t precision = -1;
  char type = '\0';
};

Result<FormatSpec> parse_spec(std::string_view spec) {
  FormatSpec f;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  size_t next = 0;
  std::string first;
  utf8::append(&first, utf8::decode(spec, &next));
  if (next < spec.size() && is_align(spec[next])) {
    f.fill = first;
    f.align = spec[next];
    i = next + 1;
  } else if (is_align(spec[0])) {
    f.align = spec[0];
    i = 1;
  }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) f.sign = spec[i++];
  if (i < spec.size() && spec[i] == '#') {
    f.alt = true;
    ++i;
  }
  if (i < spec.size() && spec[i] == '0') {
    if (f.align == '\0') {
      f.fill = "0";
      f.align = '=';
    }
    ++i;
  }
  while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') f.width = std::min<int64_t>(f.width * 10 + (spec[i++] - '0'), 1 << 20);
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) f.grouping = spec[i++];
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    f.precision = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') f.precision = std::min<int64_t>(f.precision * 10 + (spec[i++] - '0'), 100);
  }
  if (i < spec.size()) f.type = spec[i++];
  if (i != spec.size()) return type_error("invalid format specifier");
  return f;
}

// Digits of a number without its sign (*negative reports the sign); false when the value is
// a char ('c') that must not get a sign or grouping.
Result<bool> format_number(const Value& v, const FormatSpec& f, std::string* body, bool* negative) {
  const bool as_int = v.kind() != Kind::kFloat && (f.type == '\0' || std::string_view("dnbxXoc").find(f.type) != std::string_view::npos);
  if (as_int) {
    if (f.precision >= 0) return type_error("Precision not allowed in integer format specifier");
    if (f.type == 'c') {
      if (v.get_int() < 0 || v.get_int() > 0x10FFFF) return type_error("%c arg not in range(0x110000)");
      utf8::append(body, static_cast<uint32_t>(v.get_int()));
      return false;
    }
    const int64_t n = v.get_int();
    *negative = n < 0;
    const unsigned long long mag = *negative ? 0ULL - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n);
    if (f.type == 'x' || f.type == 'X' || f.type == 'o') {
      *body = strfmt(f.type == 'x' ? "%llx" : (f.type == 'X' ? "%llX" : "%llo"), mag);
      if (f.alt) *body = std::string(f.type == 'o' ? "0o" : (f.type == 'X' ? "0X" : "0x")) + *body;
    } else if (f.type == 'b') {
      for (unsigned long long m = mag; m > 0; m >>= 1) body->insert(body->begin(), static_cast<char>('0' + (m & 1)));
      if (body->empty()) *body = "0";
      if (f.alt) *body = "0b" + *body;
    } else {
      *body = std::to_string(mag);
    }
    return true;
  }
  if (f.type != '\0' && std::string_view("eEfFgG%n").find(f.type) == std::string_view::npos) {
    return type_error(strfmt("Unknown format code '%c' for object of type 'float'", f.type));
  }
  double x = v.get_float();
  *negative = std::signbit(x) && !std::isnan(x);
  x = std::fabs(x);
  const int precision = static_cast<int>(f.precision < 0 ? 6 : f.precision);
  if (f.type == '\0' && f.precision < 0) {
    *body = float_repr(x);
  } else if (f.type == '%') {
    *body = strfmt("%.*f%%", precision, x * 100.0);
  } else {
    const char t = f.type == '\0' || f.type == 'n' ? 'g' : f.type;
    const std::string fmt = std::string("%") + (f.alt ? "#" : "") + ".*" + t;
    *body = strfmt(fmt.c_str(), precision, x);
  }
  return true;
}

// format(value, spec) as str.format applies it to one field.
Result<std::string> format_spec(const Value& v, std::string_view spec) {
  if (spec.empty()) return to_str(v);
  OX_ASSIGN_OR_RETURN(FormatSpec f, parse_spec(spec));
  std::string body;
  std::string prefix;
  if (v.is_string()) {
    if (f.type != '\0' && f.type != 's') return type_error(strfmt("Unknown format code '%c' for object of type 'str'", f.type));
    if (f.grouping != '\0') return type_error(strfmt("Cannot specify '%c' with 's'.", f.grouping));
    body = v.str();
    if (f.precision >= 0) body = body.substr(0, byte_offset(body, f.precision));
    if (f.align == '\0') f.align = '<';
  } else if (v.is_number()) {
    bool negative = false;
    OX_ASSIGN_OR_RETURN(bool numeric, format_number(v, f, &body, &negative));
    if (numeric && f.grouping != '\0') {
      size_t end = body.find_first_not_of("0123456789");
      if (end == std::string::npos) end = body.size();
      for (int64_t k = static_cast<int64_t>(end) - 3; k > 0; k -= 3) body.insert(static_cast<size_t>(k), 1, f.grouping);
    }
    if (numeric) prefix = negative ? "-" : (f.sign == '+' ? "+" : (f.sign == ' ' ? " " : ""));
    if (f.align == '\0') f.align = '>';
  } else {
    return type_error(strfmt("unsupported format string passed to %s.__format__", type_name(v)));
  }
  const int64_t len = static_cast<int64_t>(utf8::length(body) + prefix.size());
  if (f.width <= len) return prefix + body;
  const int64_t pad = f.width - len;
  auto fill_n = [&](int64_t n) {
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += f.fill;
    return out;
  };
  switch (f.align) {
    case '<': return prefix + body + fill_n(pad);
    case '^': return fill_n(pad / 2) + prefix + body + fill_n(pad - pad / 2);
    case '=': return prefix + fill_n(pad) + body;
    default: return fill_n(pad) + prefix + body;
  }
}

}  // namespace

Result<std::string> brace_format(std::string_view fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      return type_error("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string_view::npos) return type_error("Single '{' encountered in format string");
    std::string_view field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string_view spec;
    char conv = '\0';
    const size_t colon = field.find(':');
    if (colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    const size_t bang = field.find('!');
    if (bang != std::string_view::npos) {
      if (bang + 2 != field.size()) return type_error("expected ':' after conversion specifier");
      conv = field[bang + 1];
      field = field.substr(0, bang);
    }
    const Value* v = nullptr;
    if (field.empty()) {
      if (auto_index >= args.args.size()) return type_error(strfmt("Replacement index %zu out of range for positional args tuple", auto_index));
      v = &args.args[auto_index++];
    } else if (field.find_first_not_of("0123456789") == std::string_view::npos) {
      const size_t k = static_cast<size_t>(std::strtoull(std::string(field).c_str(), nullptr, 10));
      if (k >= args.args.size()) return type_error(strfmt("Replacement index %zu out of range for positional args tuple", k));
      v = &args.args[k];
    } else {
      for (const auto& [key, value] : args.kwargs) {
        if (key == field) v = &value;
      }
      if (v == nullptr) return type_error("format() missing key '" + std::string(field) + "'");
    }
    Value converted;
    if (conv == 'r' || conv == 'a') {
      converted = Value::string(repr(*v));
      v = &converted;
    } else if (conv == 's') {
      converted = Value::string(to_str(*v));
      v = &converted;
    } else if (conv != '\0') {
      return type_error(strfmt("Unknown conversion specifier %c", conv));
    }
    OX_ASSIGN_OR_RETURN(std::string piece, format_spec(*v, spec));
    out += piece;
  }
  return out;
}

}  // namespace ox::chat::pystr
