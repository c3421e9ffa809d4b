// Expression evaluation: names, literals, attribute/item lookup with the sandbox's fallbacks,
// calls, filters, tests, Python arithmetic and comparison, slicing and the loop object.
#include <cmath>

#include "core/chat/builtins.h"
#include "core/chat/interp.h"
#include "core/chat/unicode.h"

namespace ox::chat {

namespace {

constexpr uint32_t kMaxValueDepth = 250;

std::string object_desc(const Value& v) {  // jinja2's object_type_repr
  if (v.is_none()) return "None";
  return std::string(type_name(v)) + " object";
}

Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined(strfmt("'%s' has no attribute '%s'", object_desc(obj).c_str(), name.c_str()));
}

Value missing_item(const Value& obj, const Value& key) {
  if (key.is_string()) return missing_attr(obj, key.str());
  return Value::undefined(object_desc(obj) + " has no element " + repr(key));
}

bool int_index(const Value& key, int64_t size, int64_t* index) {
  if (!key.is_int()) return false;
  int64_t i = key.get_int();
  if (i < 0) i += size;
  if (i < 0 || i >= size) return false;
  *index = i;
  return true;
}

Value loop_method(const std::shared_ptr<Object>& obj, const std::string& name) {
  auto c = std::make_shared<Callable>();
  c->name = "loop." + name;
  auto loop = std::static_pointer_cast<LoopState>(obj);
  c->depth = loop->items->depth + 2;
  if (name == "cycle") {
    c->fn = [loop](Interp&, CallArgs& a) -> Result<Value> {
      if (a.args.empty()) return type_error("no items for cycling given");
      return a.args[static_cast<size_t>(loop->index0) % a.args.size()];
    };
  } else {
    c->fn = [loop](Interp&, CallArgs& a) -> Result<Value> {
      Value current = Value::tuple(a.args);
      if (loop->last_changed && equals(*loop->last_changed, current)) return Value::boolean(false);
      loop->last_changed = std::move(current);
      return Value::boolean(true);
    };
  }
  return Value::object(Kind::kCallable, std::move(c));
}

Value loop_attr(const Value& v, const std::string& name) {
  const LoopState& l = *v.as<LoopState>();
  const ValueList& items = l.items->items;
  const auto length = static_cast<int64_t>(items.size());
  if (name == "index") return Value::integer(l.index0 + 1);
  if (name == "index0") return Value::integer(l.index0);
  if (name == "revindex") return Value::integer(length - l.index0);
  if (name == "revindex0") return Value::integer(length - l.index0 - 1);
  if (name == "first") return Value::boolean(l.index0 == 0);
  if (name == "last") return Value::boolean(l.index0 == length - 1);
  if (name == "length") return Value::integer(length);
  if (name == "depth") return Value::integer(l.depth0 + 1);
  if (name == "depth0") return Value::integer(l.depth0);
  if (name == "previtem") {
    return l.index0 > 0 ? items[static_cast<size_t>(l.index0 - 1)] : Value::undefined("there is no previous item");
  }
  if (name == "nextitem") {
    return l.index0 + 1 < length ? items[static_cast<size_t>(l.index0 + 1)] : Value::undefined("there is no next item");
  }
  if (name == "cycle" || name == "changed") return loop_method(v.object_ptr(), name);
  return missing_attr(v, name);
}

}  // namespace

Result<Value> Interp::getattr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (!name.empty() && name[0] == '_') {
    return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe");
  }
  switch (obj.kind()) {
    case Kind::kDict: {
      if (std::optional<Value> m = bound_method(obj, name)) return *m;
      if (const Value* v = obj.dict().find(std::string_view(name))) return *v;
      return missing_attr(obj, name);
    }
    case Kind::kNamespace: {
      if (const Value* v = obj.as<Namespace>()->find(name)) return *v;
      return missing_attr(obj, name);
    }
    case Kind::kLoop: return loop_attr(obj, name);
    default: break;
  }
  if (std::optional<Value> m = bound_method(obj, name)) return *m;
  return missing_attr(obj, name);
}

Result<Value> Interp::getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_error(obj);
  switch (obj.kind()) {
    case Kind::kDict:
      if (const Value* v = obj.dict().find(key)) return *v;
      break;
    case Kind::kList:
    case Kind::kTuple: {
      int64_t i = 0;
      if (int_index(key, static_cast<int64_t>(obj.items().size()), &i)) return obj.items()[static_cast<size_t>(i)];
      break;
    }
    case Kind::kString: {
      const std::string& s = obj.str();
      if (!key.is_int()) break;
      if (utf8::is_ascii(s)) {
        int64_t i = 0;
        if (int_index(key, static_cast<int64_t>(s.size()), &i)) return Value::string(s.substr(static_cast<size_t>(i), 1));
        break;
      }
      const std::vector<uint32_t> offs = utf8::offsets(s);
      int64_t i = 0;
      if (int_index(key, static_cast<int64_t>(offs.size() - 1), &i)) {
        return Value::string(s.substr(offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]));
      }
      break;
    }
    case Kind::kNamespace:
    case Kind::kLoop:
      if (key.is_string()) return getattr(obj, key.str());
      break;
    default: break;
  }
  // The sandbox falls back to attributes for string keys (d['items'] is the method if no key).
  if (key.is_string() && (key.str().empty() || key.str()[0] != '_')) {
    if (std::optional<Value> m = bound_method(obj, key.str())) return *m;
  }
  return missing_item(obj, key);
}

Result<Value> Interp::eval(const Expr& e, const ScopePtr& scope) {
  Status budget = charge_eval();
  if (!budget.is_ok()) return locate(std::move(budget), e.line);
  Result<Value> r = eval_inner(e, scope);
  if (!r.ok()) return locate(r.status(), e.line);
  if (e.kind == ExprKind::kConst || e.kind == ExprKind::kName) return r;
  const Value& v = *r;
  if (v.is_string()) {
    string_work_ += v.str().size();
    if (string_work_ > options_.max_string_work) {
      return locate(error(ErrorCode::kTooLarge, strfmt("template built more than %llu bytes of strings",
                                                       static_cast<unsigned long long>(options_.max_string_work))),
                    e.line);
    }
    Status st = check_string_size(v.str().size());
    if (!st.is_ok()) return locate(std::move(st), e.line);
  } else if (v.depth() > kMaxValueDepth) {
    return locate(error(ErrorCode::kTooLarge, strfmt("template built values nested deeper than %u", kMaxValueDepth)), e.line);
  } else if (v.is_sequence() || v.kind() == Kind::kIterator) {
    Status st = check_list_size(v.items().size());
    if (!st.is_ok()) return locate(std::move(st), e.line);
  }
  return r;
}

Status Interp::eval_args(const Expr& e, const ScopePtr& scope, size_t first, CallArgs* out) {
  for (size_t i = first; i < e.args.size(); ++i) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*e.args[i], scope));
    out->args.push_back(std::move(v));
  }
  for (const auto& [key, expr] : e.kwargs) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*expr, scope));
    out->kwargs.emplace_back(key, std::move(v));
  }
  if (e.dyn_args) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*e.dyn_args, scope));
    OX_ASSIGN_OR_RETURN(ValueList items, iterate(v));
    for (Value& item : items) out->args.push_back(std::move(item));
  }
  if (e.dyn_kwargs) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*e.dyn_kwargs, scope));
    if (!v.is_dict()) return type_error("argument after ** must be a mapping");
    for (const auto& [k, item] : v.dict().entries()) {
      if (!k.is_string()) return type_error("keywords must be strings");
      out->kwargs.emplace_back(k.str(), item);
    }
  }
  return Status::ok();
}

Result<Value> Interp::eval_call(const Expr& e, const ScopePtr& scope, const Value* caller) {
  OX_ASSIGN_OR_RETURN(Value fn, eval(*e.args[0], scope));
  CallArgs args;
  OX_TRY(eval_args(e, scope, 1, &args));
  if (caller != nullptr) args.kwargs.emplace_back("caller", *caller);
  return call(fn, args);
}

Result<Value> Interp::eval_filter(const Expr& e, const ScopePtr& scope, const Value* block_input) {
  Value input;
  if (!e.args[0]) {
    input = *block_input;
  } else if (block_input != nullptr && e.args[0]->kind == ExprKind::kFilter) {
    OX_ASSIGN_OR_RETURN(input, eval_filter(*e.args[0], scope, block_input));
  } else {
    OX_ASSIGN_OR_RETURN(input, eval(*e.args[0], scope));
  }
  CallArgs args;
  OX_TRY(eval_args(e, scope, 1, &args));
  if (!is_filter_name(e.name)) return error(ErrorCode::kInvalidFile, "no filter named '" + e.name + "'");
  return call_filter(*this, e.name, input, args);
}

Result<Value> Interp::eval_getitem(const Expr& e, const ScopePtr& scope) {
  OX_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], scope));
  const Expr& index = *e.args[1];
  if (index.kind != ExprKind::kSlice) {
    OX_ASSIGN_OR_RETURN(Value key, eval(index, scope));
    return getitem(obj, key);
  }
  Value bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (index.args[i]) {
      OX_ASSIGN_OR_RETURN(bounds[i], eval(*index.args[i], scope));
    } else {
      bounds[i] = Value::none();
    }
  }
  if (obj.is_undefined()) return undefined_error(obj);
  if (!obj.is_sequence() && !obj.is_string()) return Value::undefined(object_desc(obj) + " cannot be sliced");
  return slice_value(obj, bounds[0], bounds[1], bounds[2]);
}

namespace {

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::kUndefined: return false;  // Undefined iterates as empty
    case Kind::kString:
      if (!item.is_string()) {
        return type_error(strfmt("'in <string>' requires string as left operand, not %s", type_name(item)));
      }
      return container.str().find(item.str()) != std::string::npos;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kIterator:
      for (const Value& v : container.items()) {
        if (equals(v, item)) return true;
      }
      return false;
    case Kind::kDict:
      if (!hash_key(item)) return type_error(strfmt("unhashable type: '%s'", type_name(item)));
      return container.dict().find(item) != nullptr;
    default: break;
  }
  return type_error(strfmt("argument of type '%s' is not iterable", type_name(container)));
}

}  // namespace

Result<Value> Interp::eval_compare(const Expr& e, const ScopePtr& scope) {
  OX_ASSIGN_OR_RETURN(Value left, eval(*e.args[0], scope));
  for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
    OX_ASSIGN_OR_RETURN(Value right, eval(*e.args[i + 1], scope));
    bool result = false;
    const CmpOp op = e.cmp_ops[i];
    if (op == CmpOp::kEq || op == CmpOp::kNe) {
      result = equals(left, right) == (op == CmpOp::kEq);
    } else if (op == CmpOp::kIn || op == CmpOp::kNotIn) {
      OX_ASSIGN_OR_RETURN(bool found, contains(right, left));
      result = found == (op == CmpOp::kIn);
    } else {
      if (left.is_undefined()) return undefined_error(left);
      if (right.is_undefined()) return undefined_error(right);
      OX_ASSIGN_OR_RETURN(int c, compare(left, right));
      result = op == CmpOp::kLt ? c < 0 : op == CmpOp::kLe ? c <= 0 : op == CmpOp::kGt ? c > 0 : c >= 0;
      if ((left.is_number() && std::isnan(left.get_float())) || (right.is_number() && std::isnan(right.get_float()))) {
        result = false;
      }
    }
    if (!result) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Result<Value> Interp::eval_literal(const Expr& e, const ScopePtr& scope) {
  if (e.kind == ExprKind::kDict) {
    Dict d;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      OX_ASSIGN_OR_RETURN(Value k, eval(*e.args[i], scope));
      OX_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], scope));
      OX_TRY(d.set(std::move(k), std::move(v)));
    }
    return Value::dict(std::move(d));
  }
  ValueList items;
  items.reserve(e.args.size());
  for (const ExprPtr& a : e.args) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
    items.push_back(std::move(v));
  }
  return e.kind == ExprKind::kList ? Value::list(std::move(items)) : Value::tuple(std::move(items));
}

// a ~ b ~ c: str() of each operand, Undefined as "".
Result<Value> Interp::eval_concat(const Expr& e, const ScopePtr& scope) {
  std::string out;
  for (const ExprPtr& a : e.args) {
    OX_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
    if (v.is_string()) {
      OX_TRY(check_string_size(out.size() + v.str().size()));
      out += v.str();
    } else {
      out += to_str(v);
      OX_TRY(check_string_size(out.size()));
    }
  }
  return Value::string(std::move(out));
}

Result<Value> Interp::eval_inner(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kConst: return e.value;
    case ExprKind::kName: {
      if (const Value* v = scope->find(e.name)) return *v;
      return Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict: return eval_literal(e, scope);
    case ExprKind::kGetattr: {
      OX_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], scope));
      return getattr(obj, e.name);
    }
    case ExprKind::kGetitem: return eval_getitem(e, scope);
    case ExprKind::kSlice: return type_error("a slice is only valid inside []");
    case ExprKind::kCall: return eval_call(e, scope, nullptr);
    case ExprKind::kFilter: return eval_filter(e, scope, nullptr);
    case ExprKind::kTest: {
      OX_ASSIGN_OR_RETURN(Value input, eval(*e.args[0], scope));
      CallArgs args;
      OX_TRY(eval_args(e, scope, 1, &args));
      if (!is_test_name(e.name)) return error(ErrorCode::kInvalidFile, "no test named '" + e.name + "'");
      OX_ASSIGN_OR_RETURN(bool result, call_test(*this, e.name, input, args));
      return Value::boolean(result != e.negated);
    }
    case ExprKind::kUnary: {
      OX_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], scope));
      return unary_op(e.name, v);
    }
    case ExprKind::kBinary: {
      OX_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], scope));
      OX_ASSIGN_OR_RETURN(Value b, eval(*e.args[1], scope));
      return binary_op(e.bin_op, a, b, *this);
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {  // Python returns the deciding operand, not a bool
      OX_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], scope));
      if (truthy(a) == (e.kind == ExprKind::kOr)) return a;
      return eval(*e.args[1], scope);
    }
    case ExprKind::kNot: {
      OX_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], scope));
      return Value::boolean(!truthy(a));
    }
    case ExprKind::kCompare: return eval_compare(e, scope);
    case ExprKind::kConcat: return eval_concat(e, scope);
    case ExprKind::kCond: {
      OX_ASSIGN_OR_RETURN(Value test, eval(*e.args[0], scope));
      if (truthy(test)) return eval(*e.args[1], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined(strfmt("the inline if-expression on line %u evaluated to false and no else section was defined.", e.line));
    }
  }
  return type_error("unknown expression");
}

}  // namespace ox::chat
