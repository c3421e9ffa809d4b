// Expression grammar, following jinja2's precedence from loosest to tightest:
// x if c else y; or; and; not; comparisons and in; + -; ~; * / // %; **; unary - +;
// then postfix (.attr [i] (call)) and filters/tests (| f, is t), which bind tighter than math.
#include <cstring>

#include "core/chat/parser.h"

namespace ox::chat {

Result<ExprPtr> Parser::seal(ExprPtr node) const {
  uint32_t depth = 0;
  for (const ExprPtr& a : node->args) {
    if (a) depth = std::max(depth, a->depth);
  }
  for (const auto& kw : node->kwargs) depth = std::max(depth, kw.second->depth);
  if (node->dyn_args) depth = std::max(depth, node->dyn_args->depth);
  if (node->dyn_kwargs) depth = std::max(depth, node->dyn_kwargs->depth);
  node->depth = depth + 1;
  if (node->depth > static_cast<uint32_t>(kMaxDepth)) {
    return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: expression nested too deeply (more than %d levels)",
                                                 node->line, node->col, kMaxDepth));
  }
  return node;
}

Status Parser::check_depth() const {
  if (depth_ > kMaxDepth) return fail(cur(), strfmt("template nested too deeply (more than %d levels)", kMaxDepth));
  return Status::ok();
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  DepthGuard guard(&depth_);
  OX_TRY(check_depth());
  OX_ASSIGN_OR_RETURN(ExprPtr expr1, parse_or());
  if (!with_condexpr) return expr1;
  while (is_name("if")) {
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
    ExprPtr otherwise;
    if (skip_name("else")) {
      OX_ASSIGN_OR_RETURN(otherwise, parse_expression(true));
    }
    ExprPtr cond = make(ExprKind::kCond, at);
    cond->args.push_back(std::move(test));
    cond->args.push_back(std::move(expr1));
    cond->args.push_back(std::move(otherwise));
    OX_ASSIGN_OR_RETURN(expr1, seal(std::move(cond)));
  }
  return expr1;
}

Result<ExprPtr> Parser::parse_tuple(bool with_condexpr, bool simplified, std::initializer_list<const char*> extra_ends,
                                    bool explicit_parens) {
  const Token at = cur();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) OX_TRY(expect_op(","));
    const Token& c = cur();
    bool end = c.type == Tok::kVarEnd || c.type == Tok::kBlockEnd || (c.type == Tok::kOp && c.text == ")");
    for (const char* e : extra_ends) end = end || (c.type == Tok::kName && c.text == e);
    if (end) break;
    ExprPtr item;
    if (simplified) {
      OX_ASSIGN_OR_RETURN(item, parse_primary());
    } else {
      OX_ASSIGN_OR_RETURN(item, parse_expression(with_condexpr));
    }
    items.push_back(std::move(item));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) return unexpected("an expression");
  }
  ExprPtr tuple = make(ExprKind::kTuple, at);
  tuple->args = std::move(items);
  return seal(std::move(tuple));
}

Result<ExprPtr> Parser::parse_or() {
  OX_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
  while (is_name("or")) {
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
    ExprPtr node = make(ExprKind::kOr, at);
    node->args.push_back(std::move(left));
    node->args.push_back(std::move(right));
    OX_ASSIGN_OR_RETURN(left, seal(std::move(node)));
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  OX_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
  while (is_name("and")) {
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
    ExprPtr node = make(ExprKind::kAnd, at);
    node->args.push_back(std::move(left));
    node->args.push_back(std::move(right));
    OX_ASSIGN_OR_RETURN(left, seal(std::move(node)));
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard guard(&depth_);
    OX_TRY(check_depth());
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr operand, parse_not());
    ExprPtr node = make(ExprKind::kNot, at);
    node->args.push_back(std::move(operand));
    return seal(std::move(node));
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
  const Token at = cur();
  OX_ASSIGN_OR_RETURN(ExprPtr first, parse_math1());
  ExprPtr node;
  while (true) {
    CmpOp op;
    if (cur().type == Tok::kOp && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                   cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
      const std::string& t = cur().text;
      op = t == "==" ? CmpOp::kEq : t == "!=" ? CmpOp::kNe : t == "<" ? CmpOp::kLt : t == "<=" ? CmpOp::kLe : t == ">" ? CmpOp::kGt : CmpOp::kGe;
      next();
    } else if (is_name("in")) {
      op = CmpOp::kIn;
      next();
    } else if (is_name("not") && peek().type == Tok::kName && peek().text == "in") {
      op = CmpOp::kNotIn;
      next();
      next();
    } else {
      break;
    }
    if (!node) {
      node = make(ExprKind::kCompare, at);
      node->args.push_back(std::move(first));
    }
    OX_ASSIGN_OR_RETURN(ExprPtr operand, parse_math1());
    node->cmp_ops.push_back(op);
    node->args.push_back(std::move(operand));
  }
  if (!node) return first;
  return seal(std::move(node));
}

namespace {

bool assignable(const Expr& e) {
  if (e.kind == ExprKind::kName) return true;
  if (e.kind != ExprKind::kTuple) return false;
  for (const ExprPtr& item : e.args) {
    if (!assignable(*item)) return false;
  }
  return true;
}

Result<ExprPtr> binary(ExprPtr left, ExprPtr right, BinOp op, ExprPtr node) {
  node->bin_op = op;
  node->args.push_back(std::move(left));
  node->args.push_back(std::move(right));
  return node;
}

}  // namespace

Result<ExprPtr> Parser::parse_math1() {
  OX_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
    OX_ASSIGN_OR_RETURN(ExprPtr node, binary(std::move(left), std::move(right), at.text == "+" ? BinOp::kAdd : BinOp::kSub,
                                             make(ExprKind::kBinary, at)));
    OX_ASSIGN_OR_RETURN(left, seal(std::move(node)));
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  const Token at = cur();
  OX_ASSIGN_OR_RETURN(ExprPtr first, parse_math2());
  if (!is_op("~")) return first;
  ExprPtr node = make(ExprKind::kConcat, at);
  node->args.push_back(std::move(first));
  while (skip_op("~")) {
    OX_ASSIGN_OR_RETURN(ExprPtr operand, parse_math2());
    node->args.push_back(std::move(operand));
  }
  return seal(std::move(node));
}

Result<ExprPtr> Parser::parse_math2() {
  OX_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token at = next();
    const BinOp op = at.text == "*" ? BinOp::kMul : at.text == "/" ? BinOp::kDiv : at.text == "//" ? BinOp::kFloorDiv : BinOp::kMod;
    OX_ASSIGN_OR_RETURN(ExprPtr right, parse_pow());
    OX_ASSIGN_OR_RETURN(ExprPtr node, binary(std::move(left), std::move(right), op, make(ExprKind::kBinary, at)));
    OX_ASSIGN_OR_RETURN(left, seal(std::move(node)));
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  OX_ASSIGN_OR_RETURN(ExprPtr left, parse_unary());
  while (is_op("**")) {  // left-associative in Jinja: 2**3**2 == 64
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr right, parse_unary());
    OX_ASSIGN_OR_RETURN(ExprPtr node, binary(std::move(left), std::move(right), BinOp::kPow, make(ExprKind::kBinary, at)));
    OX_ASSIGN_OR_RETURN(left, seal(std::move(node)));
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  DepthGuard guard(&depth_);
  OX_TRY(check_depth());
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    const Token at = next();
    OX_ASSIGN_OR_RETURN(ExprPtr operand, parse_unary(false));
    node = make(ExprKind::kUnary, at);
    node->name = at.text;
    node->args.push_back(std::move(operand));
    OX_ASSIGN_OR_RETURN(node, seal(std::move(node)));
  } else {
    OX_ASSIGN_OR_RETURN(node, parse_primary());
  }
  OX_ASSIGN_OR_RETURN(node, parse_postfix(std::move(node)));
  if (with_filter) {
    OX_ASSIGN_OR_RETURN(node, parse_filter_expr(std::move(node)));
  }
  return node;
}

Result<ExprPtr> Parser::parse_primary() {
  const Token& t = cur();
  if (t.type == Tok::kName) {
    const Token at = next();
    ExprPtr node = make(ExprKind::kConst, at);
    if (at.text == "true" || at.text == "True") {
      node->value = Value::boolean(true);
    } else if (at.text == "false" || at.text == "False") {
      node->value = Value::boolean(false);
    } else if (at.text == "none" || at.text == "None") {
      node->value = Value::none();
    } else {
      node->kind = ExprKind::kName;
      node->name = at.text;
    }
    return node;
  }
  if (t.type == Tok::kString) {
    const Token at = next();
    std::string s = at.text;
    while (cur().type == Tok::kString) s += next().text;  // adjacent literals concatenate
    ExprPtr node = make(ExprKind::kConst, at);
    node->value = Value::string(std::move(s));
    return node;
  }
  if (t.type == Tok::kInt || t.type == Tok::kFloat) {
    const Token at = next();
    ExprPtr node = make(ExprKind::kConst, at);
    node->value = at.type == Tok::kInt ? Value::integer(at.int_value) : Value::real(at.float_value);
    return node;
  }
  if (is_op("(")) {
    next();
    OX_ASSIGN_OR_RETURN(ExprPtr inner, parse_tuple(true, false, {}, true));
    OX_TRY(expect_op(")"));
    return inner;
  }
  if (is_op("[") || is_op("{")) {
    const bool is_list = is_op("[");
    const Token at = next();
    ExprPtr node = make(is_list ? ExprKind::kList : ExprKind::kDict, at);
    const char* close = is_list ? "]" : "}";
    while (!is_op(close)) {
      if (!node->args.empty()) {
        OX_TRY(expect_op(","));
        if (is_op(close)) break;
      }
      OX_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
      node->args.push_back(std::move(item));
      if (!is_list) {
        OX_TRY(expect_op(":"));
        OX_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        node->args.push_back(std::move(value));
      }
    }
    next();
    return seal(std::move(node));
  }
  return unexpected("an expression");
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      OX_ASSIGN_OR_RETURN(node, parse_subscript(std::move(node)));
    } else if (is_op("(")) {
      const Token at = cur();
      ExprPtr call = make(ExprKind::kCall, at);
      call->args.push_back(std::move(node));
      OX_TRY(parse_call_args(call.get()));
      OX_ASSIGN_OR_RETURN(node, seal(std::move(call)));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (is_op("|")) {
      OX_ASSIGN_OR_RETURN(node, parse_filter(std::move(node), false));
    } else if (is_name("is")) {
      OX_ASSIGN_OR_RETURN(node, parse_test(std::move(node)));
    } else if (is_op("(")) {
      const Token at = cur();
      ExprPtr call = make(ExprKind::kCall, at);
      call->args.push_back(std::move(node));
      OX_TRY(parse_call_args(call.get()));
      OX_ASSIGN_OR_RETURN(node, seal(std::move(call)));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr node) {
  const Token at = next();
  if (at.text == ".") {
    const Token& attr = cur();
    if (attr.type == Tok::kName) {
      ExprPtr get = make(ExprKind::kGetattr, at);
      get->name = next().text;
      get->args.push_back(std::move(node));
      return seal(std::move(get));
    }
    if (attr.type == Tok::kInt) {
      ExprPtr index = make(ExprKind::kConst, attr);
      index->value = Value::integer(next().int_value);
      ExprPtr get = make(ExprKind::kGetitem, at);
      get->args.push_back(std::move(node));
      get->args.push_back(std::move(index));
      return seal(std::move(get));
    }
    return unexpected("a name or number after '.'");
  }
  std::vector<ExprPtr> items;
  while (!is_op("]")) {
    if (!items.empty()) OX_TRY(expect_op(","));
    OX_ASSIGN_OR_RETURN(ExprPtr item, parse_subscribed());
    items.push_back(std::move(item));
  }
  next();
  ExprPtr index;  // x[] subscripts with an empty tuple, as in jinja2
  if (items.size() == 1) {
    index = std::move(items[0]);
  } else {
    index = make(ExprKind::kTuple, at);
    index->args = std::move(items);
    OX_ASSIGN_OR_RETURN(index, seal(std::move(index)));
  }
  ExprPtr get = make(ExprKind::kGetitem, at);
  get->args.push_back(std::move(node));
  get->args.push_back(std::move(index));
  return seal(std::move(get));
}

Result<ExprPtr> Parser::parse_subscribed() {
  const Token at = cur();
  std::vector<ExprPtr> parts;
  if (is_op(":")) {
    next();
    parts.push_back(nullptr);
  } else {
    OX_ASSIGN_OR_RETURN(ExprPtr node, parse_expression());
    if (!is_op(":")) return node;
    next();
    parts.push_back(std::move(node));
  }
  auto ends_part = [&] { return is_op("]") || is_op(",") || is_op(":"); };
  if (ends_part()) {
    parts.push_back(nullptr);
  } else {
    OX_ASSIGN_OR_RETURN(ExprPtr stop, parse_expression());
    parts.push_back(std::move(stop));
  }
  if (skip_op(":") && !is_op("]") && !is_op(",")) {
    OX_ASSIGN_OR_RETURN(ExprPtr step, parse_expression());
    parts.push_back(std::move(step));
  } else {
    parts.push_back(nullptr);
  }
  ExprPtr slice = make(ExprKind::kSlice, at);
  slice->args = std::move(parts);
  return seal(std::move(slice));
}

Status Parser::parse_call_args(Expr* call) {
  OX_TRY(expect_op("("));
  bool first = true;
  while (!is_op(")")) {
    if (!first) {
      OX_TRY(expect_op(","));
      if (is_op(")")) break;
    }
    first = false;
    if (is_op("*") || is_op("**")) {
      const bool star2 = next().text == "**";
      OX_ASSIGN_OR_RETURN(ExprPtr e, parse_expression());
      (star2 ? call->dyn_kwargs : call->dyn_args) = std::move(e);
    } else if (cur().type == Tok::kName && peek().type == Tok::kOp && peek().text == "=") {
      std::string key = next().text;
      next();
      OX_ASSIGN_OR_RETURN(ExprPtr e, parse_expression());
      call->kwargs.emplace_back(std::move(key), std::move(e));
    } else {
      if (!call->kwargs.empty() || call->dyn_args || call->dyn_kwargs) {
        return fail(cur(), "invalid syntax for function call: positional argument after keyword argument");
      }
      OX_ASSIGN_OR_RETURN(ExprPtr e, parse_expression());
      call->args.push_back(std::move(e));
    }
  }
  next();
  return Status::ok();
}

Result<std::string> Parser::parse_dotted_name() {
  if (cur().type != Tok::kName) return unexpected("a name");
  std::string name = next().text;
  while (is_op(".") && peek().type == Tok::kName) {
    next();
    name += "." + next().text;
  }
  return name;
}

Result<ExprPtr> Parser::parse_filter(ExprPtr node, bool start_inline) {
  while (is_op("|") || start_inline) {
    if (!start_inline) next();
    start_inline = false;
    const Token at = cur();
    ExprPtr filter = make(ExprKind::kFilter, at);
    OX_ASSIGN_OR_RETURN(filter->name, parse_dotted_name());
    filter->args.push_back(std::move(node));
    if (is_op("(")) OX_TRY(parse_call_args(filter.get()));
    OX_ASSIGN_OR_RETURN(node, seal(std::move(filter)));
  }
  return node;
}

Result<ExprPtr> Parser::parse_test(ExprPtr node) {
  next();  // `is`
  ExprPtr test = make(ExprKind::kTest, cur());
  test->negated = skip_name("not");
  OX_ASSIGN_OR_RETURN(test->name, parse_dotted_name());
  test->args.push_back(std::move(node));
  const Token& c = cur();
  if (is_op("(")) {
    OX_TRY(parse_call_args(test.get()));
  } else if ((c.type == Tok::kName || c.type == Tok::kString || c.type == Tok::kInt || c.type == Tok::kFloat ||
              is_op("[") || is_op("{")) &&
             !(c.type == Tok::kName && (c.text == "else" || c.text == "or" || c.text == "and"))) {
    if (is_name("is")) return fail(c, "you cannot chain multiple tests with 'is'");
    OX_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
    OX_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
    test->args.push_back(std::move(arg));
  }
  return seal(std::move(test));
}

Result<ExprPtr> Parser::parse_assign_target(bool with_tuple, bool with_namespace,
                                            std::initializer_list<const char*> extra_ends) {
  const Token at = cur();
  ExprPtr target;
  if (with_namespace && cur().type == Tok::kName && peek().type == Tok::kOp && peek().text == ".") {
    ExprPtr ns = make(ExprKind::kName, at);
    ns->name = next().text;
    next();
    if (cur().type != Tok::kName) return unexpected("an attribute name");
    target = make(ExprKind::kGetattr, at);
    target->name = next().text;
    target->args.push_back(std::move(ns));
    return target;
  }
  if (with_tuple) {
    OX_ASSIGN_OR_RETURN(target, parse_tuple(true, true, extra_ends));
  } else {
    OX_ASSIGN_OR_RETURN(target, parse_primary());
  }
  if (!assignable(*target)) return fail(at, "cannot assign to this expression (expected a name or a tuple of names)");
  return target;
}

}  // namespace ox::chat
