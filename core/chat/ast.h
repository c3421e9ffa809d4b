// Syntax tree of a parsed template. One node struct per family keeps the parser and the
// interpreter short; each kind documents which fields it uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/chat/value.h"

namespace ox::chat {

enum class ExprKind : uint8_t {
  kConst,    // value
  kName,     // name
  kList,     // args: items
  kTuple,    // args: items
  kDict,     // args: key0, value0, key1, value1, ...
  kGetattr,  // args[0].name
  kGetitem,  // args[0][args[1]]  (args[1] may be a kSlice)
  kSlice,    // args: start, stop, step (each may be null)
  kCall,     // args[0](args[1..], kwargs, *dyn_args, **dyn_kwargs)
  kFilter,   // args[0] | name(args[1..], kwargs); args[0] null inside {% filter %} / {% set %} blocks
  kTest,     // args[0] is [not] name(args[1..], kwargs)
  kUnary,    // name ("-" or "+") args[0]
  kBinary,   // args[0] bin_op args[1]
  kAnd,      // args[0] and args[1]
  kOr,       // args[0] or args[1]
  kNot,      // not args[0]
  kCompare,  // args[0] cmp_ops[0] args[1] cmp_ops[1] args[2] ...  (Python chaining)
  kConcat,   // args[0] ~ args[1] ~ ...
  kCond,     // args[1] if args[0] else args[2]  (args[2] null: Undefined)
};

enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
enum class CmpOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kConst;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t depth = 1;  // height of this subtree; bounded so evaluation cannot overflow the stack
  Value value;
  std::string name;
  BinOp bin_op = BinOp::kAdd;
  bool negated = false;  // kTest written as `is not`
  std::vector<CmpOp> cmp_ops;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  ExprPtr dyn_args;
  ExprPtr dyn_kwargs;
};

enum class StmtKind : uint8_t {
  kText,         // text
  kPrint,        // {{ expr }}
  kIf,           // if/elif: branches (test, body) in order, then else_body
  kFor,          // for target in expr [if filter_cond]: body else else_body
  kSet,          // set target = expr (target: name, tuple of names, or ns.attr as kGetattr)
  kSetBlock,     // set target [| filters in expr] body endset
  kMacro,        // macro text(params = defaults) body
  kCallBlock,    // call(params) expr body: expr is a kCall, body becomes caller()
  kFilterBlock,  // filter <expr chain> body endfilter
  kWith,         // with assigns: body
  kScope,        // block / generation / autoescape: body in its own scope
  kBreak,
  kContinue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind = StmtKind::kText;
  uint32_t line = 0;
  uint32_t col = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr target;
  ExprPtr filter_cond;
  StmtList body;
  StmtList else_body;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // parallel to params; null where no default
  std::vector<std::pair<ExprPtr, ExprPtr>> assigns;  // kWith: target = value
  std::vector<std::pair<ExprPtr, StmtList>> branches;  // kIf
  bool uses_varargs = false;
  bool uses_kwargs = false;
  bool uses_caller = false;
};

}  // namespace ox::chat
