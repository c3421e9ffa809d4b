// Runtime errors (what jinja2 raises, reported with the template line) and hostile templates:
// deep nesting, runaway loops and recursion, exploding strings and lists all end in an error
// instead of a crash, a hang or exhausted memory.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/core/chat/render_helpers.h"

namespace ox::chat {
namespace {

struct RuntimeError {
  const char* tmpl;
  const char* context;
  const char* message;  // full message: "line N: " + what jinja2's exception says
};

const RuntimeError kRuntimeErrors[] = {
    {"{{ 1 + 'a' }}", "{}", "line 1: unsupported operand type(s) for +: 'int' and 'str'"},
    {"\n{{ 'a' + 1 }}", "{}", "line 2: can only concatenate str (not \"int\") to str"},
    {"{{ x.y }}", "{}", "line 1: 'x' is undefined"},
    {"{{ d.a.b }}", R"({"d": {}})", "line 1: 'dict object' has no attribute 'a'"},
    {"{{ l[5].x }}", R"({"l": [1]})", "line 1: list object has no element 5"},
    {"{{ nothing() }}", "{}", "line 1: 'nothing' is undefined"},
    {"{{ [1, 2] < 'a' }}", "{}", "line 1: '<' not supported between instances of 'list' and 'str'"},
    {"{{ 1 / 0 }}", "{}", "line 1: division by zero"},
    {"{{ 5 % 0 }}", "{}", "line 1: integer modulo by zero"},
    {"{% for a, b in [1] %}{% endfor %}", "{}", "line 1: cannot unpack non-iterable int object"},
    {"{% for a, b in ['abc'] %}{% endfor %}", "{}", "line 1: too many values to unpack (expected 2)"},
    {"{% for x in none %}{% endfor %}", "{}", "line 1: 'NoneType' object is not iterable"},
    {"{% set x = 5 %}{% set x.y = 1 %}", "{}", "line 1: cannot assign attribute on non-namespace object 'x'"},
    {"{{ nothing | tojson }}", "{}", "line 1: Object of type Undefined is not JSON serializable"},
    {"{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "{}", "line 1: macro 'm' takes not more than 1 argument(s)"},
    {"{% macro m(a) %}{% endmacro %}{{ m(b=1) }}", "{}", "line 1: macro 'm' takes no keyword argument 'b'"},
    {"{{ {[1]: 2} }}", "{}", "line 1: unhashable type: 'list'"},
    {"{{ 'x' in 1 }}", "{}", "line 1: argument of type 'int' is not iterable"},
    {"{{ 1 in 'abc' }}", "{}", "line 1: 'in <string>' requires string as left operand, not int"},
    {"{{ l.append(2) }}", R"({"l": [1]})", "line 1: access to attribute 'append' of 'list' object is unsafe"},
    {"{{ d.update({}) }}", R"({"d": {}})", "line 1: access to attribute 'update' of 'dict' object is unsafe"},
    {"{{ ''.__class__() }}", "{}", "line 1: access to attribute '__class__' of 'str' object is unsafe"},
    {"{{ 5() }}", "{}", "line 1: 'int' object is not callable"},
    {"{{ 'a'.split('') }}", "{}", "line 1: empty separator"},
    {"{{ -'a' }}", "{}", "line 1: bad operand type for unary -: 'str'"},
    {"{{ 3 | length }}", "{}", "line 1: object of type 'int' has no len()"},
    {"{{ 1 | items | list }}", "{}", "line 1: Can only get item pairs from a mapping."},
    {"{{ 'a' | trim('x', 'y') }}", "{}", "line 1: trim() takes at most 1 argument(s) (2 given)"},
    {"{{ [1, 'a'] | sort }}", "{}", "line 1: '<' not supported between instances of 'str' and 'int'"},
    // Python has big integers; the engine stops at 64 bits with an error instead of wrapping.
    {"{{ 9223372036854775807 + 1 }}", "{}", "line 1: integer overflow (the template engine uses 64-bit integers)"},
    {"{% if x %}\n\n{{ x.y.z.w }}{% endif %}", R"({"x": {"y": 1}})", "line 3: 'int object' has no attribute 'z'"},
    {"{{ '%d' % 'x' }}", "{}", "line 1: %d format: a real number is required, not str"},
    {"{{ '{}{}'.format(1) }}", "{}", "line 1: Replacement index 1 out of range for positional args tuple"},
};

TEST(InterpErrors, RuntimeErrorsNameTheLine) {
  for (const RuntimeError& e : kRuntimeErrors) {
    EXPECT_EQ(test::render(e.tmpl, e.context), std::string("ERROR: ") + e.message) << e.tmpl;
  }
}

TEST(InterpErrors, RaiseExceptionCarriesTheMessage) {
  nlohmann::json ctx;
  ctx["messages"] = nlohmann::json::parse(R"([{"role": "system", "content": "x"}])", nullptr, false);
  Result<std::string> r = render_template(
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "line 1: raise_exception: System role not supported");
}

// Renders and reports how long it took; hostile templates must stop quickly.
std::string timed_render(const std::string& tmpl, double* seconds, const RenderOptions& o = test::fixed_clock()) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string out = test::render(tmpl, "{}", o);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

struct Hostile {
  const char* name;
  std::string tmpl;
  const char* message;
  // Builds with bigger stack frames (sanitizers) may reach the stack bound first; both are fine.
  bool stack_bound_ok = false;
};

const char kStackBound[] = "ERROR: line 1: template nesting used more than 524288 bytes of stack";

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(InterpErrors, HostileTemplatesEndInAnError) {
  const Hostile cases[] = {
      {"nested parentheses", "{{ " + repeat("(", 5000) + "1" + repeat(")", 5000) + " }}",
       "ERROR: line 1, column 79: template nested too deeply (more than 150 levels)"},
      {"nested ifs", repeat("{% if true %}", 2000) + repeat("{% endif %}", 2000),
       "ERROR: line 1, column 1931: template nested too deeply (more than 150 levels)"},
      {"long chain of +", "{{ 1" + repeat(" + 1", 20000) + " }}",
       "ERROR: line 1, column 602: expression nested too deeply (more than 150 levels)"},
      {"long filter chain", "{{ 'x'" + repeat("|trim", 20000) + " }}",
       "ERROR: line 1, column 753: expression nested too deeply (more than 150 levels)"},
      {"nested lists", "{{ " + repeat("[", 3000) + repeat("]", 3000) + " }}",
       "ERROR: line 1, column 79: template nested too deeply (more than 150 levels)"},
      {"nested loops", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
       "ERROR: line 1: template exceeded 2000000 loop iterations and macro calls"},
      {"busy loop body", "{% for i in range(100000) %}{% for j in range(100000) %}{{ (i + j) * 2 - i }}{% endfor %}{% endfor %}",
       "ERROR: line 1: template exceeded 10000000 expression evaluations"},
      {"infinite recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "ERROR: line 1: macro calls nested deeper than 48",
       true},
      {"recursion through deep expressions",
       "{% macro f(n) %}{% if n > 0 %}{{ " + repeat("(1 + ", 60) + "f(n - 1)|length" + repeat(")", 60) +
           " }}{% endif %}{% endmacro %}{{ f(47) }}",
       "ERROR: line 1: template nesting used more than 524288 bytes of stack"},
      {"exponential recursion",
       "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
       "ERROR: line 1: template exceeded 2000000 loop iterations and macro calls", true},
      {"doubling string",
       "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
       "ERROR: line 1: template built a string of 134217728 bytes (limit 67108864)"},
      {"huge repeat", "{{ 'ab' * 100000000000 }}", "ERROR: line 1: template built a string of 200000000000 bytes (limit 67108864)"},
      {"huge output", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "ERROR: line 1: template output exceeds 67108864 bytes"},
      {"doubling list",
       "{% set ns = namespace(l=[0]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
       "ERROR: line 1: template built a list of 4194304 items (limit 4000000)"},
      {"deep values", "{% set ns = namespace(v=[]) %}{% for i in range(1000) %}{% set ns.v = [ns.v] %}{% endfor %}",
       "ERROR: line 1: template built values nested deeper than 250"},
      {"huge range", "{{ range(10**12) | length }}",
       "ERROR: line 1: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
      {"huge indent", "{{ 'a\\nb' | indent(10**12) }}", "ERROR: line 1: template built a string of 1000000000000 bytes (limit 67108864)"},
      {"self-referencing namespace", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}",
       "<Namespace {'me': <Namespace {...}>}>"},
      {"long namespace chain",
       "{% set ns = namespace(v=none) %}{% for i in range(50000) %}{% set ns.v = namespace(v=[ns.v]) %}{% endfor %}"
       "{{ (ns | string) | length > 0 }}",
       "True"},
  };
  for (const Hostile& h : cases) {
    double seconds = 0;
    const std::string got = timed_render(h.tmpl, &seconds);
    if (h.stack_bound_ok && got == kStackBound) continue;
    EXPECT_EQ(got, h.message) << h.name;
    EXPECT_LT(seconds, 30.0) << h.name;  // generous for slow wasm runners; typically well under 2 s
  }
}

TEST(InterpErrors, LimitsAreConfigurable) {
  RenderOptions o = test::fixed_clock();
  o.max_steps = 10;
  EXPECT_EQ(test::render("{% for i in range(11) %}{% endfor %}", "{}", o),
            "ERROR: line 1: template exceeded 10 loop iterations and macro calls");
  EXPECT_EQ(test::render("{% for i in range(10) %}{% endfor %}ok", "{}", o), "ok");
  o = test::fixed_clock();
  o.max_output_bytes = 5;
  EXPECT_EQ(test::render("123456", "{}", o), "ERROR: template output exceeds 5 bytes");
  o.max_output_bytes = 64;
  o.max_call_depth = 3;
  EXPECT_EQ(test::render("{% macro f(n) %}{{ f(n + 1) if n < 10 else n }}{% endmacro %}{{ f(0) }}", "{}", o),
            "ERROR: line 1: macro calls nested deeper than 3");
  o = test::fixed_clock();
  o.max_stack_bytes = 8 << 10;
  EXPECT_EQ(test::render("{% macro f(n) %}{{ f(n - 1) if n > 0 else 'end' }}{% endmacro %}{{ f(40) }}", "{}", o),
            "ERROR: line 1: template nesting used more than 8192 bytes of stack");
  RenderOptions big = test::fixed_clock();
  big.max_steps = 200;
  Result<std::string> r = render_template("{% for i in range(150) %}{% endfor %}", nlohmann::json::object(), big);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kOk);
  r = render_template("{% for i in range(250) %}{% endfor %}", nlohmann::json::object(), big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kTooLarge);
}

TEST(InterpErrors, DeeplyNestedContextIsRejected) {
  std::string deep = repeat("[", 5000) + repeat("]", 5000);
  nlohmann::json ctx;
  ctx["x"] = nlohmann::json::parse(deep, nullptr, false);
  ASSERT_FALSE(ctx["x"].is_discarded());
  Result<std::string> r = render_template("{{ x }}", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "context key 'x': template context JSON nests deeper than 200 levels");
}

}  // namespace
}  // namespace ox::chat
