// Statement grammar ({% for %}, {% if %}, {% set %}, {% macro %}, ...) and the checks jinja2
// makes when it compiles a template: unknown filters/tests fail unless inside an `if` or a
// conditional expression (where they only fail if reached), `break` needs an enclosing loop.
#include "core/chat/parser.h"

#include "core/chat/builtins.h"

namespace ox::chat {

namespace {

std::string quoted_list(std::initializer_list<const char*> names) {
  std::string out;
  size_t i = 0;
  for (const char* n : names) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += std::string("'") + n + "'";
    ++i;
  }
  return out;
}

// Walks the finished tree the way jinja2's code generator does.
class Checker {
 public:
  Status stmts(const StmtList& list, bool soft, bool in_loop, Stmt* macro) {
    for (const StmtPtr& s : list) OX_TRY(stmt(*s, soft, in_loop, macro));
    return Status::ok();
  }

 private:
  Status stmt(Stmt& s, bool soft, bool in_loop, Stmt* macro) {
    auto e = [&](const ExprPtr& x, bool sft) { return x ? expr(*x, sft, macro) : Status::ok(); };
    switch (s.kind) {
      case StmtKind::kText: return Status::ok();
      case StmtKind::kBreak:
      case StmtKind::kContinue:
        if (!in_loop) {
          return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: '%s' outside loop", s.line, s.col,
                                                       s.kind == StmtKind::kBreak ? "break" : "continue"));
        }
        return Status::ok();
      case StmtKind::kIf:
        for (auto& [test, body] : s.branches) {
          OX_TRY(e(test, true));
          OX_TRY(stmts(body, true, in_loop, macro));
        }
        return stmts(s.else_body, true, in_loop, macro);
      case StmtKind::kFor:
        OX_TRY(e(s.expr, soft));
        OX_TRY(e(s.filter_cond, false));
        OX_TRY(stmts(s.body, false, true, macro));
        return stmts(s.else_body, false, in_loop, macro);
      case StmtKind::kMacro:
      case StmtKind::kCallBlock:
        for (const ExprPtr& d : s.defaults) OX_TRY(e(d, false));
        if (s.kind == StmtKind::kCallBlock) OX_TRY(e(s.expr, soft));
        return stmts(s.body, false, false, &s);
      case StmtKind::kWith:
        for (auto& [target, value] : s.assigns) OX_TRY(e(value, soft));
        return stmts(s.body, false, in_loop, macro);
      default:
        OX_TRY(e(s.expr, soft));
        OX_TRY(e(s.target, soft));
        return stmts(s.body, s.kind == StmtKind::kScope ? soft : false, in_loop, macro);
    }
  }

  Status expr(const Expr& x, bool soft, Stmt* macro) {
    if (x.kind == ExprKind::kName && macro != nullptr) {
      if (x.name == "varargs") macro->uses_varargs = true;
      if (x.name == "kwargs") macro->uses_kwargs = true;
      if (x.name == "caller") macro->uses_caller = true;
    }
    if (x.kind == ExprKind::kCond) soft = true;
    if (!soft && x.kind == ExprKind::kFilter && !is_filter_name(x.name)) {
      return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: no filter named '%s'", x.line, x.col, x.name.c_str()));
    }
    if (!soft && x.kind == ExprKind::kTest && !is_test_name(x.name)) {
      return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: no test named '%s'", x.line, x.col, x.name.c_str()));
    }
    for (const ExprPtr& a : x.args) {
      if (a) OX_TRY(expr(*a, soft, macro));
    }
    for (const auto& kw : x.kwargs) OX_TRY(expr(*kw.second, soft, macro));
    if (x.dyn_args) OX_TRY(expr(*x.dyn_args, soft, macro));
    if (x.dyn_kwargs) OX_TRY(expr(*x.dyn_kwargs, soft, macro));
    return Status::ok();
  }
};

}  // namespace

Result<StmtList> parse_template(std::string_view source) {
  OX_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source));
  Parser parser(std::move(tokens));
  return parser.parse_all();
}

Result<StmtList> Parser::parse_all() {
  std::string which;
  OX_ASSIGN_OR_RETURN(StmtList body, parse_body({}, &which));
  Checker checker;
  OX_TRY(checker.stmts(body, false, false, nullptr));
  return body;
}

// ---- token helpers

bool Parser::skip_op(const char* op) {
  if (!is_op(op)) return false;
  next();
  return true;
}

bool Parser::skip_name(const char* name) {
  if (!is_name(name)) return false;
  next();
  return true;
}

Status Parser::expect_op(const char* op) {
  if (skip_op(op)) return Status::ok();
  return unexpected(std::string("'") + op + "'");
}

Status Parser::expect_name(const char* name) {
  if (skip_name(name)) return Status::ok();
  return unexpected(std::string("'") + name + "'");
}

Status Parser::expect(Tok type) {
  if (cur().type != type) return unexpected(token_description(type));
  next();
  return Status::ok();
}

Status Parser::fail(const Token& at, const std::string& msg) const {
  return error(ErrorCode::kInvalidFile, strfmt("line %u, column %u: %s", at.line, at.col, msg.c_str()));
}

std::string Parser::describe(const Token& t) {
  switch (t.type) {
    case Tok::kName:
    case Tok::kOp: return "'" + t.text + "'";
    case Tok::kInt:
    case Tok::kFloat: return "number " + t.text;
    case Tok::kString: return "string literal";
    default: return token_description(t.type);
  }
}

Status Parser::unexpected(const std::string& expected) const {
  return fail(cur(), "expected " + expected + ", got " + describe(cur()));
}

ExprPtr Parser::make(ExprKind kind, const Token& at) const {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = at.line;
  e->col = at.col;
  return e;
}

// ---- statements

Result<StmtList> Parser::parse_body(std::initializer_list<const char*> ends, std::string* which) {
  StmtList out;
  while (true) {
    const Token& t = cur();
    if (t.type == Tok::kData) {
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kText;
      s->line = t.line;
      s->col = t.col;
      s->text = next().text;
      out.push_back(std::move(s));
    } else if (t.type == Tok::kVarBegin) {
      const Token at = next();
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kPrint;
      s->line = at.line;
      s->col = at.col;
      OX_ASSIGN_OR_RETURN(s->expr, parse_tuple());
      OX_TRY(expect(Tok::kVarEnd));
      out.push_back(std::move(s));
    } else if (t.type == Tok::kBlockBegin) {
      next();
      for (const char* e : ends) {
        if (is_name(e)) {
          *which = e;
          return out;
        }
      }
      const Token at = cur();
      const bool closing = at.type == Tok::kName && (at.text.rfind("end", 0) == 0 || at.text == "elif" || at.text == "else");
      if (closing && ends.size() > 0) {
        return fail(at, "unexpected tag '" + at.text + "', expected " + quoted_list(ends) + open_block_note());
      }
      if (closing) return fail(at, "unexpected tag '" + at.text + "': no block is open");
      OX_ASSIGN_OR_RETURN(StmtPtr s, parse_statement());
      OX_TRY(expect(Tok::kBlockEnd));
      out.push_back(std::move(s));
    } else if (t.type == Tok::kEof) {
      if (ends.size() == 0) return out;
      return fail(t, "unexpected end of template, expected " + quoted_list(ends) + open_block_note());
    } else {
      return fail(t, "unexpected " + describe(t));
    }
  }
}

Result<StmtPtr> Parser::parse_statement() {
  DepthGuard guard(&depth_);
  OX_TRY(check_depth());
  const Token at = cur();
  if (at.type != Tok::kName) return unexpected("a tag name");
  const std::string& tag = at.text;
  static const char* const kBlockTags[] = {"for", "if", "set", "macro", "call", "filter", "with", "block", "generation", "autoescape"};
  for (const char* b : kBlockTags) {
    if (tag == b) {
      open_blocks_.emplace_back(tag, at.line);
      Result<StmtPtr> s = parse_block_statement(at);
      open_blocks_.pop_back();
      return s;
    }
  }
  if (tag == "break" || tag == "continue") {
    next();
    auto s = std::make_unique<Stmt>();
    s->kind = tag == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    s->line = at.line;
    s->col = at.col;
    return s;
  }
  if (tag == "include" || tag == "extends" || tag == "import" || tag == "from") {
    return fail(at, "'" + tag + "' is not supported: chat templates cannot load other templates");
  }
  return fail(at, "unknown tag '" + tag + "'");
}

Result<StmtPtr> Parser::parse_block_statement(const Token& at) {
  next();
  const std::string& tag = at.text;
  if (tag == "for") return parse_for(at);
  if (tag == "if") return parse_if(at);
  if (tag == "set") return parse_set(at);
  if (tag == "macro") return parse_macro(at, false);
  if (tag == "call") return parse_macro(at, true);
  if (tag == "filter") return parse_filter_block(at);
  if (tag == "with") return parse_with(at);
  if (tag == "block") return parse_scope(at, "endblock");
  if (tag == "generation") return parse_scope(at, "endgeneration");
  return parse_scope(at, "endautoescape");
}

std::string Parser::open_block_note() const {
  if (open_blocks_.empty()) return "";
  return strfmt(" to close the '%s' block from line %u", open_blocks_.back().first.c_str(), open_blocks_.back().second);
}

Status Parser::finish_body(Stmt* s, const char* end, const std::string& which) {
  if (which != end) return fail(cur(), std::string("expected '") + end + "'");
  next();
  return Status::ok();
}

Result<StmtPtr> Parser::parse_for(const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kFor;
  s->line = at.line;
  s->col = at.col;
  OX_ASSIGN_OR_RETURN(s->target, parse_assign_target(true, false, {"in"}));
  OX_TRY(expect_name("in"));
  OX_ASSIGN_OR_RETURN(s->expr, parse_tuple(false, false, {"recursive"}));
  if (skip_name("if")) {
    OX_ASSIGN_OR_RETURN(s->filter_cond, parse_expression());
  }
  if (is_name("recursive")) return fail(cur(), "recursive for loops are not supported");
  OX_TRY(expect(Tok::kBlockEnd));
  std::string which;
  OX_ASSIGN_OR_RETURN(s->body, parse_body({"endfor", "else"}, &which));
  if (which == "else") {
    next();
    OX_TRY(expect(Tok::kBlockEnd));
    OX_ASSIGN_OR_RETURN(s->else_body, parse_body({"endfor"}, &which));
  }
  OX_TRY(finish_body(s.get(), "endfor", which));
  return s;
}

Result<StmtPtr> Parser::parse_if(const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kIf;
  s->line = at.line;
  s->col = at.col;
  std::string which;
  while (true) {
    OX_ASSIGN_OR_RETURN(ExprPtr test, parse_tuple(false));
    OX_TRY(expect(Tok::kBlockEnd));
    OX_ASSIGN_OR_RETURN(StmtList body, parse_body({"elif", "else", "endif"}, &which));
    s->branches.emplace_back(std::move(test), std::move(body));
    if (which != "elif") break;
    next();
  }
  if (which == "else") {
    next();
    OX_TRY(expect(Tok::kBlockEnd));
    OX_ASSIGN_OR_RETURN(s->else_body, parse_body({"endif"}, &which));
  }
  OX_TRY(finish_body(s.get(), "endif", which));
  return s;
}

Result<StmtPtr> Parser::parse_set(const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->line = at.line;
  s->col = at.col;
  OX_ASSIGN_OR_RETURN(s->target, parse_assign_target(true, true));
  if (skip_op("=")) {
    s->kind = StmtKind::kSet;
    OX_ASSIGN_OR_RETURN(s->expr, parse_tuple());
    return s;
  }
  s->kind = StmtKind::kSetBlock;
  if (s->target->kind == ExprKind::kTuple) return fail(at, "a block set needs a single name");
  if (is_op("|")) {
    OX_ASSIGN_OR_RETURN(s->expr, parse_filter(nullptr, false));
  }
  OX_TRY(expect(Tok::kBlockEnd));
  std::string which;
  OX_ASSIGN_OR_RETURN(s->body, parse_body({"endset"}, &which));
  OX_TRY(finish_body(s.get(), "endset", which));
  return s;
}

Status Parser::parse_signature(Stmt* s) {
  OX_TRY(expect_op("("));
  while (!is_op(")")) {
    if (!s->params.empty()) OX_TRY(expect_op(","));
    if (cur().type != Tok::kName) return unexpected("a parameter name");
    s->params.push_back(next().text);
    ExprPtr def;
    if (skip_op("=")) {
      OX_ASSIGN_OR_RETURN(def, parse_expression());
    }
    s->defaults.push_back(std::move(def));
  }
  next();
  return Status::ok();
}

Result<StmtPtr> Parser::parse_macro(const Token& at, bool call_block) {
  auto s = std::make_unique<Stmt>();
  s->kind = call_block ? StmtKind::kCallBlock : StmtKind::kMacro;
  s->line = at.line;
  s->col = at.col;
  if (call_block) {
    if (is_op("(")) OX_TRY(parse_signature(s.get()));
    OX_ASSIGN_OR_RETURN(s->expr, parse_expression());
    if (s->expr->kind != ExprKind::kCall) return fail(at, "expected a call after 'call'");
  } else {
    if (cur().type != Tok::kName) return unexpected("a macro name");
    s->text = next().text;
    OX_TRY(parse_signature(s.get()));
  }
  OX_TRY(expect(Tok::kBlockEnd));
  const char* end = call_block ? "endcall" : "endmacro";
  std::string which;
  if (call_block) {
    OX_ASSIGN_OR_RETURN(s->body, parse_body({"endcall"}, &which));
  } else {
    OX_ASSIGN_OR_RETURN(s->body, parse_body({"endmacro"}, &which));
  }
  OX_TRY(finish_body(s.get(), end, which));
  return s;
}

Result<StmtPtr> Parser::parse_filter_block(const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kFilterBlock;
  s->line = at.line;
  s->col = at.col;
  OX_ASSIGN_OR_RETURN(s->expr, parse_filter(nullptr, true));
  OX_TRY(expect(Tok::kBlockEnd));
  std::string which;
  OX_ASSIGN_OR_RETURN(s->body, parse_body({"endfilter"}, &which));
  OX_TRY(finish_body(s.get(), "endfilter", which));
  return s;
}

Result<StmtPtr> Parser::parse_with(const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kWith;
  s->line = at.line;
  s->col = at.col;
  while (cur().type != Tok::kBlockEnd) {
    if (!s->assigns.empty()) OX_TRY(expect_op(","));
    OX_ASSIGN_OR_RETURN(ExprPtr target, parse_assign_target(true, false));
    OX_TRY(expect_op("="));
    OX_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
    s->assigns.emplace_back(std::move(target), std::move(value));
  }
  OX_TRY(expect(Tok::kBlockEnd));
  std::string which;
  OX_ASSIGN_OR_RETURN(s->body, parse_body({"endwith"}, &which));
  OX_TRY(finish_body(s.get(), "endwith", which));
  return s;
}

Result<StmtPtr> Parser::parse_scope(const Token& at, const char* end) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kScope;
  s->line = at.line;
  s->col = at.col;
  std::string block_name;
  if (at.text == "block") {
    if (cur().type != Tok::kName) return unexpected("a block name");
    block_name = next().text;
    while (skip_name("scoped") || skip_name("required")) {
    }
  } else if (at.text == "autoescape") {
    OX_ASSIGN_OR_RETURN(s->expr, parse_expression());
  }
  OX_TRY(expect(Tok::kBlockEnd));
  std::string which;
  OX_ASSIGN_OR_RETURN(s->body, parse_body({end}, &which));
  OX_TRY(finish_body(s.get(), end, which));
  if (!block_name.empty()) skip_name(block_name.c_str());
  return s;
}

}  // namespace ox::chat
