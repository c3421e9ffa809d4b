// Builtins of the template language: jinja2's filters and tests, the methods of str/dict/list
// that templates call, and the globals (range, dict, namespace, raise_exception, strftime_now).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/chat/interp.h"
#include "core/chat/value.h"

namespace ox::chat {

bool is_filter_name(std::string_view name);
bool is_test_name(std::string_view name);

Result<Value> call_filter(Interp& in, std::string_view name, const Value& input, CallArgs& args);
Result<bool> call_test(Interp& in, std::string_view name, const Value& input, CallArgs& args);

// obj.name for str/dict/list methods: a bound method, an "unsafe" Undefined for methods the
// immutable sandbox forbids (append, update, ...), or nullopt when there is no such method.
std::optional<Value> bound_method(const Value& obj, const std::string& name);

// strftime(fmt) for a fixed time, C locale (what strftime_now() returns).
std::string format_time(const DateTime& t, std::string_view fmt);

// Puts range, dict, namespace, raise_exception, strftime_now, joiner, cycler into `scope`.
void add_globals(Scope* scope);

// Python-style argument binding: fills out[i] for params[i] from positional then keyword
// arguments (nullptr when absent). Errors on surplus or unknown arguments, naming `fn`.
Status bind_args(const CallArgs& args, const char* fn, std::initializer_list<const char*> params,
                 std::vector<const Value*>* out);

// Error builders shared by the builtins.
Status type_error(const std::string& msg);
Status undefined_error(const Value& undefined);

// Python str operations on UTF-8 text (pystr.cpp).
namespace pystr {
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::string* sep, int64_t maxsplit);
Result<std::string> replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count,
                            uint64_t max_bytes);
std::string title(std::string_view s);           // str.title()
std::string jinja_title(std::string_view s);     // the title filter (splits on -, space, brackets)
std::string capitalize(std::string_view s);
std::string swapcase(std::string_view s);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string indent(std::string_view s, const std::string& pad, bool first, bool blank);
int64_t count(std::string_view s, std::string_view sub);
// Code point index of sub in s[start:end] (negative: -1); `last` searches from the right.
int64_t find(std::string_view s, std::string_view sub, int64_t start, int64_t end, bool last);
bool is_all(std::string_view s, bool (*pred)(uint32_t));
// "%s is %d" % args (Python printf-style formatting).
Result<std::string> percent_format(std::string_view fmt, const Value& args);
// "{} {name}".format(*args, **kwargs) (the common subset of str.format).
Result<std::string> brace_format(std::string_view fmt, const CallArgs& args);
}  // namespace pystr

}  // namespace ox::chat
