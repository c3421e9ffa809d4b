// Parser: tokens to syntax tree with jinja2's grammar, precedence and checks (unknown tags,
// unknown filters outside `if`, break outside a loop). Errors name line and column.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/chat/ast.h"
#include "core/chat/lexer.h"

namespace ox::chat {

Result<StmtList> parse_template(std::string_view source);

// Implementation detail shared by parser.cpp (statements) and parse_expr.cpp (expressions).
// Counts nesting while a parse function runs (the parser's recursion limit).
struct DepthGuard {
  explicit DepthGuard(int* d) : d_(d) { ++*d_; }
  ~DepthGuard() { --*d_; }
  int* d_;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}
  Result<StmtList> parse_all();

  // Nesting bound: recursive descent must not overflow the stack on hostile input.
  static constexpr int kMaxDepth = 150;

 private:
  // ---- statements (parser.cpp)
  Result<StmtList> parse_body(std::initializer_list<const char*> ends, std::string* which);
  Result<StmtPtr> parse_statement();
  Result<StmtPtr> parse_block_statement(const Token& at);
  std::string open_block_note() const;  // " to close the 'for' block from line 3"
  Result<StmtPtr> parse_for(const Token& at);
  Result<StmtPtr> parse_if(const Token& at);
  Result<StmtPtr> parse_set(const Token& at);
  Result<StmtPtr> parse_macro(const Token& at, bool call_block);
  Result<StmtPtr> parse_filter_block(const Token& at);
  Result<StmtPtr> parse_with(const Token& at);
  Result<StmtPtr> parse_scope(const Token& at, const char* end);
  Status parse_signature(Stmt* s);
  Status finish_body(Stmt* s, const char* end, const std::string& which);

  // ---- expressions (parse_expr.cpp)
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_tuple(bool with_condexpr = true, bool simplified = false,
                              std::initializer_list<const char*> extra_ends = {}, bool explicit_parens = false);
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter = true);
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_postfix(ExprPtr node);
  Result<ExprPtr> parse_filter_expr(ExprPtr node);
  Result<ExprPtr> parse_subscript(ExprPtr node);
  Result<ExprPtr> parse_subscribed();
  Status parse_call_args(Expr* call);
  Result<ExprPtr> parse_filter(ExprPtr node, bool start_inline);
  Result<ExprPtr> parse_test(ExprPtr node);
  Result<ExprPtr> parse_assign_target(bool with_tuple, bool with_namespace,
                                      std::initializer_list<const char*> extra_ends = {});
  Result<std::string> parse_dotted_name();

  // ---- token helpers
  const Token& cur() const { return t_[pos_]; }
  const Token& peek(size_t n = 1) const { return t_[pos_ + n < t_.size() ? pos_ + n : t_.size() - 1]; }
  const Token& next() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }
  bool is_op(const char* op) const { return cur().type == Tok::kOp && cur().text == op; }
  bool is_name(const char* name) const { return cur().type == Tok::kName && cur().text == name; }
  bool skip_op(const char* op);
  bool skip_name(const char* name);
  Status expect_op(const char* op);
  Status expect_name(const char* name);
  Status expect(Tok type);
  Status fail(const Token& at, const std::string& msg) const;
  Status unexpected(const std::string& expected) const;
  static std::string describe(const Token& t);
  ExprPtr make(ExprKind kind, const Token& at) const;
  // Sets node->depth from its children; fails past kMaxDepth (left-deep chains like
  // a+a+a+... are built by loops, so the recursion guard alone does not bound them).
  Result<ExprPtr> seal(ExprPtr node) const;
  Status check_depth() const;  // recursion guard, used with DepthGuard

  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::pair<std::string, uint32_t>> open_blocks_;  // tag and line of each open block
};

}  // namespace ox::chat
