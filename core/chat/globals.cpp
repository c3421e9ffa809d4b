// Global functions templates can call: range (capped like jinja2's sandbox), dict, namespace,
// joiner, and transformers' raise_exception and strftime_now (time injectable for tests).
#include <ctime>

#include "core/chat/builtins.h"

namespace ox::chat {

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

Value native(const char* name, NativeFn fn) {
  auto c = std::make_shared<Callable>();
  c->name = name;
  c->fn = std::move(fn);
  return Value::object(Kind::kCallable, std::move(c));
}

Result<Value> range(Interp&, CallArgs& a) {
  if (!a.kwargs.empty()) return type_error("range() takes no keyword arguments");
  if (a.args.empty() || a.args.size() > 3) return type_error("range expected 1 to 3 arguments");
  for (const Value& v : a.args) {
    if (!v.is_int()) return type_error(strfmt("'%s' object cannot be interpreted as an integer", type_name(v)));
  }
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
  if (a.args.size() == 1) {
    stop = a.args[0].get_int();
  } else {
    start = a.args[0].get_int();
    stop = a.args[1].get_int();
    if (a.args.size() == 3) step = a.args[2].get_int();
  }
  if (step == 0) return type_error("range() arg 3 must not be zero");
  // Count in unsigned arithmetic: stop - start can exceed int64 for hostile bounds.
  uint64_t n = 0;
  if (step > 0 && start < stop) {
    n = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1;
  } else if (step < 0 && start > stop) {
    n = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / (0 - static_cast<uint64_t>(step)) + 1;
  }
  if (n > static_cast<uint64_t>(kMaxRange)) {
    return error(ErrorCode::kTooLarge, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  ValueList out;
  const auto count = static_cast<int64_t>(n);
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(Value::integer(start + i * step));
  return Value::list(std::move(out));
}

// dict(mapping_or_pairs, **kwargs), also the constructor behind namespace().
Result<Dict> make_dict(Interp& in, CallArgs& a, const char* fn) {
  if (a.args.size() > 1) return type_error(strfmt("%s expected at most 1 argument, got %zu", fn, a.args.size()));
  Dict d;
  if (a.args.size() == 1) {
    const Value& src = a.args[0];
    if (src.is_dict()) {
      d = src.dict();
    } else {
      OX_ASSIGN_OR_RETURN(ValueList pairs, in.iterate(src));
      for (const Value& pair : pairs) {
        OX_ASSIGN_OR_RETURN(ValueList kv, in.iterate(pair));
        if (kv.size() != 2) return type_error("dictionary update sequence element has the wrong length; 2 is required");
        OX_TRY(d.set(kv[0], kv[1]));
      }
    }
  }
  for (const auto& [k, v] : a.kwargs) OX_TRY(d.set(Value::string(k), v));
  return d;
}

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kDays[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

DateTime now_local() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return DateTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

}  // namespace

// strftime with the C locale's names, the directives Python's datetime passes to glibc,
// including glibc's "%-d" (no padding). Unknown directives are copied through.
std::string format_time(const DateTime& t, std::string_view fmt) {
  const int64_t days = days_from_civil(t.year, t.month, t.day);
  const int weekday = static_cast<int>(((days % 7) + 7 + 3) % 7);  // 0 = Monday; 1970-01-01 was a Thursday
  const int yday = static_cast<int>(days - days_from_civil(t.year, 1, 1)) + 1;
  const int month = (t.month >= 1 && t.month <= 12) ? t.month - 1 : 0;
  const int hour12 = t.hour % 12 == 0 ? 12 : t.hour % 12;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out += fmt[i];
      continue;
    }
    char c = fmt[++i];
    bool pad = true;
    if (c == '-' && i + 1 < fmt.size()) {
      pad = false;
      c = fmt[++i];
    }
    auto num = [&](int v, int width) { out += pad ? strfmt("%0*d", width, v) : std::to_string(v); };
    switch (c) {
      case 'Y': out += std::to_string(t.year); break;
      case 'y': num(t.year % 100, 2); break;
      case 'm': num(t.month, 2); break;
      case 'd': num(t.day, 2); break;
      case 'e': out += pad ? strfmt("%2d", t.day) : std::to_string(t.day); break;
      case 'H': num(t.hour, 2); break;
      case 'I': num(hour12, 2); break;
      case 'M': num(t.minute, 2); break;
      case 'S': num(t.second, 2); break;
      case 'j': num(yday, 3); break;
      case 'p': out += t.hour < 12 ? "AM" : "PM"; break;
      case 'B': out += kMonths[month]; break;
      case 'b':
      case 'h': out += std::string(kMonths[month]).substr(0, 3); break;
      case 'A': out += kDays[weekday]; break;
      case 'a': out += std::string(kDays[weekday]).substr(0, 3); break;
      case 'u': out += std::to_string(weekday + 1); break;
      case 'w': out += std::to_string((weekday + 1) % 7); break;
      case 'D': out += strfmt("%02d/%02d/%02d", t.month, t.day, t.year % 100); break;
      case 'F': out += strfmt("%d-%02d-%02d", t.year, t.month, t.day); break;
      case 'T': out += strfmt("%02d:%02d:%02d", t.hour, t.minute, t.second); break;
      case 'R': out += strfmt("%02d:%02d", t.hour, t.minute); break;
      case 'c':
        out += strfmt("%s %s %2d %02d:%02d:%02d %d", std::string(kDays[weekday]).substr(0, 3).c_str(),
                      std::string(kMonths[month]).substr(0, 3).c_str(), t.day, t.hour, t.minute, t.second, t.year);
        break;
      case 'x': out += strfmt("%02d/%02d/%02d", t.month, t.day, t.year % 100); break;
      case 'X': out += strfmt("%02d:%02d:%02d", t.hour, t.minute, t.second); break;
      case 'Z':
      case 'z': break;  // naive local time has no zone
      case '%': out += '%'; break;
      default:
        out += '%';
        if (!pad) out += '-';
        out += c;
    }
  }
  return out;
}

void add_globals(Scope* scope) {
  scope->set("range", native("range", range));
  scope->set("dict", native("dict", [](Interp& in, CallArgs& a) -> Result<Value> {
               OX_ASSIGN_OR_RETURN(Dict d, make_dict(in, a, "dict"));
               return Value::dict(std::move(d));
             }));
  scope->set("namespace", native("namespace", [](Interp& in, CallArgs& a) -> Result<Value> {
               OX_ASSIGN_OR_RETURN(Dict d, make_dict(in, a, "namespace"));
               Value ns = in.make_namespace();
               for (const auto& [k, v] : d.entries()) ns.as<Namespace>()->set(to_str(k), v);
               return ns;
             }));
  scope->set("raise_exception", native("raise_exception", [](Interp&, CallArgs& a) -> Result<Value> {
               const std::string msg = a.args.empty() ? std::string() : to_str(a.args[0]);
               return error(ErrorCode::kInvalidArgument, "raise_exception: " + msg);
             }));
  scope->set("strftime_now", native("strftime_now", [](Interp& in, CallArgs& a) -> Result<Value> {
               std::vector<const Value*> p;
               OX_TRY(bind_args(a, "strftime_now", {"format"}, &p));
               if (p[0] == nullptr || !p[0]->is_string()) return type_error("strftime_now() needs a format string");
               const DateTime t = in.options().now ? *in.options().now : now_local();
               return Value::string(format_time(t, p[0]->str()));
             }));
  scope->set("joiner", native("joiner", [](Interp&, CallArgs& a) -> Result<Value> {
               std::vector<const Value*> p;
               OX_TRY(bind_args(a, "joiner", {"sep"}, &p));
               auto used = std::make_shared<bool>(false);
               const std::string sep = p[0] != nullptr ? to_str(*p[0]) : ", ";
               return native("joiner", [used, sep](Interp&, CallArgs&) -> Result<Value> {
                 if (!*used) {
                   *used = true;
                   return Value::string("");
                 }
                 return Value::string(sep);
               });
             }));
}

}  // namespace ox::chat
