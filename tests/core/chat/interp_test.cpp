// Language semantics: whitespace control, literals, operators, loops, scoping, macros,
// call/filter blocks, attribute access, string methods, Undefined and globals. Each row's expected output was rendered by Python jinja2 3.1 configured like
// transformers (sandbox, trim_blocks, lstrip_blocks, loopcontrols, tojson without escaping).
#include <gtest/gtest.h>

#include "tests/core/chat/render_helpers.h"

namespace ox::chat {
namespace {

using test::Case;

const Case kLanguageCases[] = {
    {"trim_blocks", R"J({% if true %}
yes
{% endif %}
end)J", R"J({})J", R"J(yes
end)J"},
    {"lstrip_blocks", R"J(a
    {% if true %}
    x
    {% endif %}
b)J", R"J({})J", R"J(a
    x
b)J"},
    {"lstrip_not_var", R"J(a
    {{ 1 }}
b)J", R"J({})J", R"J(a
    1
b)J"},
    {"minus_strip", R"J(a  
  {%- if true -%}  
  x  
  {%- endif -%}  
  b)J", R"J({})J", R"J(axb)J"},
    {"plus_keeps", R"J(a
  {%+ if true %}x{% endif +%}
b)J", R"J({})J", R"J(a
  x
b)J"},
    {"var_minus", R"J(a 
 {{- 'x' -}} 
 b)J", R"J({})J", R"J(axb)J"},
    {"comment_trim", R"J(a
  {# note #}
b{#- x -#}  c)J", R"J({})J", R"J(a
bc)J"},
    {"raw_block", R"J({% raw %}{{ not evaluated }}{% endraw %}!)J", R"J({})J", R"J({{ not evaluated }}!)J"},
    {"trailing_newline", R"J(x
)J", R"J({})J", R"J(x)J"},
    {"crlf", R"J(a
{% if true %}
b
{% endif %}
c)J", R"J({})J", R"J(a
b
c)J"},
    {"text_after_inline_tag", R"J({% if true %}  x{% endif %})J", R"J({})J", R"J(  x)J"},
    {"print_types", R"J({{ none }}|{{ true }}|{{ 1 }}|{{ 1.5 }}|{{ 'a' }}|{{ [1, 'b', none, false] }}|{{ {'k': 'v', 2: [1.0]} }}|{{ (1,) }}|{{ () }})J", R"J({})J", R"J(None|True|1|1.5|a|[1, 'b', None, False]|{'k': 'v', 2: [1.0]}|(1,)|())J"},
    {"floats", R"J({{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 0.1 + 0.2 }} {{ 2.0 }} {{ -0.0 }} {{ 1/3 }})J", R"J({})J", R"J(1e+20 1e+16 1000000000000000.0 0.0001 1e-05 0.30000000000000004 2.0 -0.0 0.3333333333333333)J"},
    {"string_escapes", R"J({{ 'a\nb\tc\\d\'e' }}|{{ "q\"q" }}|{{ '\x41\u00e9\U0001F999' }}|{{ 'x\qy' }})J", R"J({})J", R"J(a
b	c\d'e|q"q|Aé🦙|x\qy)J"},
    {"string_repr", R"J({{ ["it's", 'say "hi"', 'both \' "', 'nl\n', 'é'] }})J", R"J({})J", R"J(["it's", 'say "hi"', 'both \' "', 'nl\n', 'é'])J"},
    {"adjacent_strings", R"J({{ 'a' 'b' "c" }})J", R"J({})J", R"J(abc)J"},
    {"int_literals", R"J({{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1e3 }} {{ 2.5e-3 }})J", R"J({})J", R"J(1000 31 15 5 1000.0 0.0025)J"},
    {"arith", R"J({{ 7 + 2 }} {{ 7 - 2 }} {{ 7 * 2 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }})J", R"J({})J", R"J(9 5 14 3.5 3 1 1024 -4 2 3.0 0.5)J"},
    {"precedence", R"J({{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 2 - 3 }} {{ not true or true }} {{ not (true or true) }})J", R"J({})J", R"J(7 9 64 4 5 True False)J"},
    {"bool_arith", R"J({{ true + 1 }} {{ true * 3 }} {{ 3 * 'ab' }} {{ 'ab' * 2 }} {{ [1] * 3 }} {{ [1] + [2] }} {{ 'a' ~ 1 ~ none }})J", R"J({})J", R"J(2 3 ababab abab [1, 1, 1] [1, 2] a1None)J"},
    {"concat_filter_precedence", R"J({{ 'a' + x | upper + 'c' }})J", R"J({"x": "b"})J", R"J(aBc)J"},
    {"and_or_values", R"J({{ 0 or 'x' }}|{{ 'a' and 'b' }}|{{ '' and 'b' }}|{{ none or [] }}|{{ 1 and 0 }})J", R"J({})J", R"J(x|b||[]|0)J"},
    {"compare", R"J({{ 1 < 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ 1 != 2 }} {{ true == 1 }} {{ none == none }})J", R"J({})J", R"J(True True False True True True True True True)J"},
    {"in_ops", R"J({{ 'b' in 'abc' }} {{ 2 in [1,2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 'x' in undefined_var }} {{ (1,2) in [(1,2)] }})J", R"J({})J", R"J(True True True True False True)J"},
    {"if_elif_else", R"J({% for x in [1,2,3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %},{% endfor %})J", R"J({})J", R"J(one,two,many,)J"},
    {"ternary", R"J({{ 'y' if true else 'n' }}{{ 'y' if false else 'n' }}[{{ 'y' if false }}])J", R"J({})J", R"J(yn[])J"},
    {"ternary_chain", R"J({{ 'a' if x == 1 else 'b' if x == 2 else 'c' }})J", R"J({"x": 2})J", R"J(b)J"},
    {"loop_vars", R"J({% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %})J", R"J({})J", R"J(1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;)J"},
    {"loop_prev_next", R"J({% for x in [1,2,3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %})J", R"J({})J", R"J([|2][1|3][2|])J"},
    {"loop_filter", R"J({% for x in range(10) if x is odd %}{{ x }}{{ '' if loop.last else ',' }}{% endfor %})J", R"J({})J", R"J(1,3,5,7,9)J"},
    {"loop_else", R"J({% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] if false %}x{% else %}filtered{% endfor %})J", R"J({})J", R"J(empty|filtered)J"},
    {"loop_unpack", R"J({% for a, b in [(1, 2), [3, 4], 'xy'] %}{{ a }}{{ b }} {% endfor %})J", R"J({})J", R"J(12 34 xy )J"},
    {"loop_dict", R"J({% for k in d %}{{ k }}{% endfor %}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k, v in d|items %}{{ k }}{% endfor %}|{% for k, v in d|dictsort %}{{ k }}{% endfor %})J", R"J({"d": {"b": 1, "a": 2}})J", R"J(ba|b=1;a=2;|ba|ab)J"},
    {"loop_break_continue", R"J({% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %})J", R"J({})J", R"J(0134)J"},
    {"nested_loops", R"J({% for i in [1,2] %}{% for j in [1,2] %}{{ loop.depth }}{{ i }}{{ j }} {% endfor %}{{ loop.depth }}|{% endfor %})J", R"J({})J", R"J(111 112 1|121 122 1|)J"},
    {"loop_cycle_changed", R"J({% for x in [1,1,2,3,3] %}{{ loop.cycle('a','b') }}{% if loop.changed(x) %}*{% endif %}{% endfor %})J", R"J({})J", R"J(a*ba*b*a)J"},
    {"loop_undefined", R"J([{% for x in nothing %}{{ x }}{% endfor %}])J", R"J({})J", R"J([])J"},
    {"loop_string", R"J({% for c in 'héllo' %}{{ c }}.{% endfor %})J", R"J({})J", R"J(h.é.l.l.o.)J"},
    {"set_scope_loop", R"J({% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = 5 %}{{ x }}{% endfor %}{{ x }})J", R"J({})J", R"J(15151)J"},
    {"set_scope_if", R"J({% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }})J", R"J({})J", R"J(2)J"},
    {"namespace", R"J({% set ns = namespace(n=0, s='') %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.n }} {{ ns.s }})J", R"J({})J", R"J(6 0123)J"},
    {"namespace_dict_arg", R"J({% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns['a'] }})J", R"J({})J", R"J(121)J"},
    {"set_tuple", R"J({% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 3, 4 %}{{ c }})J", R"J({})J", R"J(12(3, 4))J"},
    {"block_set", R"J({% set x %}  hello {{ 1 + 1 }}  {% endset %}[{{ x }}]{% set y | upper | trim %} abc {% endset %}[{{ y }}])J", R"J({})J", R"J([  hello 2  ][ABC])J"},
    {"context_shadow", R"J({{ messages }}{% set messages = messages[1:] %}{{ messages }})J", R"J({"messages": [1, 2, 3]})J", R"J([1, 2, 3][2, 3])J"},
    {"with_block", R"J({% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}])J", R"J({})J", R"J(3[])J"},
    {"macro_defaults", R"J({% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', punct='?') }} {{ greet(greeting='Hi', name='Cy') }})J", R"J({})J", R"J(Hello, Ann! Hello, Bob? Hi, Cy!)J"},
    {"macro_missing_arg", R"J({% macro m(a, b) %}[{{ a }}|{{ b }}|{{ b is defined }}]{% endmacro %}{{ m(1) }})J", R"J({})J", R"J([1||False])J"},
    {"macro_varargs_kwargs", R"J({% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }})J", R"J({})J", R"J(1(2, 3){'x': 4})J"},
    {"macro_recursion", R"J({% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(5) }})J", R"J({})J", R"J(120)J"},
    {"macro_late_binding", R"J({% macro a() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ a() }}{% set x = 2 %}{{ a() }})J", R"J({})J", R"J(12)J"},
    {"macro_returns_string", R"J({% macro m() %}  x  {% endmacro %}[{{ m() | trim }}]{{ m() is string }})J", R"J({})J", R"J([x]True)J"},
    {"call_block", R"J({% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %})J", R"J({})J", R"J(<b>bold 2</b>)J"},
    {"call_block_args", R"J({% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) each([1,2]) %}<{{ x }}>{% endcall %})J", R"J({})J", R"J(<1><2>)J"},
    {"filter_block", R"J({% filter upper %}hello {{ 'world' }}{% endfilter %})J", R"J({})J", R"J(HELLO WORLD)J"},
    {"generation_block_absent", R"J({% block body %}in block{% endblock %})J", R"J({})J", R"J(in block)J"},
    {"getattr_getitem", R"J({{ d.a }} {{ d['a'] }} {{ d.missing }}|{{ l[0] }} {{ l[-1] }} {{ l.1 }} [{{ l[9] }}])J", R"J({"d": {"a": 1}, "l": [1, 2, 3]})J", R"J(1 1 |1 3 2 [])J"},
    {"dict_method_vs_key", R"J({{ d.items is defined }} {{ d['items'] }} {{ d.get('x', 'dflt') }} {{ d.get('items') }})J", R"J({"d": {"items": "key!"}})J", R"J(True key! dflt key!)J"},
    {"slices", R"J({{ s[1:3] }} {{ s[::-1] }} {{ s[-2:] }} {{ l[::2] }} {{ l[5:] }} {{ l[:-1] }} {{ 'héllo'[1:3] }})J", R"J({"s": "abcdef", "l": [1, 2, 3, 4]})J", R"J(bc fedcba ef [1, 3] [] [1, 2, 3] él)J"},
    {"none_attr", R"J([{{ x.foo }}])J", R"J({"x": null})J", R"J([])J"},
    {"str_methods", R"J({{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  a'.lstrip() }}|{{ 'a  '.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }})J", R"J({})J", R"J(a b|a|a|a|['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a,b', 'c'])J"},
    {"str_methods2", R"J({{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'Hello World'.upper() }} {{ 'Hello'.lower() }} {{ 'hello wORLD'.title() }} {{ 'hELLO'.capitalize() }} {{ 'aaa'.replace('a', 'b', 2) }} {{ '-'.join(['a', 'b']) }})J", R"J({})J", R"J(True True HELLO WORLD hello Hello World Hello bba a-b)J"},
    {"str_methods3", R"J({{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.find('z') }} {{ 'banana'.count('an') }} {{ 'a\nb\r\nc'.splitlines() }} {{ '42'.isdigit() }} {{ 'ab'.isalpha() }} {{ '5'.zfill(3) }} {{ 'ab'.center(6, '*') }} {{ 'a=b=c'.partition('=') }})J", R"J({})J", R"J(2 3 -1 2 ['a', 'b', 'c'] True True 005 **ab** ('a', '=', 'b=c'))J"},
    {"str_format", R"J({{ '{} and {}'.format(1, 'two') }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{name}!'.format(name='x') }}|{{ '{:>5}|{:<4}|{:^5}|{:05d}|{:.2f}|{:x}'.format('r', 'l', 'c', 42, 3.14159, 255) }})J", R"J({})J", R"J(1 and two|aba|x!|    r|l   |  c  |00042|3.14|ff)J"},
    {"percent_format", R"J({{ '%s is %d' % ('x', 3) }}|{{ '%05.1f|%-4s|%r' % (2.345, 'ab', 'q') }}|{{ '%(a)s' % {'a': 1} }})J", R"J({})J", R"J(x is 3|002.3|ab  |'q'|1)J"},
    {"unicode_methods", R"J({{ 'Привет'.upper() }} {{ 'ÉCOLE'.lower() }} {{ 'привет мир'.title() }} {{ 'héllo'|length }})J", R"J({})J", R"J(ПРИВЕТ école Привет Мир 5)J"},
    {"undefined_print", R"J([{{ nothing }}][{{ nothing | default('d') }}][{{ nothing is defined }}][{{ nothing | length }}][{{ nothing ~ 'x' }}])J", R"J({})J", R"J([][d][False][0][x])J"},
    {"undefined_tests", R"J({{ nothing is iterable }} {{ nothing is sequence }} {{ nothing is callable }} {{ nothing is none }} {{ nothing == nothing }} {{ nothing is mapping }})J", R"J({})J", R"J(True True True False True False)J"},
    {"default_boolean", R"J({{ '' | default('x') }}|{{ '' | default('x', true) }}|{{ none | d('y', boolean=true) }})J", R"J({})J", R"J(|x|y)J"},
    {"range_global", R"J({{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }} {{ range(3)|length }})J", R"J({})J", R"J([0, 1, 2] [1, 4, 7] [5, 3, 1] [] 3)J"},
    {"dict_global", R"J({{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }})J", R"J({})J", R"J({'a': 1, 'b': 2} {'x': 1})J"},
    {"strftime", R"J({{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %d, %Y') }}|{{ strftime_now('%A %a %j %p %I %y') }}|{{ strftime_now('%-d/%-m') }})J", R"J({})J", R"J(2026-01-15 12:00:00|15 Jan 2026|January 15, 2026|Thursday Thu 015 PM 12 26|15/1)J"},
    {"joiner", R"J({% set j = joiner('|') %}{% for x in [1,2,3] %}{{ j() }}{{ x }}{% endfor %})J", R"J({})J", R"J(1|2|3)J"},
    {"tests", R"J({{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ true is number }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is sequence }} {{ 'x' is iterable }} {{ 1 is iterable }} {{ none is none }} {{ false is false }} {{ 0 is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 2 is eq 2 }} {{ 2 is equalto 3 }} {{ 2 is lt 3 }} {{ 'a' is in 'abc' }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ 1 is not string }} {{ 'upper' is filter }} {{ 'odd' is test }} {{ range is callable }})J", R"J({})J", R"J(True True True True True True True True True False True True False True True True True False True True True True True True True True)J"},
    {"is_precedence", R"J({{ 1 + 1 is number }} {{ not x is defined }} {{ x is not defined and true }})J", R"J({})J", R"J(2 True True)J"},
    {"sandbox_unsafe_attr", R"J([{{ l.append is defined }}][{{ ''.__class__ is defined }}])J", R"J({"l": [1]})J", R"J([False][False])J"},
};

TEST(Language, MatchesJinja2) {
  for (const Case& c : kLanguageCases) {
    EXPECT_EQ(test::render(c.tmpl, c.context), c.expected) << c.name << "\n" << c.tmpl;
  }
}

// Scoping and control flow in combination: macros, caller(), loops, namespaces, blocks.
const Case kStatementCases[] = {
    {"macro_default_refs_param", R"J({% macro m(a, b=a * 2) %}{{ a }},{{ b }}{% endmacro %}{{ m(3) }}|{{ m(3, 1) }})J", R"J({})J", R"J(3,6|3,1)J"},
    {"macro_sees_caller_scope_not", R"J({% macro m() %}[{{ y }}]{% endmacro %}{% for y in [1] %}{{ m() }}{% endfor %})J", R"J({})J", R"J([])J"},
    {"macro_set_local", R"J({% set x = 1 %}{% macro m() %}{% set x = 2 %}{{ x }}{% endmacro %}{{ m() }}{{ x }})J", R"J({})J", R"J(21)J"},
    {"macro_in_loop", R"J({% for i in [1,2] %}{% macro m() %}<{{ i }}>{% endmacro %}{{ m() }}{% endfor %})J", R"J({})J", R"J(<1><2>)J"},
    {"macro_ns_mutation", R"J({% set ns = namespace(c=0) %}{% macro inc() %}{% set ns.c = ns.c + 1 %}{% endmacro %}{{ inc() }}{{ inc() }}{{ ns.c }})J", R"J({})J", R"J(2)J"},
    {"caller_default_args", R"J({% macro w() %}{{ caller() }}|{{ caller(5) }}{% endmacro %}{% call(x=1) w() %}{{ x }}{% endcall %})J", R"J({})J", R"J(1|5)J"},
    {"macro_kwargs_only_when_used", R"J({% macro m(a) %}{{ kwargs|length }}{% endmacro %}{{ m(1, b=2, c=3) }})J", R"J({})J", R"J(2)J"},
    {"nested_macro_call", R"J({% macro outer(x) %}{% macro inner(y) %}({{ y }}){% endmacro %}{{ inner(x) ~ inner(x + 1) }}{% endmacro %}{{ outer(1) }})J", R"J({})J", R"J((1)(2))J"},
    {"loop_set_outer_visible_after", R"J({% for i in [1] %}{% set a = 5 %}{% endfor %}[{{ a }}])J", R"J({})J", R"J([])J"},
    {"if_set_visible", R"J({% if true %}{% set a = 5 %}{% endif %}[{{ a }}])J", R"J({})J", R"J([5])J"},
    {"loop_var_after_loop", R"J({% for i in [1, 2] %}{% endfor %}[{{ i }}])J", R"J({})J", R"J([])J"},
    {"loop_shadow_outer", R"J({% set i = 'o' %}{% for i in [1, 2] %}{{ i }}{% endfor %}{{ i }})J", R"J({})J", R"J(12o)J"},
    {"nested_loop_outer_loop_ref", R"J({% for a in [1,2] %}{% set outer = loop %}{% for b in [1,2] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %})J", R"J({})J", R"J(11 12 21 22 )J"},
    {"break_inner_only", R"J({% for a in [1,2] %}{% for b in [1,2,3] %}{% if b == 2 %}{% break %}{% endif %}{{ a }}{{ b }} {% endfor %}{% endfor %})J", R"J({})J", R"J(11 21 )J"},
    {"continue_in_if_else", R"J({% for a in range(5) %}{% if a is even %}{% continue %}{% else %}{{ a }}{% endif %}!{% endfor %})J", R"J({})J", R"J(1!3!)J"},
    {"loop_filter_uses_outer", R"J({% set lim = 2 %}{% for x in range(5) if x > lim %}{{ x }}{{ loop.length }}{% endfor %})J", R"J({})J", R"J(3242)J"},
    {"set_block_in_loop", R"J({% for i in [1,2] %}{% set t %}<{{ i }}>{% endset %}{{ t }}{% endfor %})J", R"J({})J", R"J(<1><2>)J"},
    {"with_scope", R"J({% set a = 1 %}{% with a = 2 %}{% set b = 3 %}{{ a }}{{ b }}{% endwith %}{{ a }}[{{ b }}])J", R"J({})J", R"J(231[])J"},
    {"filter_block_nested", R"J({% filter upper %}a{% filter trim %}  b  {% endfilter %}c{% endfilter %})J", R"J({})J", R"J(ABC)J"},
    {"dict_in_loop_items_sorted", R"J({% for k, v in {'b': 1, 'a': 2}|dictsort %}{{ k }}{{ v }}{% endfor %})J", R"J({})J", R"J(a2b1)J"},
    {"tuple_target_nested", R"J({% for (a, b), c in [((1, 2), 3)] %}{{ a }}{{ b }}{{ c }}{% endfor %})J", R"J({})J", R"J(123)J"},
    {"loop_over_dict_items_method", R"J({% for item in {'x': 1}.items() %}{{ item[0] }}={{ item[1] }}{% endfor %})J", R"J({})J", R"J(x=1)J"},
    {"string_multiplication_in_loop", R"J({% for i in range(3) %}{{ '-' * loop.index }}
{% endfor %})J", R"J({})J", R"J(-
--
---
)J"},
    {"set_from_ternary_undefined", R"J({% set x = 1 if false %}[{{ x }}][{{ x is defined }}])J", R"J({})J", R"J([][False])J"},
    {"messages_slicing", R"J({% for m in messages[1:] %}{{ m.role }}{% endfor %}|{{ messages[-1]['content'] }})J", R"J({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]})J", R"J(user|u)J"},
    {"selectattr_last", R"J({{ (messages|selectattr('role', 'equalto', 'user')|list|last).content }})J", R"J({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})J", R"J(b)J"},
    {"generator_truthy", R"J({% if [] | select('odd') %}Y{% else %}N{% endif %}{% if ([] | select('odd') | list) %}Y{% else %}N{% endif %})J", R"J({})J", R"J(YN)J"},
    {"loop_over_generator", R"J({% for x in [1,2,3]|select('odd') %}{{ x }}{{ loop.last }}{% endfor %})J", R"J({})J", R"J(1False3True)J"},
    {"block_tag", R"J({% block a %}A{% set z = 1 %}{% endblock %}[{{ z }}])J", R"J({})J", R"J(A[])J"},
    {"call_block_caller_scope", R"J({% macro m() %}{{ caller() }}{% endmacro %}{% set v = 'outer' %}{% call m() %}{{ v }}{% endcall %})J", R"J({})J", R"J(outer)J"},
    {"namespace_loop_last_assistant", R"J({% set ns = namespace(i=-1) %}{% for m in msgs %}{% if m.role == 'assistant' %}{% set ns.i = loop.index0 %}{% endif %}{% endfor %}{{ ns.i }})J", R"J({"msgs": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]})J", R"J(1)J"},
    {"whitespace_in_macro_body", R"J({% macro m() %}
  x
{% endmacro %}[{{ m() }}])J", R"J({})J", R"J([  x
])J"},
    {"lstrip_in_for", R"J({% for i in [1, 2] %}
    {{ i }}
{% endfor %})J", R"J({})J", R"J(    1
    2
)J"},
    {"if_else_whitespace", R"J(  {%- if false %}
A
  {%- else %}
B
  {%- endif %}
)J", R"J({})J", R"J(B)J"},
    {"comment_between", R"J(a {# x #} b
{# y #}
c)J", R"J({})J", R"J(a  b
c)J"},
};

TEST(Language, StatementsMatchJinja2) {
  for (const Case& c : kStatementCases) {
    EXPECT_EQ(test::render(c.tmpl, c.context), c.expected) << c.name << "\n" << c.tmpl;
  }
}

}  // namespace
}  // namespace ox::chat
