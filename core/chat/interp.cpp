// Statement execution: output, if/for/set/macro/call/filter/with blocks, scoping, loop
// controls, and the budgets (steps, output size, call depth) that bound hostile templates.
#include "core/chat/interp.h"

#include "core/chat/builtins.h"
#include "core/chat/unicode.h"

namespace ox::chat {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent.get()) {
    for (auto it = s->vars.rbegin(); it != s->vars.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
  }
  return nullptr;
}

void Scope::set(const std::string& name, Value v) {
  for (auto& [k, old] : vars) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

Interp::~Interp() {
  // Namespaces may hold themselves or each other (ns.a = ns): empty them so the shared
  // pointers can be freed.
  // Hold every namespace first so that clearing one cannot free a long chain recursively.
  std::vector<std::shared_ptr<Namespace>> alive;
  for (auto& weak : namespaces_) {
    if (auto ns = weak.lock()) alive.push_back(std::move(ns));
  }
  for (auto& ns : alive) ns->attrs.clear();
}

Value Interp::make_namespace() {
  auto ns = std::make_shared<Namespace>();
  namespaces_.push_back(ns);
  return Value::object(Kind::kNamespace, std::move(ns));
}

Status Interp::run(const StmtList& body, const ScopePtr& root, std::string* out) {
  stack_base_ = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  root_ = root;
  out_ = out;
  return exec(body, root);
}

Status Interp::charge_steps(uint64_t n) {
  steps_ += n;
  if (steps_ > options_.max_steps) {
    return error(ErrorCode::kTooLarge, strfmt("template exceeded %llu loop iterations and macro calls",
                                              static_cast<unsigned long long>(options_.max_steps)));
  }
  return Status::ok();
}

Status Interp::check_stack() const {
  // The stack grows down on every target we build for (x86-64, aarch64, wasm32).
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (stack_base_ > here && stack_base_ - here > options_.max_stack_bytes) {
    return error(ErrorCode::kTooLarge, strfmt("template nesting used more than %u bytes of stack", options_.max_stack_bytes));
  }
  return Status::ok();
}

Status Interp::charge_eval() {
  OX_TRY(check_stack());
  if (++evals_ > options_.max_evals) {
    return error(ErrorCode::kTooLarge, strfmt("template exceeded %llu expression evaluations",
                                              static_cast<unsigned long long>(options_.max_evals)));
  }
  return Status::ok();
}

Status Interp::check_string_size(uint64_t bytes) const {
  if (bytes > options_.max_output_bytes) {
    return error(ErrorCode::kTooLarge, strfmt("template built a string of %llu bytes (limit %llu)",
                                              static_cast<unsigned long long>(bytes),
                                              static_cast<unsigned long long>(options_.max_output_bytes)));
  }
  return Status::ok();
}

Status Interp::check_list_size(uint64_t n) const {
  if (n > options_.max_list_items) {
    return error(ErrorCode::kTooLarge, strfmt("template built a list of %llu items (limit %llu)",
                                              static_cast<unsigned long long>(n),
                                              static_cast<unsigned long long>(options_.max_list_items)));
  }
  return Status::ok();
}

Status Interp::locate(Status s, uint32_t line) {
  if (s.is_ok() || error_located_ || line == 0) return s;
  error_located_ = true;
  return Status(s.code(), strfmt("line %u: %s", line, s.message().c_str()));
}

Status Interp::emit(std::string_view text) {
  if (out_->size() + text.size() > options_.max_output_bytes) {
    return error(ErrorCode::kTooLarge, strfmt("template output exceeds %llu bytes",
                                              static_cast<unsigned long long>(options_.max_output_bytes)));
  }
  out_->append(text);
  return Status::ok();
}

Result<std::string> Interp::capture(const StmtList& body, const ScopePtr& scope) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  Status st = exec(body, scope);
  out_ = saved;
  OX_TRY(st);
  return buffer;
}

Status Interp::exec(const StmtList& list, const ScopePtr& scope) {
  for (const StmtPtr& s : list) {
    OX_TRY(exec_stmt(*s, scope));
    if (flow_ != Flow::kNormal) return Status::ok();
  }
  return Status::ok();
}

Status Interp::exec_stmt(const Stmt& s, const ScopePtr& scope) {
  Status st = check_stack();
  if (!st.is_ok()) return locate(std::move(st), s.line);
  switch (s.kind) {
    case StmtKind::kText: return emit(s.text);
    case StmtKind::kPrint: {
      Result<Value> v = eval(*s.expr, scope);
      if (!v.ok()) return v.status();
      st = emit(to_str(*v));
      break;
    }
    case StmtKind::kIf: return exec_if(s, scope);
    case StmtKind::kFor: st = exec_for(s, scope); break;
    case StmtKind::kSet: {
      Result<Value> v = eval(*s.expr, scope);
      if (!v.ok()) return v.status();
      st = assign(*s.target, std::move(*v), scope);
      break;
    }
    case StmtKind::kSetBlock:
    case StmtKind::kFilterBlock: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      Result<std::string> text = capture(s.body, inner);
      if (!text.ok()) return text.status();
      Value v = Value::string(std::move(*text));
      if (s.expr) {
        Result<Value> filtered = eval_filter(*s.expr, scope, &v);
        if (!filtered.ok()) return filtered.status();
        v = std::move(*filtered);
      }
      st = s.kind == StmtKind::kSetBlock ? assign(*s.target, std::move(v), scope) : emit(to_str(v));
      break;
    }
    case StmtKind::kMacro: {
      auto c = std::make_shared<Callable>();
      c->name = s.text;
      c->macro = &s;
      c->closure = scope;
      scope->set(s.text, Value::object(Kind::kCallable, std::move(c)));
      return Status::ok();
    }
    case StmtKind::kCallBlock: st = exec_call_block(s, scope); break;
    case StmtKind::kWith: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      for (const auto& [target, value] : s.assigns) {
        Result<Value> v = eval(*value, scope);
        if (!v.ok()) return v.status();
        OX_TRY(assign(*target, std::move(*v), inner));
      }
      st = exec(s.body, inner);
      break;
    }
    case StmtKind::kScope: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      st = exec(s.body, inner);
      break;
    }
    case StmtKind::kBreak: flow_ = Flow::kBreak; return Status::ok();
    case StmtKind::kContinue: flow_ = Flow::kContinue; return Status::ok();
  }
  return locate(std::move(st), s.line);
}

Status Interp::exec_if(const Stmt& s, const ScopePtr& scope) {
  for (const auto& [test, body] : s.branches) {
    Result<Value> v = eval(*test, scope);
    if (!v.ok()) return v.status();
    if (truthy(*v)) return exec(body, scope);
  }
  return exec(s.else_body, scope);
}

Result<ValueList> Interp::iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return ValueList{};  // jinja2's Undefined iterates as empty
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kIterator: return v.items();
    case Kind::kDict: {
      ValueList keys;
      keys.reserve(v.dict().size());
      for (const auto& [k, item] : v.dict().entries()) keys.push_back(k);
      return keys;
    }
    case Kind::kString: {
      const std::string& s = v.str();
      OX_TRY(check_list_size(s.size()));
      ValueList chars;
      size_t pos = 0;
      while (pos < s.size()) {
        const size_t start = pos;
        utf8::decode(s, &pos);
        chars.push_back(Value::string(s.substr(start, pos - start)));
      }
      return chars;
    }
    default: break;
  }
  return type_error(strfmt("'%s' object is not iterable", type_name(v)));
}

Status Interp::exec_for(const Stmt& s, const ScopePtr& scope) {
  Result<Value> seq = eval(*s.expr, scope);
  if (!seq.ok()) return seq.status();
  std::shared_ptr<const ListData> data;
  if ((seq->is_sequence() || seq->kind() == Kind::kIterator) && !s.filter_cond) {
    data = seq->list_data();  // shared, not copied
  } else {
    OX_ASSIGN_OR_RETURN(ValueList items, iterate(*seq));
    if (s.filter_cond) OX_TRY(filter_items(s, scope, &items));
    data = Value::list(std::move(items)).list_data();
  }
  if (data->items.empty()) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    return exec(s.else_body, inner);
  }
  auto loop = std::make_shared<LoopState>();
  // loop.depth counts recursive-loop levels, so a plain nested loop is still at depth 1.
  loop->items = std::move(data);
  const Value loop_value = Value::object(Kind::kLoop, loop);
  const ValueList& list = loop->items->items;
  for (size_t i = 0; i < list.size(); ++i) {
    OX_TRY(charge_steps(1));
    loop->index0 = static_cast<int64_t>(i);
    auto body = std::make_shared<Scope>();
    body->parent = scope;
    OX_TRY(assign(*s.target, list[i], body));
    body->set("loop", loop_value);
    OX_TRY(exec(s.body, body));
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  return Status::ok();
}

// `for x in xs if cond`: items are filtered before loop.* sees them.
Status Interp::filter_items(const Stmt& s, const ScopePtr& scope, ValueList* items) {
  ValueList kept;
  for (Value& item : *items) {
    OX_TRY(charge_steps(1));
    auto probe = std::make_shared<Scope>();
    probe->parent = scope;
    OX_TRY(assign(*s.target, item, probe));
    Result<Value> keep = eval(*s.filter_cond, probe);
    if (!keep.ok()) return keep.status();
    if (truthy(*keep)) kept.push_back(std::move(item));
  }
  *items = std::move(kept);
  return Status::ok();
}

Status Interp::assign(const Expr& target, Value v, const ScopePtr& scope) {
  if (target.kind == ExprKind::kName) {
    scope->set(target.name, std::move(v));
    return Status::ok();
  }
  if (target.kind == ExprKind::kGetattr) {  // {% set ns.attr = v %}
    const std::string& ns_name = target.args[0]->name;
    const Value* ns = scope->find(ns_name);
    if (ns == nullptr || ns->kind() != Kind::kNamespace) {
      return type_error("cannot assign attribute on non-namespace object '" + ns_name + "'");
    }
    ns->as<Namespace>()->set(target.name, std::move(v));
    return Status::ok();
  }
  // Tuple unpacking: any iterable with exactly as many items as names.
  Result<ValueList> iterated = iterate(v);
  if (!iterated.ok()) return type_error(strfmt("cannot unpack non-iterable %s object", type_name(v)));
  ValueList items = std::move(*iterated);
  const size_t n = target.args.size();
  if (items.size() < n) {
    return type_error(strfmt("not enough values to unpack (expected %zu, got %zu)", n, items.size()));
  }
  if (items.size() > n) return type_error(strfmt("too many values to unpack (expected %zu)", n));
  for (size_t i = 0; i < n; ++i) OX_TRY(assign(*target.args[i], std::move(items[i]), scope));
  return Status::ok();
}

Status Interp::exec_call_block(const Stmt& s, const ScopePtr& scope) {
  auto caller = std::make_shared<Callable>();
  caller->name = "caller";
  caller->macro = &s;
  caller->closure = scope;
  const Value caller_value = Value::object(Kind::kCallable, std::move(caller));
  Result<Value> v = eval_call(*s.expr, scope, &caller_value);
  if (!v.ok()) return v.status();
  return emit(to_str(*v));
}

Result<Value> Interp::call(const Value& fn, CallArgs& args) {
  if (fn.is_undefined()) return undefined_error(fn);
  if (fn.kind() != Kind::kCallable) return type_error(strfmt("'%s' object is not callable", type_name(fn)));
  const Callable* c = fn.as<Callable>();
  if (c->macro != nullptr) return call_macro(*c, args);
  return c->fn(*this, args);
}

Result<Value> Interp::call_macro(const Callable& c, CallArgs& args) {
  const Stmt& m = *c.macro;
  OX_TRY(charge_steps(4));  // a call costs about as much as four loop iterations
  if (call_depth_ >= options_.max_call_depth) {
    return error(ErrorCode::kTooLarge, strfmt("macro calls nested deeper than %u", options_.max_call_depth));
  }
  ScopePtr parent = c.closure.lock();
  auto scope = std::make_shared<Scope>();
  scope->parent = parent ? parent : root_;
  const size_t n = m.params.size();
  if (args.args.size() > n && !m.uses_varargs) {
    return type_error(strfmt("macro '%s' takes not more than %zu argument(s)", c.name.c_str(), n));
  }
  std::vector<bool> bound(n, false);
  for (size_t i = 0; i < n && i < args.args.size(); ++i) {
    scope->set(m.params[i], args.args[i]);
    bound[i] = true;
  }
  Dict extra_kwargs;
  Value caller;
  for (auto& [key, value] : args.kwargs) {
    size_t i = 0;
    while (i < n && m.params[i] != key) ++i;
    if (i < n) {
      if (bound[i]) return type_error(strfmt("macro '%s' got multiple values for argument '%s'", c.name.c_str(), key.c_str()));
      scope->set(key, value);
      bound[i] = true;
    } else if (key == "caller" && m.kind == StmtKind::kMacro) {
      caller = value;
    } else if (m.uses_kwargs) {
      OX_TRY(extra_kwargs.set(Value::string(key), value));
    } else {
      return type_error(strfmt("macro '%s' takes no keyword argument '%s'", c.name.c_str(), key.c_str()));
    }
  }
  for (size_t i = 0; i < n; ++i) {  // defaults are evaluated at call time, in the macro's scope
    if (bound[i]) continue;
    if (m.defaults[i]) {
      OX_ASSIGN_OR_RETURN(Value d, eval(*m.defaults[i], scope));
      scope->set(m.params[i], std::move(d));
    } else {
      scope->set(m.params[i], Value::undefined("parameter '" + m.params[i] + "' was not provided"));
    }
  }
  if (m.uses_varargs) {
    ValueList rest;
    for (size_t i = n; i < args.args.size(); ++i) rest.push_back(args.args[i]);
    scope->set("varargs", Value::tuple(std::move(rest)));
  }
  if (m.uses_kwargs) scope->set("kwargs", Value::dict(std::move(extra_kwargs)));
  if (m.kind == StmtKind::kMacro && m.uses_caller) scope->set("caller", caller);
  ++call_depth_;
  Result<std::string> text = capture(m.body, scope);
  --call_depth_;
  if (!text.ok()) return text.status();
  return Value::string(std::move(*text));
}

}  // namespace ox::chat
