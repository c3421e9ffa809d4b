// JSON Schema `number` bounds as GBNF: minimum / maximum / exclusiveMinimum / exclusiveMaximum,
// integer or fractional. llama.cpp's converter leaves numbers unconstrained (it bounds integers
// only), so this is our own construction: the sign picks a half, the integer part an interval
// (integer_range) and, where it equals a bound's integer part, the fraction is compared with the
// bound's decimal digits one digit at a time.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/json_schema.h"

namespace ox::json_schema_detail {
namespace {

using Opt = std::optional<std::string>;

constexpr int kMaxFraction = 16;     // fraction digits, as the unbounded number rule
constexpr int kSignificant = 15;     // DBL_DIG: such decimals stay distinct as doubles

// A bound on the magnitude |x|: integer part, fraction digits (no trailing zeros), strictness.
struct Magnitude {
  int64_t whole = 0;
  std::string frac;
  bool strict = false;
};

int digit_count(int64_t v) { return v < 10 ? 1 : 1 + digit_count(v / 10); }

std::string digit_class(char from, char to) {
  if (from == to) return std::string("\"") + from + "\"";
  return std::string("[") + from + "-" + to + "]";
}

// Fraction digits after a bound's integer part: `lo` / `hi` constrain them while the digits so far
// equal the bound's (tight); `cap` is the most digits written.
class FractionWriter {
 public:
  FractionWriter(const Magnitude* lo, const Magnitude* hi, int cap) : lo_(lo), hi_(hi), cap_(cap) {}

  // The optional ".digits" part, or nullopt when no fraction satisfies the bounds.
  Opt part() const {
    const Opt d = digits(0, lo_ != nullptr, hi_ != nullptr);
    const bool end = end_ok(0, lo_ != nullptr, hi_ != nullptr);
    if (!d) return end ? Opt(std::string()) : std::nullopt;
    const std::string dotted = "\".\" " + *d;
    return end ? "(" + dotted + ")?" : dotted;
  }

 private:
  // The digits may end at position j: the rest is zero, which must still satisfy a tight bound.
  bool end_ok(size_t j, bool tl, bool th) const {
    if (tl && (j < lo_->frac.size() || lo_->strict)) return false;
    if (th && j >= hi_->frac.size() && hi_->strict) return false;
    return true;
  }

  // Zero or more digits from position j.
  Opt tail(size_t j, bool tl, bool th) const {
    const Opt d = digits(j, tl, th);
    const bool end = end_ok(j, tl, th);
    if (!d) return end ? Opt(std::string()) : std::nullopt;
    return end ? "(" + *d + ")?" : *d;
  }

  // One or more digits from position j.
  Opt digits(size_t j, bool tl, bool th) const {
    if (j >= static_cast<size_t>(cap_)) return std::nullopt;
    const std::string any_rest =
        static_cast<int>(j) + 1 < cap_ ? " [0-9]{0," + std::to_string(cap_ - static_cast<int>(j) - 1) + "}" : "";
    if (!tl && !th) return "[0-9]" + any_rest;
    const char lo_d = tl ? (j < lo_->frac.size() ? lo_->frac[j] : '0') : '0';
    const char hi_d = th ? (j < hi_->frac.size() ? hi_->frac[j] : '0') : '9';
    if (lo_d > hi_d) return std::nullopt;
    std::vector<std::string> alts;
    char free_from = tl ? static_cast<char>(lo_d + 1) : lo_d;
    char free_to = th ? static_cast<char>(hi_d - 1) : hi_d;
    if (free_from <= free_to) alts.push_back(digit_class(free_from, free_to) + any_rest);
    if (tl && th && lo_d == hi_d) {
      if (Opt t = tail(j + 1, true, true)) alts.push_back(digit_class(lo_d, lo_d) + " " + *t);
    } else {
      if (tl) {
        if (Opt t = tail(j + 1, true, false)) alts.push_back(digit_class(lo_d, lo_d) + " " + *t);
      }
      if (th) {
        if (Opt t = tail(j + 1, false, true)) alts.push_back(digit_class(hi_d, hi_d) + " " + *t);
      }
    }
    if (alts.empty()) return std::nullopt;
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i > 0 ? " | " : "") + alts[i];
    return out + ")";
  }

  const Magnitude* lo_;
  const Magnitude* hi_;
  int cap_;
};

// Fraction digits allowed after the integer part `whole` next to a bound: at most 15 significant
// digits in all, so a validator reading the number as a double compares it as written.
int fraction_cap(int64_t whole) { return std::min(kMaxFraction, whole == 0 ? kSignificant : kSignificant - digit_count(whole)); }

std::string lit(int64_t v) { return "\"" + std::to_string(v) + "\""; }

// |x| between lo and hi (none: unbounded) without a sign, or nullopt when nothing lies between.
Opt magnitude(const Magnitude& lo, const Magnitude* hi) {
  const std::string any_frac = "(\".\" [0-9]{1," + std::to_string(kMaxFraction) + "})?";
  std::vector<std::string> alts;
  if (hi != nullptr && lo.whole > hi->whole) return std::nullopt;
  const int64_t a = lo.whole + 1, b = hi != nullptr ? hi->whole - 1 : 0;
  if (hi == nullptr || a <= b) alts.push_back("(" + integer_range(a, true, b, hi != nullptr) + ") " + any_frac);
  if (hi != nullptr && lo.whole == hi->whole) {
    if (Opt f = FractionWriter(&lo, hi, fraction_cap(lo.whole)).part()) alts.push_back(lit(lo.whole) + " " + *f);
  } else {
    if (Opt f = FractionWriter(&lo, nullptr, fraction_cap(lo.whole)).part()) alts.push_back(lit(lo.whole) + " " + *f);
    if (hi != nullptr) {
      if (Opt f = FractionWriter(nullptr, hi, fraction_cap(hi->whole)).part()) alts.push_back(lit(hi->whole) + " " + *f);
    }
  }
  if (alts.empty()) return std::nullopt;
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i > 0 ? " | " : "") + alts[i];
  return out + ")";
}

// |value| as a Magnitude, or an error naming the keyword.
Result<Magnitude> magnitude_of(const NumberBound& b, const char* what) {
  // The shortest fixed-point text that reads back as the same double (printf, as wasm's libc++ has
  // no floating-point to_chars).
  const double v = std::fabs(b.value);
  std::string text;
  for (int decimals = 0; decimals <= 24; ++decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    text = buf;
    if (std::strtod(buf, nullptr) == v) break;
  }
  const size_t dot = text.find('.');
  Magnitude m;
  m.strict = b.exclusive;
  m.whole = static_cast<int64_t>(std::floor(v));
  if (dot != std::string::npos) m.frac = text.substr(dot + 1);
  while (!m.frac.empty() && m.frac.back() == '0') m.frac.pop_back();
  size_t significant = std::to_string(m.whole).size() + m.frac.size();
  if (m.whole == 0) significant = m.frac.size() - std::min(m.frac.size(), m.frac.find_first_not_of('0'));
  if (significant > static_cast<size_t>(kSignificant)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s %s has more than %d significant digits (not supported: a double cannot compare them)", what,
                        text.c_str(), kSignificant));
  }
  return m;
}

}  // namespace

Result<std::string> number_range(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi) {
  for (const auto* b : {&lo, &hi}) {
    if (*b && !(std::fabs((*b)->value) <= 1e15)) {
      return error(ErrorCode::kInvalidArgument, std::string((*b)->keyword) + " beyond +-1e15 is not supported");
    }
  }
  std::vector<std::string> halves;
  // Non-negative values, written without a sign.
  if (!hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive)) {
    Magnitude from;  // 0 inclusive unless the lower bound is above it
    if (lo && lo->value >= 0) {
      OX_ASSIGN_OR_RETURN(from, magnitude_of(*lo, lo->keyword));
    }
    Magnitude to;
    if (hi) {
      OX_ASSIGN_OR_RETURN(to, magnitude_of(*hi, hi->keyword));
    }
    if (Opt m = magnitude(from, hi ? &to : nullptr)) halves.push_back(*m);
  }
  // Negative values: "-" and the magnitude between -hi (or 0) and -lo.
  if (!lo || lo->value < 0) {
    Magnitude from;
    from.strict = true;  // -0 is left to the other half (or excluded with it)
    if (hi && hi->value < 0) {
      OX_ASSIGN_OR_RETURN(from, magnitude_of(*hi, hi->keyword));
    }
    Magnitude to;
    if (lo) {
      OX_ASSIGN_OR_RETURN(to, magnitude_of(*lo, lo->keyword));
    }
    if (Opt m = magnitude(from, lo ? &to : nullptr)) halves.push_back("\"-\" " + *m);
  }
  if (halves.empty()) return error(ErrorCode::kInvalidArgument, "no number lies within the bounds");
  std::string out = "(";
  for (size_t i = 0; i < halves.size(); ++i) out += (i > 0 ? " | " : "") + halves[i];
  return out + ")";
}

}  // namespace ox::json_schema_detail
