// Python's arithmetic on template values (+ - * / // % ** with int/float promotion, str and
// list concatenation and repetition, floor division and modulo signs) and slicing.
#include <cmath>

#include "core/chat/builtins.h"
#include "core/chat/interp.h"
#include "core/chat/unicode.h"

namespace ox::chat {

namespace {

const char* op_symbol(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kDiv: return "/";
    case BinOp::kFloorDiv: return "//";
    case BinOp::kMod: return "%";
    case BinOp::kPow: return "** or pow()";
  }
  return "?";
}

Status unsupported(BinOp op, const Value& a, const Value& b) {
  return type_error(strfmt("unsupported operand type(s) for %s: '%s' and '%s'", op_symbol(op), type_name(a), type_name(b)));
}

Status overflow() { return type_error("integer overflow (the template engine uses 64-bit integers)"); }

// Python's float floor division and modulo (results take the divisor's sign).
void float_divmod(double vx, double wx, double* floordiv, double* modulo) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  double fd;
  if (div != 0.0) {
    fd = std::floor(div);
    if (div - fd > 0.5) fd += 1.0;
  } else {
    fd = std::copysign(0.0, vx / wx);
  }
  *floordiv = fd;
  *modulo = mod;
}

Result<Value> int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) return overflow();
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
  }
  return Value::integer(result);
}

Result<Value> numeric(BinOp op, const Value& a, const Value& b) {
  const bool ints = a.kind() != Kind::kFloat && b.kind() != Kind::kFloat;
  if (ints) {
    const int64_t x = a.get_int();
    const int64_t y = b.get_int();
    int64_t r = 0;
    switch (op) {
      case BinOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return overflow();
        return Value::integer(r);
      case BinOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return overflow();
        return Value::integer(r);
      case BinOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return overflow();
        return Value::integer(r);
      case BinOp::kDiv:
        if (y == 0) return type_error("division by zero");
        return Value::real(static_cast<double>(x) / static_cast<double>(y));
      case BinOp::kFloorDiv:
      case BinOp::kMod: {
        if (y == 0) return type_error(op == BinOp::kMod ? "integer modulo by zero" : "integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) return overflow();
        int64_t q = x / y;
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          m += y;
          q -= 1;
        }
        return Value::integer(op == BinOp::kMod ? m : q);
      }
      case BinOp::kPow:
        if (y >= 0) return int_pow(x, y);
        if (x == 0) return type_error("0.0 cannot be raised to a negative power");
        return Value::real(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
  }
  const double x = a.get_float();
  const double y = b.get_float();
  switch (op) {
    case BinOp::kAdd: return Value::real(x + y);
    case BinOp::kSub: return Value::real(x - y);
    case BinOp::kMul: return Value::real(x * y);
    case BinOp::kDiv:
      if (y == 0.0) return type_error("float division by zero");
      return Value::real(x / y);
    case BinOp::kFloorDiv:
    case BinOp::kMod: {
      if (y == 0.0) return type_error(op == BinOp::kMod ? "float modulo" : "float floor division by zero");
      double fd = 0.0;
      double mod = 0.0;
      float_divmod(x, y, &fd, &mod);
      return Value::real(op == BinOp::kMod ? mod : fd);
    }
    case BinOp::kPow:
      if (x == 0.0 && y < 0.0) return type_error("0.0 cannot be raised to a negative power");
      return Value::real(std::pow(x, y));
  }
  return unsupported(op, a, b);
}

Result<Value> repeat(const Value& seq, int64_t n, const Interp& in) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const uint64_t total = static_cast<uint64_t>(seq.str().size()) * static_cast<uint64_t>(n);
    if (!seq.str().empty() && total / seq.str().size() != static_cast<uint64_t>(n)) return in.check_string_size(UINT64_MAX);
    OX_TRY(in.check_string_size(total));
    const std::string& s = seq.str();
    std::string out;
    out.reserve(total);
    if (s.size() == 1) {
      out.assign(static_cast<size_t>(total), s[0]);
    } else {
      for (int64_t i = 0; i < n; ++i) out += s;
    }
    return Value::string(std::move(out));
  }
  const uint64_t total = static_cast<uint64_t>(seq.items().size()) * static_cast<uint64_t>(n);
  if (!seq.items().empty()) OX_TRY(in.check_list_size(n > 0 && total / n != seq.items().size() ? UINT64_MAX : total));
  ValueList out;
  if (!seq.items().empty()) out.reserve(total);
  for (int64_t i = 0; i < n && !seq.items().empty(); ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return seq.kind() == Kind::kTuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

}  // namespace

Result<Value> binary_op(BinOp op, const Value& a, const Value& b, const Interp& in) {
  if (a.is_undefined()) return undefined_error(a);
  if (op == BinOp::kMod && a.is_string()) {  // str % x: x is only touched by the format's fields
    OX_ASSIGN_OR_RETURN(std::string s, pystr::percent_format(a.str(), b));
    return Value::string(std::move(s));
  }
  if (b.is_undefined()) return undefined_error(b);
  if (a.is_number() && b.is_number()) return numeric(op, a, b);
  if (op == BinOp::kAdd) {
    if (a.is_string() && b.is_string()) {
      OX_TRY(in.check_string_size(a.str().size() + b.str().size()));
      return Value::string(a.str() + b.str());
    }
    if (a.is_sequence() && a.kind() == b.kind()) {
      OX_TRY(in.check_list_size(a.items().size() + b.items().size()));
      ValueList out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.kind() == Kind::kTuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
    if (a.is_string() || a.kind() == Kind::kList || a.kind() == Kind::kTuple) {
      const char* t = type_name(a);
      return type_error(strfmt("can only concatenate %s (not \"%s\") to %s", t, type_name(b), t));
    }
  }
  if (op == BinOp::kMul) {
    if ((a.is_string() || a.is_sequence()) && b.is_int()) return repeat(a, b.get_int(), in);
    if (a.is_int() && (b.is_string() || b.is_sequence())) return repeat(b, a.get_int(), in);
  }
  if (op == BinOp::kMod && a.is_string()) {
    OX_ASSIGN_OR_RETURN(std::string s, pystr::percent_format(a.str(), b));
    return Value::string(std::move(s));
  }
  return unsupported(op, a, b);
}

Result<Value> unary_op(const std::string& op, const Value& v) {
  if (v.is_undefined()) return undefined_error(v);
  if (v.kind() == Kind::kFloat) return Value::real(op == "-" ? -v.get_float() : v.get_float());
  if (v.is_int()) {
    if (op == "+") return Value::integer(v.get_int());
    if (v.get_int() == INT64_MIN) return overflow();
    return Value::integer(-v.get_int());
  }
  return type_error(strfmt("bad operand type for unary %s: '%s'", op.c_str(), type_name(v)));
}

Result<Value> slice_value(const Value& v, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto get = [](const Value& x, int64_t* out) -> Status {
    if (x.is_none() || x.is_undefined()) return Status::ok();
    if (!x.is_int()) return type_error("slice indices must be integers or None");
    *out = x.get_int();
    return Status::ok();
  };
  int64_t step = 1;
  OX_TRY(get(step_v, &step));
  if (step == 0) return type_error("slice step cannot be zero");
  const bool ascii = v.is_string() && utf8::is_ascii(v.str());
  std::vector<uint32_t> offs;
  int64_t len = 0;
  if (v.is_string()) {
    if (!ascii) offs = utf8::offsets(v.str());
    len = ascii ? static_cast<int64_t>(v.str().size()) : static_cast<int64_t>(offs.size()) - 1;
  } else {
    len = static_cast<int64_t>(v.items().size());
  }
  const int64_t lower = step > 0 ? 0 : -1;
  const int64_t upper = step > 0 ? len : len - 1;
  auto adjust = [&](const Value& x, int64_t fallback, int64_t* out) -> Status {
    int64_t i = fallback;
    const bool given = !(x.is_none() || x.is_undefined());
    OX_TRY(get(x, &i));
    if (given) {
      if (i < 0) {
        i += len;
        if (i < lower) i = lower;
      } else if (i > upper) {
        i = upper;
      }
    }
    *out = i;
    return Status::ok();
  };
  int64_t start = 0;
  int64_t stop = 0;
  OX_TRY(adjust(start_v, step > 0 ? lower : upper, &start));
  OX_TRY(adjust(stop_v, step > 0 ? upper : lower, &stop));
  if (v.is_string()) {
    const std::string& s = v.str();
    std::string out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (ascii) {
        out += s[static_cast<size_t>(i)];
      } else {
        out.append(s, offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]);
      }
    }
    return Value::string(std::move(out));
  }
  ValueList out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(v.items()[static_cast<size_t>(i)]);
  return v.kind() == Kind::kTuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

}  // namespace ox::chat
