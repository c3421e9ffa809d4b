// Regex "pattern" -> GBNF for JSON strings: the subset llama.cpp's _pattern_to_rule converts
// (anchored ^...$, literals and escapes, '.', [classes], (groups) and (?:groups), |, * + ? {m,n}).
// Unlike llama.cpp, anything else is an error (it falls back to "any string" there), and the
// output is kept valid inside a JSON string: '.' and negated classes never produce '"', '\' or a
// control character, and a literal '"' or '\' is written escaped.
#include <string>

#include "core/sampler/json_schema.h"

namespace ox::json_schema_detail {
namespace {

constexpr int kMaxPatternDepth = 100;
// What '.' and a negated class must also leave out to stay inside a JSON string.
constexpr const char* kJsonUnsafe = "\"\\\\\\x7F\\x00-\\x1F";

class PatternConverter {
 public:
  explicit PatternConverter(std::string_view p) : p_(p) {}

  Result<std::string> run() {
    std::string out;
    OX_TRY(alternatives(0, out));
    if (i_ != p_.size()) return fail("unbalanced ')'");
    return out;
  }

 private:
  Status fail(const std::string& what) const {
    return error(ErrorCode::kUnsupported, "pattern: " + what + " at offset " + std::to_string(i_ + 1));
  }

  static std::string literal_char(char c) {
    switch (c) {
      case '"': return "\"\\\\\\\"\"";  // the two characters \" in the JSON text
      case '\\': return "\"\\\\\\\\\"";
      case '\n': case '\r': case '\t': return fail_marker();
      default: return std::string("\"") + c + "\"";
    }
  }
  static std::string fail_marker() { return std::string(); }

  Status alternatives(int depth, std::string& out) {
    if (depth > kMaxPatternDepth) return fail("groups nested too deeply");
    OX_TRY(sequence(depth, out));
    while (i_ < p_.size() && p_[i_] == '|') {
      ++i_;
      out += " | ";
      OX_TRY(sequence(depth, out));
    }
    return Status::ok();
  }

  Status sequence(int depth, std::string& out) {
    std::string seq = "\"\"";  // an empty alternative is the empty string
    bool first = true;
    while (i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') {
      std::string atom;
      OX_TRY(parse_atom(depth, atom));
      OX_TRY(parse_quantifier(atom));
      seq = first ? atom : seq + " " + atom;
      first = false;
    }
    out += seq;
    return Status::ok();
  }

  Status parse_atom(int depth, std::string& atom) {
    const char c = p_[i_];
    if (c == '(') {
      ++i_;
      if (i_ < p_.size() && p_[i_] == '?') {
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          i_ += 2;
        } else {
          return fail("unsupported group syntax (lookaround, named group or flags)");
        }
      }
      std::string inner;
      OX_TRY(alternatives(depth + 1, inner));
      if (i_ >= p_.size() || p_[i_] != ')') return fail("unbalanced '('");
      ++i_;
      atom = "(" + inner + ")";
      return Status::ok();
    }
    if (c == '.') {
      ++i_;
      atom = std::string("[^\\n\\r") + kJsonUnsafe + "]";
      return Status::ok();
    }
    if (c == '[') return parse_class(atom);
    if (c == '^' || c == '$') return fail("anchor inside the pattern");
    if (c == '*' || c == '+' || c == '?' || c == '{') return fail("nothing to repeat");
    if (c == ']' || c == '}') return fail(std::string("unsupported character '") + c + "'");
    if (c == '\\') return parse_escape(atom);
    const unsigned char lead = static_cast<unsigned char>(c);
    if (lead >= 0x80) {  // a whole UTF-8 sequence is one literal char
      const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      if (i_ + len > p_.size()) return fail("truncated UTF-8");
      atom = "\"" + std::string(p_.substr(i_, len)) + "\"";
      i_ += len;
      return Status::ok();
    }
    ++i_;
    atom = literal_char(c);
    if (atom.empty()) return fail("control character in pattern");
    return Status::ok();
  }

  Status parse_escape(std::string& atom) {
    if (i_ + 1 >= p_.size()) return fail("trailing backslash");
    const char next = p_[i_ + 1];
    i_ += 2;
    switch (next) {
      case 'd': atom = "[0-9]"; return Status::ok();
      case 'w': atom = "[a-zA-Z0-9_]"; return Status::ok();
      case 's': atom = "\" \""; return Status::ok();  // JSON text can hold only the space raw
      case 'D': atom = std::string("[^0-9") + kJsonUnsafe + "]"; return Status::ok();
      case 'W': atom = std::string("[^a-zA-Z0-9_") + kJsonUnsafe + "]"; return Status::ok();
      default: break;
    }
    if (std::string_view("^$.[]()|{}*+?-/").find(next) != std::string_view::npos) {
      atom = next == '\\' ? literal_char('\\') : literal_char(next);
      return Status::ok();
    }
    if (next == '\\') {
      atom = literal_char('\\');
      return Status::ok();
    }
    return fail(std::string("unsupported escape '\\") + next + "'");
  }

  Status parse_class(std::string& atom) {
    ++i_;
    std::string body;
    bool negated = false;
    if (i_ < p_.size() && p_[i_] == '^') {
      negated = true;
      ++i_;
    }
    while (i_ < p_.size() && p_[i_] != ']') {
      const char c = p_[i_];
      if (c == '\\') {
        if (i_ + 1 >= p_.size()) return fail("trailing backslash");
        const char e = p_[i_ + 1];
        if (e == 'd') {
          body += "0-9";
        } else if (e == 'w') {
          body += "a-zA-Z0-9_";
        } else if (std::string_view("[]-^\\.$|(){}*+?/").find(e) != std::string_view::npos) {
          if (e == '\\') return fail("backslash inside a class");  // would need a JSON escape
          body += (e == '[' || e == ']' || e == '-') ? std::string("\\") + e : std::string(1, e);
        } else {
          return fail(std::string("unsupported escape in character class '\\") + e + "'");
        }
        i_ += 2;
        continue;
      }
      if (c == '"') return fail("'\"' inside a class");
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a class");
      body += c;
      ++i_;
    }
    if (i_ >= p_.size()) return fail("unterminated character class");
    ++i_;
    if (body.empty()) return fail("empty character class");
    atom = negated ? "[^" + body + kJsonUnsafe + "]" : "[" + body + "]";
    return Status::ok();
  }

  Status parse_quantifier(std::string& atom) {
    while (i_ < p_.size()) {
      const char c = p_[i_];
      if (c == '*' || c == '+' || c == '?') {
        atom = "(" + atom + ")" + c;
        ++i_;
      } else if (c == '{') {
        const size_t close = p_.find('}', i_);
        if (close == std::string_view::npos) return fail("unterminated '{'");
        const std::string body(p_.substr(i_ + 1, close - i_ - 1));
        for (char d : body) {
          if (!(d == ',' || ('0' <= d && d <= '9'))) return fail("invalid repetition '{" + body + "}'");
        }
        if (body.empty() || body[0] == ',') return fail("repetition without a minimum");
        atom = "(" + atom + "){" + body + "}";
        i_ = close + 1;
      } else {
        return Status::ok();
      }
      if (i_ < p_.size() && (p_[i_] == '?' || p_[i_] == '+')) return fail("lazy or possessive quantifier");
    }
    return Status::ok();
  }

  std::string_view p_;
  size_t i_ = 0;
};

}  // namespace

Result<std::string> pattern_to_gbnf(std::string_view pattern) {
  if (pattern.size() < 2 || pattern.front() != '^' || pattern.back() != '$') {
    return error(ErrorCode::kUnsupported, "pattern: not anchored with '^' and '$'");
  }
  return PatternConverter(pattern.substr(1, pattern.size() - 2)).run();
}

}  // namespace ox::json_schema_detail
