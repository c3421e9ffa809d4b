// GBNF parser: a recursive-descent reading of the same syntax llama.cpp's llama_grammar_parser
// reads, building the same element lists (repetitions rewritten into generated rules), with
// Status errors instead of exceptions. Positions are pointers into a NUL-terminated copy of the
// text, as in llama.cpp, so "end of input" is *pos == 0; a NUL inside the text is refused first.
#include "core/sampler/grammar_parser.h"

#include <charconv>
#include <map>

namespace ox {
namespace {

bool is_digit(char c) { return '0' <= c && c <= '9'; }
bool is_word_char(char c) { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '-' || is_digit(c); }

// Lenient decode of one UTF-8 sequence as llama.cpp's parser does it (lead byte decides the length,
// continuation bytes are taken as found, stopping at the end of the text).
const char* decode_utf8_lenient(const char* src, uint32_t* value) {
  static const int kLength[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  const uint8_t first = static_cast<uint8_t>(*src);
  const int len = kLength[first >> 4];
  uint32_t v = first & ((1u << (8 - len)) - 1);
  const char* pos = src + 1;
  for (int i = 1; i < len && *pos != 0; ++i, ++pos) v = (v << 6) + (static_cast<uint8_t>(*pos) & 0x3F);
  *value = v;
  return pos;
}

class Parser {
 public:
  Parser(std::string_view text, const GrammarParseOptions& options) : text_(text), options_(options) {}

  Result<Grammar> run();

 private:
  struct Rule {
    std::vector<GrammarElement> elements;
    bool defined = false;
  };

  // Records the first error; every parse step returns nullptr once one is set.
  const char* fail(const char* at, const std::string& message) {
    if (status_.is_ok()) {
      const size_t offset = static_cast<size_t>(at - text_.c_str());
      status_ = error(ErrorCode::kInvalidArgument, "grammar: " + grammar_location(text_, offset) + ": " + message);
    }
    return nullptr;
  }

  const char* parse_space(const char* pos, bool newline_ok);
  const char* parse_rule(const char* pos);
  const char* parse_alternates(const char* pos, const std::string& rule_name, uint32_t rule_id, int depth);
  const char* parse_sequence(const char* pos, const std::string& rule_name, std::vector<GrammarElement>& rule,
                             int depth);
  const char* parse_char(const char* pos, uint32_t* value);
  const char* parse_hex(const char* pos, int n_digits, uint32_t* value);
  const char* parse_token(const char* pos, uint32_t* id);
  const char* parse_literal(const char* pos, std::vector<GrammarElement>& rule);
  const char* parse_class(const char* pos, std::vector<GrammarElement>& rule);
  const char* parse_braces(const char* pos, bool nested, uint64_t* min_times, uint64_t* max_times);
  bool repeat(const char* at, const std::string& rule_name, std::vector<GrammarElement>& rule, size_t last_sym_start,
              uint64_t& n_prev_rules, uint64_t min_times, uint64_t max_times);

  uint32_t symbol_id(const std::string& name, const char* at);
  uint32_t generate_symbol_id(const std::string& base);
  bool add_rule(uint32_t id, std::vector<GrammarElement> elements, const char* at);

  std::string text_;
  const GrammarParseOptions& options_;
  Status status_;
  std::map<std::string, uint32_t> symbol_ids_;
  std::vector<std::string> names_;
  std::vector<size_t> first_use_;  // offset of each symbol's first mention, for "undefined rule" errors
  std::vector<Rule> rules_;
  size_t n_elements_ = 0;
};

std::string_view rest_preview(const char* pos) {  // a little of the text at an error, for context
  std::string_view s(pos);
  return s.substr(0, std::min<size_t>(s.find_first_of("\r\n"), 20));
}

uint32_t Parser::symbol_id(const std::string& name, const char* at) {
  auto [it, inserted] = symbol_ids_.emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) {
    names_.push_back(name);
    first_use_.push_back(static_cast<size_t>(at - text_.c_str()));
  }
  return it->second;
}

uint32_t Parser::generate_symbol_id(const std::string& base) {
  const uint32_t id = static_cast<uint32_t>(names_.size());
  const std::string name = base + "_" + std::to_string(id);
  symbol_ids_[name] = id;
  names_.push_back(name);
  first_use_.push_back(0);
  return id;
}

bool Parser::add_rule(uint32_t id, std::vector<GrammarElement> elements, const char* at) {
  n_elements_ += elements.size();
  if (n_elements_ > kMaxGrammarElements) {
    fail(at, "grammar too large (more than " + std::to_string(kMaxGrammarElements) + " elements)");
    return false;
  }
  if (rules_.size() <= id) rules_.resize(id + 1);
  rules_[id].elements = std::move(elements);  // a rule defined twice keeps the last definition, as llama.cpp
  rules_[id].defined = true;
  return true;
}

const char* Parser::parse_space(const char* pos, bool newline_ok) {
  while (*pos == ' ' || *pos == '\t' || *pos == '#' || (newline_ok && (*pos == '\r' || *pos == '\n'))) {
    if (*pos == '#') {
      while (*pos != 0 && *pos != '\r' && *pos != '\n') ++pos;
    } else {
      ++pos;
    }
  }
  return pos;
}

const char* Parser::parse_hex(const char* pos, int n_digits, uint32_t* value) {
  uint32_t v = 0;
  for (int i = 0; i < n_digits; ++i) {
    const char c = pos[i];
    uint32_t d;
    if (is_digit(c)) {
      d = c - '0';
    } else if ('a' <= c && c <= 'f') {
      d = c - 'a' + 10;
    } else if ('A' <= c && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return fail(pos + i, "expecting " + std::to_string(n_digits) + " hex chars");
    }
    v = (v << 4) | d;
  }
  *value = v;
  return pos + n_digits;
}

const char* Parser::parse_char(const char* pos, uint32_t* value) {
  if (*pos == '\\') {
    switch (pos[1]) {
      case 'x': return parse_hex(pos + 2, 2, value);
      case 'u': return parse_hex(pos + 2, 4, value);
      case 'U': return parse_hex(pos + 2, 8, value);
      case 't': *value = '\t'; return pos + 2;
      case 'r': *value = '\r'; return pos + 2;
      case 'n': *value = '\n'; return pos + 2;
      case '\\': case '"': case '[': case ']': case '-':
        *value = static_cast<uint8_t>(pos[1]);
        return pos + 2;
      default:
        return fail(pos, "unknown escape '\\" + std::string(pos[1] ? 1 : 0, pos[1]) + "'");
    }
  }
  if (*pos == 0) return fail(pos, "unexpected end of input");
  return decode_utf8_lenient(pos, value);
}

const char* Parser::parse_token(const char* pos, uint32_t* id) {
  const char* start = pos;
  if (*pos != '<') return fail(pos, "expecting '<'");
  ++pos;
  if (*pos == '[') {  // <[id]>
    ++pos;
    const char* digits = pos;
    while (is_digit(*pos)) ++pos;
    if (pos == digits) return fail(pos, "expecting integer");
    auto [end, ec] = std::from_chars(digits, pos, *id);
    if (ec != std::errc() || *id > static_cast<uint32_t>(INT32_MAX)) return fail(digits, "token id out of range");
    if (*pos != ']') return fail(pos, "expecting ']'");
    if (pos[1] != '>') return fail(pos + 1, "expecting '>'");
    return pos + 2;
  }
  while (*pos != 0 && *pos != '>') ++pos;
  if (*pos != '>') return fail(pos, "expecting '>'");
  ++pos;
  const std::string_view text(start, static_cast<size_t>(pos - start));
  if (!options_.lookup_token) return fail(start, "no vocabulary to resolve token '" + std::string(text) + "'");
  const std::optional<int32_t> found = options_.lookup_token(text);
  if (!found || *found < 0) return fail(start, "invalid token '" + std::string(text) + "' (not one token of the vocabulary)");
  *id = static_cast<uint32_t>(*found);
  return pos;
}

const char* Parser::parse_literal(const char* pos, std::vector<GrammarElement>& rule) {
  const char* open = pos++;
  while (*pos != '"') {
    if (*pos == 0) return fail(open, "unterminated string literal");
    uint32_t c;
    if ((pos = parse_char(pos, &c)) == nullptr) return nullptr;
    rule.push_back({GrammarOp::kChar, c});
  }
  return pos + 1;
}

const char* Parser::parse_class(const char* pos, std::vector<GrammarElement>& rule) {
  const char* open = pos++;
  GrammarOp start_op = GrammarOp::kChar;
  if (*pos == '^') {
    ++pos;
    start_op = GrammarOp::kCharNot;
  }
  const size_t class_start = rule.size();
  while (*pos != ']') {
    if (*pos == 0) return fail(open, "unterminated character class");
    uint32_t c;
    if ((pos = parse_char(pos, &c)) == nullptr) return nullptr;
    rule.push_back({rule.size() > class_start ? GrammarOp::kCharAlt : start_op, c});
    if (pos[0] == '-' && pos[1] != ']') {
      if (pos[1] == 0) return fail(open, "unterminated character class");
      uint32_t upper;
      if ((pos = parse_char(pos + 1, &upper)) == nullptr) return nullptr;
      rule.push_back({GrammarOp::kCharRngUpper, upper});
    }
  }
  // "[]" or "[^]" has no first element; llama.cpp builds a malformed rule there, we refuse it.
  if (rule.size() == class_start) return fail(open, "empty character class");
  return pos + 1;
}

const char* Parser::parse_braces(const char* pos, bool nested, uint64_t* min_times, uint64_t* max_times) {
  auto read_int = [&](const char* p, uint64_t* out) -> const char* {
    const char* digits = p;
    while (is_digit(*p)) ++p;
    auto [end, ec] = std::from_chars(digits, p, *out);
    if (ec != std::errc()) return fail(digits, "repetition count out of range");
    return p;
  };
  if (!is_digit(*pos)) return fail(pos, "expecting an int");
  if ((pos = read_int(pos, min_times)) == nullptr) return nullptr;
  pos = parse_space(pos, nested);
  *max_times = UINT64_MAX;  // {m,}: no maximum
  if (*pos == '}') {
    *max_times = *min_times;
    return pos + 1;
  }
  if (*pos != ',') return fail(pos, "expecting ','");
  pos = parse_space(pos + 1, nested);
  if (is_digit(*pos)) {
    if ((pos = read_int(pos, max_times)) == nullptr) return nullptr;
    pos = parse_space(pos, nested);
  }
  if (*pos != '}') return fail(pos, "expecting '}'");
  return pos + 1;
}

// S{m,n} -> S..S (m times) S'(n-m), S'(x) ::= S S'(x-1) | ; S{m,} -> S..S S', S' ::= S S' | .
// The same rewrite (and the same generated rule names) as llama.cpp's handle_repetitions.
bool Parser::repeat(const char* at, const std::string& rule_name, std::vector<GrammarElement>& rule,
                    size_t last_sym_start, uint64_t& n_prev_rules, uint64_t min_times, uint64_t max_times) {
  if (last_sym_start == rule.size()) return fail(at, "expecting preceding item to */+/?/{"), false;
  if (max_times != UINT64_MAX && max_times < min_times) return fail(at, "repetition maximum below its minimum"), false;
  const bool no_max = max_times == UINT64_MAX;
  const std::vector<GrammarElement> prev(rule.begin() + static_cast<ptrdiff_t>(last_sym_start), rule.end());
  uint64_t total_rules = 1;
  if (!no_max && max_times > 0) {
    total_rules = max_times;
  } else if (min_times > 0) {
    total_rules = min_times;
  }
  if (n_prev_rules * total_rules > kMaxRepetition) {
    return fail(at, "repetition too large (rules repeated times repetitions exceeds " + std::to_string(kMaxRepetition) + ")"), false;
  }
  if (rule.size() + prev.size() * min_times > kMaxGrammarElements) return fail(at, "grammar too large"), false;
  if (min_times == 0) {
    rule.resize(last_sym_start);
  } else {
    for (uint64_t i = 1; i < min_times; ++i) rule.insert(rule.end(), prev.begin(), prev.end());
  }
  const uint64_t n_opt = no_max ? 1 : max_times - min_times;
  uint32_t last_rec_rule_id = 0;
  for (uint64_t i = 0; i < n_opt; ++i) {
    std::vector<GrammarElement> rec(prev);
    const uint32_t rec_id = generate_symbol_id(rule_name);
    if (i > 0 || no_max) rec.push_back({GrammarOp::kRuleRef, no_max ? rec_id : last_rec_rule_id});
    rec.push_back({GrammarOp::kAlt, 0});
    rec.push_back({GrammarOp::kEnd, 0});
    if (!add_rule(rec_id, std::move(rec), at)) return false;
    last_rec_rule_id = rec_id;
  }
  if (n_opt > 0) rule.push_back({GrammarOp::kRuleRef, last_rec_rule_id});
  n_prev_rules *= total_rules;
  return true;
}

const char* Parser::parse_sequence(const char* pos, const std::string& rule_name, std::vector<GrammarElement>& rule,
                                   int depth) {
  const bool nested = depth > 0;
  size_t last_sym_start = rule.size();
  uint64_t n_prev_rules = 1;
  auto item_start = [&] {
    last_sym_start = rule.size();
    n_prev_rules = 1;
  };
  while (*pos != 0) {
    const char* at = pos;
    if (*pos == '"') {
      item_start();
      if ((pos = parse_literal(pos, rule)) == nullptr) return nullptr;
    } else if (*pos == '[') {
      item_start();
      if ((pos = parse_class(pos, rule)) == nullptr) return nullptr;
    } else if (*pos == '<' || *pos == '!') {
      const GrammarOp op = *pos == '!' ? GrammarOp::kTokenNot : GrammarOp::kToken;
      if (*pos == '!') ++pos;
      uint32_t id;
      if ((pos = parse_token(pos, &id)) == nullptr) return nullptr;
      item_start();
      rule.push_back({op, id});
    } else if (is_word_char(*pos)) {
      while (is_word_char(*pos)) ++pos;
      item_start();
      rule.push_back({GrammarOp::kRuleRef, symbol_id(std::string(at, pos), at)});
    } else if (*pos == '(') {
      if (depth + 1 > kMaxGroupDepth) return fail(pos, "groups nested deeper than " + std::to_string(kMaxGroupDepth));
      pos = parse_space(pos + 1, true);
      const size_t n_before = names_.size();
      const uint32_t sub_id = generate_symbol_id(rule_name);
      if ((pos = parse_alternates(pos, rule_name, sub_id, depth + 1)) == nullptr) return nullptr;
      if (*pos != ')') return fail(pos, "expecting ')' to close the group opened at " + grammar_location(text_, at - text_.c_str()));
      ++pos;
      last_sym_start = rule.size();
      n_prev_rules = std::max<uint64_t>(1, names_.size() - n_before);
      rule.push_back({GrammarOp::kRuleRef, sub_id});
    } else if (*pos == '.') {
      item_start();
      rule.push_back({GrammarOp::kCharAny, 0});
      ++pos;
    } else if (*pos == '*' || *pos == '+' || *pos == '?' || *pos == '{') {
      uint64_t min_times = *pos == '+' ? 1 : 0;
      uint64_t max_times = *pos == '?' ? 1 : UINT64_MAX;
      if (*pos == '{') {
        if ((pos = parse_braces(parse_space(pos + 1, nested), nested, &min_times, &max_times)) == nullptr) return nullptr;
        if (min_times > kMaxRepetition) return fail(at, "number of repetitions exceeds " + std::to_string(kMaxRepetition));
        if (max_times != UINT64_MAX && max_times > kMaxRepetition) max_times = UINT64_MAX;  // as llama.cpp
      } else {
        ++pos;
      }
      if (!repeat(at, rule_name, rule, last_sym_start, n_prev_rules, min_times, max_times)) return nullptr;
    } else {
      break;
    }
    pos = parse_space(pos, nested);
  }
  return pos;
}

const char* Parser::parse_alternates(const char* pos, const std::string& rule_name, uint32_t rule_id, int depth) {
  std::vector<GrammarElement> rule;
  if ((pos = parse_sequence(pos, rule_name, rule, depth)) == nullptr) return nullptr;
  while (*pos == '|') {
    rule.push_back({GrammarOp::kAlt, 0});
    pos = parse_space(pos + 1, true);
    if ((pos = parse_sequence(pos, rule_name, rule, depth)) == nullptr) return nullptr;
  }
  rule.push_back({GrammarOp::kEnd, 0});
  if (!add_rule(rule_id, std::move(rule), pos)) return nullptr;
  return pos;
}

const char* Parser::parse_rule(const char* pos) {
  const char* name_start = pos;
  while (is_word_char(*pos)) ++pos;
  if (pos == name_start) return fail(pos, "expecting rule name, found '" + std::string(rest_preview(pos)) + "'");
  const std::string name(name_start, pos);
  const uint32_t id = symbol_id(name, name_start);
  pos = parse_space(pos, false);
  if (!(pos[0] == ':' && pos[1] == ':' && pos[2] == '=')) return fail(pos, "expecting ::= after rule name '" + name + "'");
  pos = parse_space(pos + 3, true);
  if ((pos = parse_alternates(pos, name, id, 0)) == nullptr) return nullptr;
  if (*pos == '\r') {
    pos += pos[1] == '\n' ? 2 : 1;
  } else if (*pos == '\n') {
    ++pos;
  } else if (*pos != 0) {
    return fail(pos, "expecting newline or end, found '" + std::string(rest_preview(pos)) + "'");
  }
  return parse_space(pos, true);
}

Result<Grammar> Parser::run() {
  const size_t nul = text_.find('\0');
  if (nul != std::string::npos) {
    return error(ErrorCode::kInvalidArgument, "grammar: " + grammar_location(text_, nul) + ": NUL byte in grammar");
  }
  const char* pos = parse_space(text_.c_str(), true);
  if (*pos == 0) return error(ErrorCode::kInvalidArgument, "grammar: empty grammar (no rules)");
  while (*pos != 0) {
    if ((pos = parse_rule(pos)) == nullptr) return status_;
  }
  Grammar g;
  rules_.resize(names_.size());
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (!rules_[i].defined) {
      return error(ErrorCode::kInvalidArgument, "grammar: undefined rule '" + names_[i] + "' (referenced at " +
                                                    grammar_location(text_, first_use_[i]) + ")");
    }
    g.rules.push_back(std::move(rules_[i].elements));
  }
  auto root = symbol_ids_.find(options_.root);
  if (root == symbol_ids_.end()) return error(ErrorCode::kInvalidArgument, "grammar: no rule named '" + options_.root + "'");
  g.root = root->second;
  g.rule_names = std::move(names_);
  OX_TRY(check_grammar(g));
  return g;
}

}  // namespace

std::string grammar_location(std::string_view text, size_t offset) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return strfmt("line %zu, column %zu", line, offset - line_start + 1);
}

Result<Grammar> parse_grammar(std::string_view text, const GrammarParseOptions& options) {
  Parser parser(text, options);
  return parser.run();
}

}  // namespace ox
