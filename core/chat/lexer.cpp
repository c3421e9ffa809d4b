// Jinja lexer. Mirrors the whitespace rules of jinja2's regex lexer as transformers configures
// it: `{%-`/`-%}` strip all whitespace, trim_blocks drops one newline after `%}`/`#}`, and
// lstrip_blocks drops spaces before `{%`/`{#` that start a line.
#include "core/chat/lexer.h"

#include <algorithm>
#include <cstring>

#include "core/chat/unicode.h"

namespace ox::chat {

namespace {

// Source after jinja's preprocessing: \r\n and \r become \n; one trailing newline is dropped.
std::string normalize(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out += '\n';
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out += src[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<uint8_t>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(static_cast<uint32_t>(i + 1));
    }
  }

  Result<std::vector<Token>> run() {
    while (pos_ < src_.size()) OX_TRY(root());
    Token eof;
    eof.type = Tok::kEof;
    locate(src_.size(), &eof);
    tokens_.push_back(std::move(eof));
    return std::move(tokens_);
  }

 private:
  // Line and column (in code points) of a byte offset. Tokens arrive in source order, so the
  // column is counted on from the previous call; long one-line templates stay linear.
  void locate(size_t offset, Token* t) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<uint32_t>(offset));
    const size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
    t->line = static_cast<uint32_t>(line_index + 1);
    const size_t start = line_starts_[line_index];
    if (cursor_line_ != line_index || cursor_offset_ > offset) {
      cursor_line_ = line_index;
      cursor_offset_ = start;
      cursor_col_ = 1;
    }
    cursor_col_ += utf8::length(std::string_view(src_).substr(cursor_offset_, offset - cursor_offset_));
    cursor_offset_ = offset;
    t->col = static_cast<uint32_t>(cursor_col_);
  }

  Status fail(size_t offset, const std::string& msg) const {
    Token t;
    locate(offset, &t);
    return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: %s", t.line, t.col, msg.c_str()));
  }

  void emit(Tok type, size_t offset, std::string text) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    locate(offset, &t);
    tokens_.push_back(std::move(t));
  }

  bool at(size_t p, const char* s) const { return src_.compare(p, std::strlen(s), s) == 0; }

  // Length of the whitespace run (Python's \s) starting at p.
  size_t space_run(size_t p) const {
    size_t q = p;
    while (q < src_.size()) {
      size_t next = q;
      if (!utf8::is_space(utf8::decode(src_, &next))) break;
      q = next;
    }
    return q - p;
  }

  // Applies `-` / lstrip_blocks to the text before a tag and emits it.
  void emit_text(size_t begin, size_t end, char sign, bool lstrip_allowed) {
    std::string_view text = std::string_view(src_).substr(begin, end - begin);
    if (sign == '-') {
      text = utf8::strip(text, nullptr, false, true);
    } else if (sign != '+' && lstrip_allowed) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size() &&
          utf8::strip(text.substr(l_pos), nullptr, true, false).empty()) {
        text = text.substr(0, l_pos);
      }
    }
    if (!text.empty()) emit(Tok::kData, begin, std::string(text));
  }

  // Matches a block end (`+%}`, `-%}\s*`, `%}\n?`) at p; returns its length or 0.
  size_t block_end_at(size_t p, const char* close) const {
    if (src_[p] == '+' && at(p + 1, close)) return 3;
    if (src_[p] == '-' && at(p + 1, close)) return 3 + space_run(p + 3);
    if (at(p, close)) return (p + 2 < src_.size() && src_[p + 2] == '\n') ? 3 : 2;
    return 0;
  }

  Status root() {
    size_t tag = pos_;
    while (true) {
      tag = src_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= src_.size()) break;
      const char k = src_[tag + 1];
      if (k == '{' || k == '%' || k == '#') break;
      ++tag;
    }
    if (tag == std::string::npos || tag + 1 >= src_.size()) {
      emit(Tok::kData, pos_, src_.substr(pos_));
      pos_ = src_.size();
      return Status::ok();
    }
    const char kind = src_[tag + 1];
    size_t p = tag + 2;
    const char sign = (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ? src_[p] : '\0';
    if (kind == '%') {
      size_t raw_end = 0;
      if (raw_begin_at(p, &raw_end)) {
        emit_text(pos_, tag, sign, true);
        return raw(raw_end, tag);
      }
    }
    emit_text(pos_, tag, sign, kind != '{');
    if (sign != '\0') ++p;
    if (kind == '#') return comment(p, tag);
    emit(kind == '%' ? Tok::kBlockBegin : Tok::kVarBegin, tag, kind == '%' ? "{%" : "{{");
    return tag_body(p, kind == '%');
  }

  bool raw_begin_at(size_t p, size_t* end) const {
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    p += space_run(p);
    if (!at(p, "raw")) return false;
    p += 3;
    if (p < src_.size() && is_name_char(src_[p])) return false;
    p += space_run(p);
    if (p < src_.size() && src_[p] == '-' && at(p + 1, "%}")) {
      *end = p + 3 + space_run(p + 3);
      return true;
    }
    if (at(p, "%}")) {
      *end = p + 2;
      return true;
    }
    return false;
  }

  Status raw(size_t body, size_t tag) {
    line_starting_ = src_[body - 1] == '\n';
    size_t p = body;
    while ((p = src_.find("{%", p)) != std::string::npos) {
      size_t q = p + 2;
      const char sign = (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) ? src_[q] : '\0';
      if (sign != '\0') ++q;
      q += space_run(q);
      if (at(q, "endraw")) {
        q += 6;
        q += space_run(q);
        const size_t n = q < src_.size() ? block_end_at(q, "%}") : 0;
        if (n > 0) {
          emit_text(body, p, sign, true);
          pos_ = q + n;
          line_starting_ = src_[pos_ - 1] == '\n';
          return Status::ok();
        }
      }
      p += 2;
    }
    return fail(tag, "missing end of raw directive");
  }

  Status comment(size_t p, size_t tag) {
    for (size_t i = p; i + 1 < src_.size(); ++i) {
      size_t n = 0;
      if ((src_[i] == '+' || src_[i] == '-') && at(i + 1, "#}")) {
        n = src_[i] == '-' ? 3 + space_run(i + 3) : 3;
      } else if (at(i, "#}")) {
        n = (i + 2 < src_.size() && src_[i + 2] == '\n') ? 3 : 2;
      }
      if (n > 0) {
        pos_ = i + n;
        line_starting_ = src_[pos_ - 1] == '\n';
        return Status::ok();
      }
    }
    return fail(tag, "missing end of comment tag");
  }

  Status tag_body(size_t p, bool block) {
    std::vector<char> brackets;
    while (true) {
      p += space_run(p);
      if (p >= src_.size()) return fail(p, block ? "unexpected end of template, expected '%}'" : "unexpected end of template, expected '}}'");
      if (brackets.empty()) {
        const size_t n = block ? block_end_at(p, "%}") : var_end_at(p);
        if (n > 0) {
          emit(block ? Tok::kBlockEnd : Tok::kVarEnd, p, block ? "%}" : "}}");
          pos_ = p + n;
          line_starting_ = src_[pos_ - 1] == '\n';
          return Status::ok();
        }
      }
      OX_ASSIGN_OR_RETURN(p, operand_or_op(p, &brackets));
    }
  }

  size_t var_end_at(size_t p) const {
    if (src_[p] == '-' && at(p + 1, "}}")) return 3 + space_run(p + 3);
    return at(p, "}}") ? 2 : 0;
  }

  Result<size_t> operand_or_op(size_t p, std::vector<char>* brackets) {
    const char c = src_[p];
    if (is_ascii_digit(c)) return number(p);
    if (is_name_start(c)) {
      size_t q = p;
      while (q < src_.size() && is_name_char(src_[q])) ++q;
      emit(Tok::kName, p, src_.substr(p, q - p));
      return q;
    }
    if (c == '\'' || c == '"') {
      size_t q = p + 1;
      while (q < src_.size() && src_[q] != c) q += (src_[q] == '\\') ? 2 : 1;
      if (q < src_.size()) {
        OX_ASSIGN_OR_RETURN(std::string value, unescape(p + 1, q));
        emit(Tok::kString, p, std::move(value));
        return q + 1;
      }
      return fail(p, "unterminated string literal");
    }
    static const char* kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (at(p, op)) {
        emit(Tok::kOp, p, op);
        return p + 2;
      }
    }
    if (std::strchr("+-/*%~[](){}><=.:|,;", c) == nullptr) {
      size_t next = p;
      std::string ch;
      utf8::append(&ch, utf8::decode(src_, &next));
      return fail(p, "unexpected char '" + ch + "'");
    }
    if (c == '(' || c == '[' || c == '{') brackets->push_back(c == '(' ? ')' : (c == '[' ? ']' : '}'));
    if (c == ')' || c == ']' || c == '}') {
      if (brackets->empty()) return fail(p, strfmt("unexpected '%c'", c));
      if (brackets->back() != c) return fail(p, strfmt("unexpected '%c', expected '%c'", c, brackets->back()));
      brackets->pop_back();
    }
    emit(Tok::kOp, p, std::string(1, c));
    return p + 1;
  }

  // Digits with single underscores between them ("1_000").
  size_t digit_run(size_t p) const {
    size_t q = p;
    while (q < src_.size() && is_ascii_digit(src_[q])) {
      ++q;
      if (q + 1 < src_.size() && src_[q] == '_' && is_ascii_digit(src_[q + 1])) ++q;
    }
    return q;
  }

  Result<size_t> number(size_t p) {
    const bool after_dot = p > 0 && src_[p - 1] == '.';
    if (src_[p] == '0' && p + 1 < src_.size() && std::strchr("xXoObB", src_[p + 1]) != nullptr) {
      const int base = (src_[p + 1] == 'x' || src_[p + 1] == 'X') ? 16 : ((src_[p + 1] == 'o' || src_[p + 1] == 'O') ? 8 : 2);
      size_t q = p + 2;
      uint64_t v = 0;
      int n = 0;
      while (q < src_.size()) {
        const char d = src_[q];
        int digit = -1;
        if (d >= '0' && d <= '9') digit = d - '0';
        if (d >= 'a' && d <= 'f') digit = d - 'a' + 10;
        if (d >= 'A' && d <= 'F') digit = d - 'A' + 10;
        if (d == '_') {
          ++q;
          continue;
        }
        if (digit < 0 || digit >= base) break;
        if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / base) return fail(p, "integer literal too large");
        v = v * base + digit;
        ++n;
        ++q;
      }
      if (n > 0) return emit_int(p, q, static_cast<int64_t>(v));
    }
    size_t q = digit_run(p);
    bool is_float = false;
    if (!after_dot && q + 1 < src_.size() && src_[q] == '.' && is_ascii_digit(src_[q + 1])) {
      q = digit_run(q + 1);
      is_float = true;
    }
    if (!after_dot && q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
      size_t r = q + 1;
      if (r < src_.size() && (src_[r] == '+' || src_[r] == '-')) ++r;
      if (r < src_.size() && is_ascii_digit(src_[r])) {
        q = digit_run(r);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = p; i < q; ++i) {
      if (src_[i] != '_') text += src_[i];
    }
    if (is_float) {
      Token t;
      t.type = Tok::kFloat;
      t.text = text;
      t.float_value = std::strtod(text.c_str(), nullptr);
      locate(p, &t);
      tokens_.push_back(std::move(t));
      return q;
    }
    if (src_[p] == '0') {  // jinja's integer rule only accepts 0, 00, 0_0 ... with a leading zero
      q = p + 1;
      while (q < src_.size() && (src_[q] == '0' || (src_[q] == '_' && q + 1 < src_.size() && src_[q + 1] == '0'))) ++q;
      return emit_int(p, q, 0);
    }
    uint64_t v = 0;
    for (char d : text) {
      if (v > (static_cast<uint64_t>(INT64_MAX) - (d - '0')) / 10) return fail(p, "integer literal too large");
      v = v * 10 + (d - '0');
    }
    return emit_int(p, q, static_cast<int64_t>(v));
  }

  size_t emit_int(size_t p, size_t q, int64_t v) {
    Token t;
    t.type = Tok::kInt;
    t.text = src_.substr(p, q - p);
    t.int_value = v;
    locate(p, &t);
    tokens_.push_back(std::move(t));
    return q;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Python's unicode-escape decoding of a string literal's body [b, e).
  Result<std::string> unescape(size_t b, size_t e) const {
    std::string out;
    uint32_t pending_high = 0;  // a \uD8xx waiting for its low surrogate
    auto flush = [&]() {
      if (pending_high != 0) utf8::append(&out, 0xFFFD);
      pending_high = 0;
    };
    auto put = [&](uint32_t cp) {
      if (pending_high != 0 && cp >= 0xDC00 && cp <= 0xDFFF) {
        utf8::append(&out, 0x10000 + ((pending_high - 0xD800) << 10) + (cp - 0xDC00));
        pending_high = 0;
        return;
      }
      flush();
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        pending_high = cp;
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        utf8::append(&out, 0xFFFD);
      } else {
        utf8::append(&out, cp);
      }
    };
    for (size_t i = b; i < e; ++i) {
      const char c = src_[i];
      if (c != '\\' || i + 1 >= e) {
        flush();
        out += c;
        continue;
      }
      const char n = src_[++i];
      switch (n) {
        case '\n': break;
        case '\\': put('\\'); break;
        case '\'': put('\''); break;
        case '"': put('"'); break;
        case 'a': put(7); break;
        case 'b': put(8); break;
        case 'f': put(12); break;
        case 'n': put('\n'); break;
        case 'r': put('\r'); break;
        case 't': put('\t'); break;
        case 'v': put(11); break;
        case 'x':
        case 'u':
        case 'U': {
          const int digits = n == 'x' ? 2 : (n == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (int k = 0; k < digits; ++k) {
            const int h = (i + 1 + k < e) ? hex_value(src_[i + 1 + k]) : -1;
            if (h < 0) return fail(i - 1, strfmt("truncated \\%c escape in string literal", n));
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) return fail(i - 1, "illegal Unicode character in string literal");
          i += digits;
          put(cp);
          break;
        }
        default:
          if (n >= '0' && n <= '7') {
            uint32_t cp = static_cast<uint32_t>(n - '0');
            for (int k = 0; k < 2 && i + 1 < e && src_[i + 1] >= '0' && src_[i + 1] <= '7'; ++k) cp = cp * 8 + (src_[++i] - '0');
            put(cp);
          } else {
            put('\\');  // unknown escapes keep their backslash
            out += n;
          }
      }
    }
    flush();
    return out;
  }

  std::string src_;
  std::vector<uint32_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  mutable size_t cursor_line_ = SIZE_MAX;
  mutable size_t cursor_offset_ = 0;
  mutable uint64_t cursor_col_ = 1;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) {
  Lexer lexer(normalize(source));
  return lexer.run();
}

const char* token_description(Tok type) {
  switch (type) {
    case Tok::kData: return "template data";
    case Tok::kVarBegin: return "begin of print statement '{{'";
    case Tok::kVarEnd: return "end of print statement '}}'";
    case Tok::kBlockBegin: return "begin of statement block '{%'";
    case Tok::kBlockEnd: return "end of statement block '%}'";
    case Tok::kName: return "name";
    case Tok::kString: return "string";
    case Tok::kInt: return "integer";
    case Tok::kFloat: return "float";
    case Tok::kOp: return "operator";
    case Tok::kEof: return "end of template";
  }
  return "token";
}

}  // namespace ox::chat
