// Incremental JSON scanning for tool-call parsing: a bracket stack instead of a tree, so a value
// cut anywhere reports "incomplete" rather than "invalid".
#include "core/chat/json_scan.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/base/utf8.h"

namespace ox::chat {
namespace {

constexpr size_t kMaxDepth = 512;


// A string literal starting at text[pos] == '"'.
JsonSpan scan_string(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') return {JsonScan::kComplete, i + 1};
    if (c == '\\') {
      if (++i >= text.size()) break;
      const char e = text[i];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k) {
          if (++i >= text.size()) return {JsonScan::kIncomplete, text.size()};
          if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return {JsonScan::kInvalid, i};
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return {JsonScan::kInvalid, i};
      }
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return {JsonScan::kInvalid, i};
    } else if (static_cast<unsigned char>(c) >= 0x80) {  // UTF-8 must be well formed (a JSON parser rejects it otherwise)
      const unsigned char lead = static_cast<unsigned char>(c);
      const size_t n = lead >= 0xF0 && lead <= 0xF4 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC2 && lead < 0xE0 ? 1 : 0;
      if (n == 0 || lead > 0xF4) return {JsonScan::kInvalid, i};
      for (size_t k = 1; k <= n; ++k) {
        if (i + k >= text.size()) return {JsonScan::kIncomplete, text.size()};
        const unsigned char b = static_cast<unsigned char>(text[i + k]);
        if ((b & 0xC0) != 0x80) return {JsonScan::kInvalid, i + k};
        if (k == 1 && ((lead == 0xE0 && b < 0xA0) || (lead == 0xED && b > 0x9F) || (lead == 0xF0 && b < 0x90) ||
                       (lead == 0xF4 && b > 0x8F))) {
          return {JsonScan::kInvalid, i + k};  // overlong, surrogate or past U+10FFFF
        }
      }
      i += n;
    }
  }
  return {JsonScan::kIncomplete, text.size()};
}

JsonSpan scan_number(std::string_view text, size_t pos) {
  size_t i = pos;
  if (text[i] == '-') ++i;
  const size_t digits = i;
  while (i < text.size() && is_ascii_digit(text[i])) ++i;
  if (i == text.size()) return {JsonScan::kIncomplete, i};
  if (i == digits) return {JsonScan::kInvalid, i};
  if (text[i] == '.') {
    ++i;
    const size_t frac = i;
    while (i < text.size() && is_ascii_digit(text[i])) ++i;
    if (i == text.size()) return {JsonScan::kIncomplete, i};
    if (i == frac) return {JsonScan::kInvalid, i};
  }
  if (text[i] == 'e' || text[i] == 'E') {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t exp = i;
    while (i < text.size() && is_ascii_digit(text[i])) ++i;
    if (i == text.size()) return {JsonScan::kIncomplete, i};
    if (i == exp) return {JsonScan::kInvalid, i};
  }
  return {JsonScan::kComplete, i};
}

JsonSpan scan_literal(std::string_view text, size_t pos) {
  for (std::string_view lit : {"true", "false", "null"}) {
    if (lit[0] != text[pos]) continue;
    const std::string_view have = text.substr(pos, lit.size());
    if (have == lit) return {JsonScan::kComplete, pos + lit.size()};
    if (lit.substr(0, have.size()) == have && pos + have.size() == text.size()) return {JsonScan::kIncomplete, text.size()};
    return {JsonScan::kInvalid, pos};
  }
  return {JsonScan::kInvalid, pos};
}

// A scalar (string, number, literal) at text[pos].
JsonSpan scan_scalar(std::string_view text, size_t pos) {
  const char c = text[pos];
  if (c == '"') return scan_string(text, pos);
  if (c == '-' || is_ascii_digit(c)) return scan_number(text, pos);
  return scan_literal(text, pos);
}

}  // namespace

size_t skip_json_ws(std::string_view text, size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r')) ++pos;
  return pos;
}

JsonSpan scan_json_value(std::string_view text, size_t pos) {
  enum class Expect { kValue, kValueOrClose, kKeyOrClose, kKey, kColon, kCommaOrClose };
  std::vector<char> stack;
  Expect expect = Expect::kValue;
  size_t i = pos;
  while (true) {
    if (i > pos || expect != Expect::kValue) i = skip_json_ws(text, i);
    if (i >= text.size()) return {JsonScan::kIncomplete, text.size()};
    const char c = text[i];
    bool value_done = false;
    switch (expect) {
      case Expect::kValue:
      case Expect::kValueOrClose:
        if (c == '{' || c == '[') {
          if (stack.size() >= kMaxDepth) return {JsonScan::kInvalid, i};
          stack.push_back(c);
          expect = c == '{' ? Expect::kKeyOrClose : Expect::kValueOrClose;
          ++i;
        } else if (c == ']' && expect == Expect::kValueOrClose) {
          stack.pop_back();
          ++i;
          value_done = true;
        } else {
          const JsonSpan s = scan_scalar(text, i);
          if (s.state != JsonScan::kComplete) return s;
          i = s.end;
          value_done = true;
        }
        break;
      case Expect::kKeyOrClose:
      case Expect::kKey:
        if (c == '}' && expect == Expect::kKeyOrClose) {
          stack.pop_back();
          ++i;
          value_done = true;
        } else if (c == '"') {
          const JsonSpan s = scan_string(text, i);
          if (s.state != JsonScan::kComplete) return s;
          i = s.end;
          expect = Expect::kColon;
        } else {
          return {JsonScan::kInvalid, i};
        }
        break;
      case Expect::kColon:
        if (c != ':') return {JsonScan::kInvalid, i};
        ++i;
        expect = Expect::kValue;
        break;
      case Expect::kCommaOrClose: {
        const char close = stack.back() == '{' ? '}' : ']';
        if (c == ',') {
          expect = stack.back() == '{' ? Expect::kKey : Expect::kValue;
          ++i;
        } else if (c == close) {
          stack.pop_back();
          ++i;
          value_done = true;
        } else {
          return {JsonScan::kInvalid, i};
        }
        break;
      }
    }
    if (value_done) {
      if (stack.empty()) return {JsonScan::kComplete, i};
      expect = Expect::kCommaOrClose;
    }
  }
}

const JsonMember* JsonObjectScan::find(std::string_view key) const {
  for (const JsonMember& m : members) {
    if (m.key == key) return &m;
  }
  return nullptr;
}

JsonObjectScan scan_json_object(std::string_view text, size_t pos) {
  JsonObjectScan out;
  if (pos >= text.size()) {
    out.state = JsonScan::kIncomplete;
    out.end = text.size();
    return out;
  }
  if (text[pos] != '{') {
    out.end = pos;
    return out;
  }
  auto stop = [&](JsonScan state, size_t at) {
    out.state = state;
    out.end = at;
    return out;
  };
  size_t i = skip_json_ws(text, pos + 1);
  if (i < text.size() && text[i] == '}') return stop(JsonScan::kComplete, i + 1);
  while (true) {
    if (i >= text.size()) return stop(JsonScan::kIncomplete, text.size());
    if (text[i] != '"') return stop(JsonScan::kInvalid, i);
    const JsonSpan key = scan_string(text, i);
    if (key.state != JsonScan::kComplete) return stop(key.state, key.end);
    JsonMember m;
    if (!decode_json_string(text.substr(i, key.end - i), &m.key)) return stop(JsonScan::kInvalid, i);
    i = skip_json_ws(text, key.end);
    if (i >= text.size()) return stop(JsonScan::kIncomplete, text.size());
    if (text[i] != ':') return stop(JsonScan::kInvalid, i);
    i = skip_json_ws(text, i + 1);
    if (i >= text.size()) return stop(JsonScan::kIncomplete, text.size());
    m.value_begin = i;
    m.value = scan_json_value(text, i);
    out.members.push_back(m);
    if (m.value.state != JsonScan::kComplete) return stop(m.value.state, m.value.end);
    i = skip_json_ws(text, m.value.end);
    if (i >= text.size()) return stop(JsonScan::kIncomplete, text.size());
    if (text[i] == '}') return stop(JsonScan::kComplete, i + 1);
    if (text[i] != ',') return stop(JsonScan::kInvalid, i);
    i = skip_json_ws(text, i + 1);
  }
}

std::string minify_json(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  bool in_string = false;
  bool escaped = false;
  for (char c : raw) {
    if (in_string) {
      out.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

bool decode_json_string(std::string_view literal, std::string* out) {
  const nlohmann::json j = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_string()) return false;
  *out = j.get<std::string>();
  return true;
}

}  // namespace ox::chat
