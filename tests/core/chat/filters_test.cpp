// Filters (jinja2 builtins plus transformers' tojson) and their arguments. Each row's expected output was rendered by Python jinja2 3.1 configured like
// transformers (sandbox, trim_blocks, lstrip_blocks, loopcontrols, tojson without escaping).
#include <gtest/gtest.h>

#include "tests/core/chat/render_helpers.h"

namespace ox::chat {
namespace {

using test::Case;

const Case kFilterCases[] = {
    {"trim_filter", R"J([{{ '  x \n' | trim }}][{{ 'xxaxx' | trim('x') }}])J", R"J({})J", R"J([x][a])J"},
    {"tojson_basic", R"J({{ d | tojson }})J", R"J({"d": {"b": 1, "a": [1.5, true, null, "é\"\\\n<>&'"], "c": {}}})J", R"J({"b": 1, "a": [1.5, true, null, "é\"\\\n<>&'"], "c": {}})J"},
    {"tojson_indent", R"J({{ d | tojson(indent=2) }}|{{ [] | tojson(indent=2) }}|{{ [1, [2]] | tojson(indent=1) }})J", R"J({"d": {"k": [1, {"x": "y"}], "e": []}})J", R"J({
  "k": [
    1,
    {
      "x": "y"
    }
  ],
  "e": []
}|[]|[
 1,
 [
  2
 ]
])J"},
    {"tojson_options", R"J({{ d | tojson(ensure_ascii=true) }}|{{ d | tojson(sort_keys=true) }}|{{ d | tojson(separators=(',', ':')) }})J", R"J({"d": {"z": "é🦙", "a": 1}})J", R"J({"z": "\u00e9\ud83e\udd99", "a": 1}|{"a": 1, "z": "é🦙"}|{"z":"é🦙","a":1})J"},
    {"tojson_keys", R"J({{ {1: 'a', 2.5: 'b', true: 'c', none: 'd'} | tojson }}|{{ (1, 2) | tojson }}|{{ 1e20 | tojson }})J", R"J({})J", R"J({"1": "c", "2.5": "b", "null": "d"}|[1, 2]|1e+20)J"},
    {"string_filters", R"J({{ 'hello world' | upper }} {{ 'HeLLo' | lower }} {{ 'hello big-world (x)' | title }} {{ 'hELLO wORLD' | capitalize }} {{ 'aXbX' | replace('X', '-') }} {{ 'aaa' | replace('a', 'b', 1) }})J", R"J({})J", R"J(HELLO WORLD hello Hello Big-World (X) Hello world a-b- baa)J"},
    {"length_count", R"J({{ 'héllo' | length }} {{ [1,2] | length }} {{ {'a':1} | count }} {{ '' | length }})J", R"J({})J", R"J(5 2 1 0)J"},
    {"join_filter", R"J({{ [1, 2, 3] | join(', ') }} {{ ['a', 'b'] | join }} {{ users | join(',', attribute='name') }} {{ [none, true] | join('-') }})J", R"J({"users": [{"name": "x"}, {"name": "y"}]})J", R"J(1, 2, 3 ab x,y None-True)J"},
    {"first_last", R"J({{ [1,2,3] | first }} {{ [1,2,3] | last }} {{ 'abc' | first }} [{{ [] | first }}])J", R"J({})J", R"J(1 3 a [])J"},
    {"list_filter", R"J({{ 'abc' | list }} {{ {'a': 1, 'b': 2} | list }} {{ (1, 2) | list }})J", R"J({})J", R"J(['a', 'b', 'c'] ['a', 'b'] [1, 2])J"},
    {"items_filter", R"J({{ d | items | list }})J", R"J({"d": {"x": 1, "y": [2]}})J", R"J([('x', 1), ('y', [2])])J"},
    {"selectattr", R"J({{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ msgs | rejectattr('role', 'eq', 'user') | list | length }} {{ msgs | selectattr('extra') | list | length }} {{ msgs | selectattr('extra', 'defined') | map(attribute='extra') | list }})J", R"J({"msgs": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "extra": 0}, {"role": "user", "content": "c"}]})J", R"J(['a', 'c'] 1 0 [0])J"},
    {"select_reject", R"J({{ range(10) | select('odd') | list }} {{ range(5) | reject('even') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ ['a', 'b', 'c'] | reject('equalto', 'b') | list }})J", R"J({})J", R"J([1, 3, 5, 7, 9] [1, 3] [1, 'a'] ['a', 'c'])J"},
    {"map_filter", R"J({{ ['a', 'b'] | map('upper') | list }} {{ items | map(attribute='x.y') | list }} {{ items | map(attribute='z', default='-') | list }} {{ ['1', '2'] | map('int') | sum }})J", R"J({"items": [{"x": {"y": 1}}, {"x": {"y": 2}, "z": 3}]})J", R"J(['A', 'B'] [1, 2] ['-', 3] 3)J"},
    {"sort_filter", R"J({{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }} {{ [3, 1, 2] | sort(reverse=true) }} {{ people | sort(attribute='age') | map(attribute='n') | list }} {{ people | sort(attribute='age,n') | map(attribute='n') | list }})J", R"J({"people": [{"n": "b", "age": 30}, {"n": "a", "age": 20}, {"n": "c", "age": 20}]})J", R"J(['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1] ['a', 'c', 'b'] ['a', 'c', 'b'])J"},
    {"unique_filter", R"J({{ ['a', 'A', 'b', 'a'] | unique | list }} {{ ['a', 'A'] | unique(case_sensitive=true) | list }} {{ [1, 1.0, 2] | unique | list }})J", R"J({})J", R"J(['a', 'b'] ['a', 'A'] [1, 2])J"},
    {"reverse_filter", R"J({{ 'abc' | reverse }} {{ [1, 2, 3] | reverse | list }})J", R"J({})J", R"J(cba [3, 2, 1])J"},
    {"dictsort", R"J({{ d | dictsort }} {{ d | dictsort(reverse=true) }} {{ d | dictsort(by='value') }})J", R"J({"d": {"b": 1, "A": 3, "c": 2}})J", R"J([('A', 3), ('b', 1), ('c', 2)] [('c', 2), ('b', 1), ('A', 3)] [('b', 1), ('c', 2), ('A', 3)])J"},
    {"min_max_sum", R"J({{ [3, 1, 2] | min }} {{ [3, 1, 2] | max }} {{ ['b', 'A'] | min }} {{ [1, 2, 3] | sum }} {{ items | sum(attribute='v') }} {{ [1.5, 2] | sum(start=10) }})J", R"J({"items": [{"v": 1}, {"v": 2}]})J", R"J(1 3 A 6 3 13.5)J"},
    {"int_float", R"J({{ '42' | int }} {{ '3.9' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '0x1A' | int(0, 16) }} {{ '2.5' | float }} {{ 'x' | float }} {{ 2 | float }} {{ true | int }})J", R"J({})J", R"J(42 3 0 7 3 26 2.5 0.0 2.0 1)J"},
    {"round_abs", R"J({{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 7 | round }} {{ 1.234 | round(1, 'ceil') }} {{ 1.299 | round(1, 'floor') }} {{ -3 | abs }} {{ -2.5 | abs }})J", R"J({})J", R"J(2.0 4.0 2.67 7 1.3 1.2 3 2.5)J"},
    {"indent_filter", R"J([{{ 'a\nb\n\nc' | indent }}][{{ 'a\nb' | indent(2, true) }}][{{ 'a\n\nb' | indent(2, blank=true) }}][{{ 'x\ny' | indent('> ') }}])J", R"J({})J", R"J([a
    b

    c][  a
  b][a
  
  b][x
> y])J"},
    {"center_truncate_wordcount", R"J([{{ 'ab' | center(7) }}][{{ 'hello world foo bar' | truncate(13) }}][{{ 'hello world foo bar' | truncate(9, true) }}][{{ 'hello world foo bar baz' | truncate(5, leeway=0) }}] {{ 'one two, three_x 4' | wordcount }})J", R"J({})J", R"J([   ab  ][hello...][hello ...][he...] 4)J"},
    {"string_safe_escape", R"J({{ 5 | string }} {{ none | string }} {{ [1] | string }} {{ '<a href="x">&</a>' | e }} {{ '<b>' | safe }} {{ '<p>a  <i>b</i></p>' | striptags }})J", R"J({})J", R"J(5 None [1] &lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt; <b> a b)J"},
    {"batch_slice", R"J({{ range(5) | batch(2) | list }} {{ range(5) | batch(2, 'x') | list }} {{ range(5) | slice(2) | list }})J", R"J({})J", R"J([[0, 1], [2, 3], [4]] [[0, 1], [2, 3], [4, 'x']] [[0, 1, 2], [3, 4]])J"},
    {"format_filter", R"J({{ '%s-%s' | format('a', 'b') }} {{ '%(x)s' | format(x=1) }})J", R"J({})J", R"J(a-b 1)J"},
    {"attr_filter", R"J({{ d | attr('items') is defined }} [{{ d | attr('a') }}])J", R"J({"d": {"a": 1}})J", R"J(True [])J"},
    {"pprint_filter", R"J({{ {'a': [1, 'x']} | pprint }} {{ {'b': 1, 'a': {'d': 2, 'c': 3}} | pprint }})J", R"J({})J", R"J({'a': [1, 'x']} {'a': {'c': 3, 'd': 2}, 'b': 1})J"},
    {"falsy_map_select", R"J({{ none | map('upper') | list }}{{ 0 | select | list }}{% if none | map('upper') %}T{% endif %}{% if [] | reject %}T{% endif %})J", R"J({})J", R"J([][]TT)J"},
    {"lower_upper_tests_use_str", R"J({{ {'x': 'y'} is lower }} {{ 'Ab' is lower }} {{ none is upper }} {{ 'ÉA' is upper }})J", R"J({})J", R"J(True False False True)J"},
    {"percent_with_list", R"J({{ 'abc' % [1] }}|{{ '%s' % [1, 2] }}|{{ '%s' % ((1, 2),) }})J", R"J({})J", R"J(abc|[1, 2]|(1, 2))J"},
};

TEST(Filters, MatchesJinja2) {
  for (const Case& c : kFilterCases) {
    EXPECT_EQ(test::render(c.tmpl, c.context), c.expected) << c.name << "\n" << c.tmpl;
  }
}

}  // namespace
}  // namespace ox::chat
