// Tree-walking interpreter for parsed templates: scopes with jinja2's rules (loop bodies and
// macros get their own scope, `if` does not), attribute/item lookup like the sandbox, calls
// into macros and builtins, and the budgets that stop hostile templates.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/chat/ast.h"
#include "core/chat/template.h"
#include "core/chat/value.h"

namespace ox::chat {

struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(std::string_view name) const;  // this scope, then its parents
  void set(const std::string& name, Value v);      // this scope only
};
using ScopePtr = std::shared_ptr<Scope>;

class Interp {
 public:
  explicit Interp(const RenderOptions& options) : options_(options) {}
  ~Interp();

  // Renders `body` with `root` as the template's top scope.
  Status run(const StmtList& body, const ScopePtr& root, std::string* out);

  // ---- services for builtins
  Result<Value> call(const Value& fn, CallArgs& args);
  Result<Value> getattr(const Value& obj, const std::string& name);
  Result<Value> getitem(const Value& obj, const Value& key);
  // Items a for loop / list() / join() sees: list items, dict keys, string characters.
  Result<ValueList> iterate(const Value& v);
  Status charge_steps(uint64_t n);
  Status charge_eval();
  // Fails once the interpreter's recursion has used options().max_stack_bytes of stack, so
  // nesting (macros inside deep expressions inside macros ...) cannot overflow it.
  Status check_stack() const;
  Status check_string_size(uint64_t bytes) const;
  Status check_list_size(uint64_t n) const;
  const RenderOptions& options() const { return options_; }
  Value make_namespace();

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Status exec(const StmtList& list, const ScopePtr& scope);
  Status exec_stmt(const Stmt& s, const ScopePtr& scope);
  Status exec_for(const Stmt& s, const ScopePtr& scope);
  Status filter_items(const Stmt& s, const ScopePtr& scope, ValueList* items);
  Status exec_if(const Stmt& s, const ScopePtr& scope);
  Status exec_call_block(const Stmt& s, const ScopePtr& scope);
  Status assign(const Expr& target, Value v, const ScopePtr& scope);
  Status emit(std::string_view text);
  Result<std::string> capture(const StmtList& body, const ScopePtr& scope);
  Result<Value> call_macro(const Callable& c, CallArgs& args);

  Result<Value> eval(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_inner(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_call(const Expr& e, const ScopePtr& scope, const Value* caller);
  Result<Value> eval_filter(const Expr& e, const ScopePtr& scope, const Value* block_input);
  Status eval_args(const Expr& e, const ScopePtr& scope, size_t first, CallArgs* out);
  Result<Value> eval_getitem(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_compare(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_literal(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_concat(const Expr& e, const ScopePtr& scope);
  Status locate(Status s, uint32_t line);

  const RenderOptions& options_;
  std::string* out_ = nullptr;
  Flow flow_ = Flow::kNormal;
  uint64_t steps_ = 0;
  uint64_t evals_ = 0;
  uint64_t string_work_ = 0;
  uint32_t call_depth_ = 0;
  uintptr_t stack_base_ = 0;
  bool error_located_ = false;
  ScopePtr root_;
  std::vector<std::weak_ptr<Namespace>> namespaces_;  // cleared at the end to break cycles
};

// Binary operators with Python semantics (int overflow is an error, not a bignum).
Result<Value> binary_op(BinOp op, const Value& a, const Value& b, const Interp& in);
// Unary - and + on numbers.
Result<Value> unary_op(const std::string& op, const Value& v);
// Python slicing of lists, tuples and strings.
Result<Value> slice_value(const Value& v, const Value& start, const Value& stop, const Value& step);

}  // namespace ox::chat
