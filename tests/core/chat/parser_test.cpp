// Parse errors: every malformed template fails at parse time with "line L, column C: ..." naming
// what was expected, and checks jinja2 makes at compile time (unknown filters outside `if`,
// break outside a loop) fail too.
#include "core/chat/parser.h"

#include <gtest/gtest.h>

#include "core/chat/template.h"

namespace ox::chat {
namespace {

struct BadTemplate {
  const char* tmpl;
  const char* message;  // the full error message
};

const BadTemplate kBad[] = {
    {"{% if x %}abc", "line 1, column 14: unexpected end of template, expected 'elif', 'else' or 'endif' to close the 'if' block from line 1"},
    {"{{ x", "line 1, column 5: unexpected end of template, expected '}}'"},
    {"{% for x in %}{% endfor %}", "line 1, column 13: expected an expression, got end of statement block '%}'"},
    {"{% endfor %}", "line 1, column 4: unexpected tag 'endfor': no block is open"},
    {"{% foo %}", "line 1, column 4: unknown tag 'foo'"},
    {"{{ 1 + }}", "line 1, column 8: expected an expression, got end of print statement '}}'"},
    {"{{ 'abc }}", "line 1, column 4: unterminated string literal"},
    {"ab\n{# comment", "line 2, column 1: missing end of comment tag"},
    {"{{ x|nosuch }}", "line 1, column 6: no filter named 'nosuch'"},
    {"{{ x is nosuch }}", "line 1, column 9: no test named 'nosuch'"},
    {"{% break %}", "line 1, column 4: 'break' outside loop"},
    {"{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}", "line 1, column 35: 'continue' outside loop"},
    {"{% for x in y %}{% endif %}", "line 1, column 20: unexpected tag 'endif', expected 'endfor' or 'else' to close the 'for' block from line 1"},
    {"{% if true %}{% else %}{% elif %}{% endif %}", "line 1, column 27: unexpected tag 'elif', expected 'endif' to close the 'if' block from line 1"},
    {"{{ (1 }}", "line 1, column 7: unexpected '}', expected ')'"},
    {"{{ 1 ]}}", "line 1, column 6: unexpected ']'"},
    {"{% include 'x' %}", "line 1, column 4: 'include' is not supported: chat templates cannot load other templates"},
    {"{{ a b }}", "line 1, column 6: expected end of print statement '}}', got 'b'"},
    {"{% set 1 = 2 %}", "line 1, column 8: cannot assign to this expression (expected a name or a tuple of names)"},
    {"{% macro %}{% endmacro %}", "line 1, column 10: expected a macro name, got end of statement block '%}'"},
    {"{{ x | }}", "line 1, column 8: expected a name, got end of print statement '}}'"},
    {"{{ {'a' 1} }}", "line 1, column 9: expected ':', got number 1"},
    {"{{ x[1:2:3:4] }}", "line 1, column 11: expected ',', got ':'"},
    {"{{ f(a=1, 2) }}", "line 1, column 11: invalid syntax for function call: positional argument after keyword argument"},
    {"{% set x | nosuch %}{% endset %}", "line 1, column 12: no filter named 'nosuch'"},
    {"{% call foo %}{% endcall %}", "line 1, column 4: expected a call after 'call'"},
    {"{{ '\\x4' }}", "line 1, column 5: truncated \\x escape in string literal"},
    {"{{ 99999999999999999999 }}", "line 1, column 4: integer literal too large"},
    {"{{ x $ y }}", "line 1, column 6: unexpected char '$'"},
    {"{% for x in y recursive %}{% endfor %}", "line 1, column 15: recursive for loops are not supported"},
    {"line1\n  line2 {{ ok }}\n  {% if %}\n", "line 3, column 9: expected an expression, got end of statement block '%}'"},
    {"Привет {{ 1 +* 2 }}", "line 1, column 14: expected an expression, got '*'"},
};

TEST(Parser, ErrorsNamePositionAndExpectation) {
  for (const BadTemplate& b : kBad) {
    Result<ChatTemplate> t = ChatTemplate::parse(b.tmpl);
    ASSERT_FALSE(t.ok()) << b.tmpl;
    EXPECT_EQ(t.status().code(), ErrorCode::kInvalidFile) << b.tmpl;
    EXPECT_EQ(t.status().message(), b.message) << b.tmpl;
  }
}

TEST(Parser, UnknownFilterInsideIfFailsOnlyWhenReached) {
  // jinja2 defers the check inside `if` blocks and conditional expressions.
  const char* tmpl = "{% if x %}{{ 1 | nosuch }}{% endif %}{{ 2 | nosuch if x }}ok";
  ASSERT_TRUE(ChatTemplate::parse(tmpl).ok());
  Result<std::string> quiet = render_template(tmpl, nlohmann::json::object());
  ASSERT_TRUE(quiet.ok()) << quiet.status().message();
  EXPECT_EQ(*quiet, "ok");
  nlohmann::json ctx;
  ctx["x"] = true;
  Result<std::string> loud = render_template(tmpl, ctx);
  ASSERT_FALSE(loud.ok());
  EXPECT_EQ(loud.status().message(), "line 1: no filter named 'nosuch'");
  // A for loop inside the if is checked again.
  EXPECT_FALSE(ChatTemplate::parse("{% if x %}{% for y in z %}{{ y | nosuch }}{% endfor %}{% endif %}").ok());
}

TEST(Parser, BuildsTheExpectedTree) {
  Result<StmtList> body = parse_template("a{% if x %}{{ 1 + 2 * 3 }}{% elif y %}b{% else %}c{% endif %}");
  ASSERT_TRUE(body.ok()) << body.status().message();
  ASSERT_EQ(body->size(), 2u);
  EXPECT_EQ((*body)[0]->kind, StmtKind::kText);
  const Stmt& s = *(*body)[1];
  ASSERT_EQ(s.kind, StmtKind::kIf);
  ASSERT_EQ(s.branches.size(), 2u);  // if + elif, flat
  ASSERT_EQ(s.else_body.size(), 1u);
  const Expr& sum = *s.branches[0].second[0]->expr;
  ASSERT_EQ(sum.kind, ExprKind::kBinary);
  EXPECT_EQ(sum.bin_op, BinOp::kAdd);  // * binds tighter than +
  EXPECT_EQ(sum.args[1]->bin_op, BinOp::kMul);
}

TEST(Parser, FilterAndTestBindTighterThanArithmetic) {
  Result<StmtList> body = parse_template("{{ a + b | upper }}{{ not x is defined }}");
  ASSERT_TRUE(body.ok());
  const Expr& add = *(*body)[0]->expr;
  ASSERT_EQ(add.kind, ExprKind::kBinary);
  EXPECT_EQ(add.args[1]->kind, ExprKind::kFilter);
  const Expr& neg = *(*body)[1]->expr;
  ASSERT_EQ(neg.kind, ExprKind::kNot);
  EXPECT_EQ(neg.args[0]->kind, ExprKind::kTest);
}

}  // namespace
}  // namespace ox::chat
