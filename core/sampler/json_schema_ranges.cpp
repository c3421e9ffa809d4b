// Integer ranges as GBNF: the digit-by-digit construction of llama.cpp's build_min_max_int
// (common/json-schema-to-grammar.cpp), rewritten over a string builder. A range [min, max] is cut
// at each power of ten so every piece has a fixed number of digits, and each piece is written as
// a common prefix followed by a choice on the first differing digit.
#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

#include "core/sampler/json_schema.h"

namespace ox::json_schema_detail {
namespace {

class RangeWriter {
 public:
  std::string out;

  void digit_range(char from, char to) {
    out += '[';
    out += from;
    if (from != to) {
      out += '-';
      out += to;
    }
    out += ']';
  }

  void more_digits(int min_digits, int max_digits) {
    out += "[0-9]";
    if (min_digits == max_digits && min_digits == 1) return;
    out += "{" + std::to_string(min_digits);
    if (max_digits != min_digits) {
      out += ",";
      if (max_digits != std::numeric_limits<int>::max()) out += std::to_string(max_digits);
    }
    out += "}";
  }

  // Every number from `from` to `to`, both strings of the same length.
  void uniform_range(const std::string& from, const std::string& to) {
    size_t i = 0;
    while (i < from.size() && i < to.size() && from[i] == to[i]) ++i;
    if (i > 0) out += "\"" + from.substr(0, i) + "\"";
    if (i >= from.size() || i >= to.size()) return;
    if (i > 0) out += " ";
    const size_t sub_len = from.size() - i - 1;
    if (sub_len == 0) {
      digit_range(from[i], to[i]);
      return;
    }
    const std::string from_sub = from.substr(i + 1), to_sub = to.substr(i + 1);
    const std::string zeros(sub_len, '0'), nines(sub_len, '9');
    bool to_reached = false;
    out += "(";
    if (from_sub == zeros) {
      digit_range(from[i], static_cast<char>(to[i] - 1));
      out += " ";
      more_digits(static_cast<int>(sub_len), static_cast<int>(sub_len));
    } else {
      out += "[";
      out += from[i];
      out += "] (";
      uniform_range(from_sub, nines);
      out += ")";
      if (from[i] < to[i] - 1) {
        out += " | ";
        if (to_sub == nines) {
          digit_range(static_cast<char>(from[i] + 1), to[i]);
          to_reached = true;
        } else {
          digit_range(static_cast<char>(from[i] + 1), static_cast<char>(to[i] - 1));
        }
        out += " ";
        more_digits(static_cast<int>(sub_len), static_cast<int>(sub_len));
      }
    }
    if (!to_reached) {
      out += " | ";
      digit_range(to[i], to[i]);
      out += " ";
      uniform_range(zeros, to_sub);
    }
    out += ")";
  }

  void bounded(int64_t min, int64_t max) {  // min <= max, both set
    if (min < 0 && max < 0) {
      out += "\"-\" (";
      bounded(-max, -min);
      out += ")";
      return;
    }
    if (min < 0) {
      out += "\"-\" (";
      bounded(0, -min);
      out += ") | ";
      min = 0;
    }
    std::string min_s = std::to_string(min);
    const std::string max_s = std::to_string(max);
    for (size_t digits = min_s.size(); digits < max_s.size(); ++digits) {
      uniform_range(min_s, std::string(digits, '9'));
      min_s = "1" + std::string(digits, '0');
      out += " | ";
    }
    uniform_range(min_s, max_s);
  }

  void at_least(int64_t min, int decimals_left, bool top_level) {
    const int less_decimals = std::max(decimals_left - 1, 1);
    if (min < 0) {
      out += "\"-\" (";
      at_most_magnitude(-min, decimals_left);
      out += ") | [0] | [1-9] ";
      more_digits(0, decimals_left - 1);
    } else if (min == 0) {
      if (top_level) {
        out += "[0] | [1-9] ";
        more_digits(0, less_decimals);
      } else {
        more_digits(1, decimals_left);
      }
    } else if (min <= 9) {
      const char c = static_cast<char>('0' + min);
      const char range_start = top_level ? '1' : '0';
      if (c > range_start) {
        digit_range(range_start, static_cast<char>(c - 1));
        out += " ";
        more_digits(1, less_decimals);
        out += " | ";
      }
      digit_range(c, '9');
      out += " ";
      more_digits(0, less_decimals);
    } else {
      const std::string min_s = std::to_string(min);
      const int len = static_cast<int>(min_s.size());
      const char c = min_s[0];
      if (c > '1') {
        digit_range(top_level ? '1' : '0', static_cast<char>(c - 1));
        out += " ";
        more_digits(len, less_decimals);
        out += " | ";
      }
      digit_range(c, c);
      out += " (";
      int64_t rest = 0;
      std::from_chars(min_s.data() + 1, min_s.data() + min_s.size(), rest);
      at_least(rest, less_decimals, false);
      out += ")";
      if (c < '9') {
        out += " | ";
        digit_range(static_cast<char>(c + 1), '9');
        out += " ";
        more_digits(len - 1, less_decimals);
      }
    }
  }

  // llama.cpp's build_min_max_int(INT64_MIN, m, ..., top_level=false) for the magnitude of a
  // negative lower bound: it recurses with a max only, which writes [0, m].
  void at_most_magnitude(int64_t max, int decimals_left) { at_most(max, decimals_left, false); }

  void at_most(int64_t max, int decimals_left, bool top_level) {
    const int less_decimals = std::max(decimals_left - 1, 1);
    if (max >= 0) {
      if (top_level) {
        out += "\"-\" [1-9] ";
        more_digits(0, less_decimals);
        out += " | ";
      }
      bounded(0, max);
    } else {
      // llama.cpp passes top_level=false here, which lets the magnitude start with 0 ("-07",
      // not JSON); a magnitude is a top-level number.
      out += "\"-\" (";
      at_least(-max, decimals_left, true);
      out += ")";
    }
  }
};

}  // namespace

std::string integer_range(int64_t min, bool has_min, int64_t max, bool has_max) {
  RangeWriter w;
  if (has_min && has_max) {
    w.bounded(min, max);
  } else if (has_min) {
    w.at_least(min, 16, true);
  } else if (has_max) {
    w.at_most(max, 16, true);
  } else {
    w.out = "\"-\"? ([0] | [1-9] [0-9]{0,15})";
  }
  return w.out;
}

}  // namespace ox::json_schema_detail
