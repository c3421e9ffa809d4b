// jinja2's filters over sequences and mappings: join, map, select/reject(attr), sort, unique,
// dictsort, first/last, min/max, sum, batch, slice. Attribute paths ("a.b.0") resolve the way
// jinja2's make_attrgetter does: item lookup with attribute fallback, part by part.
#include <algorithm>

#include "core/chat/filters.h"
#include "core/chat/unicode.h"

namespace ox::chat::filters {

namespace {

const std::string kDot = ".";
const std::string kComma = ",";

Result<Value> get_path(Interp& in, const Value& item, const Value& attribute) {
  if (!attribute.is_string()) return in.getitem(item, attribute);
  Value cur = item;
  for (const std::string& part : pystr::split(attribute.str(), &kDot, -1)) {
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    Value key = digits ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : Value::string(part);
    OX_ASSIGN_OR_RETURN(cur, in.getitem(cur, key));
  }
  return cur;
}

// Sort keys compare case-insensitively unless case_sensitive is set.
Value ignore_case(const Value& v, bool case_sensitive) {
  if (case_sensitive || !v.is_string()) return v;
  return Value::string(utf8::lower(v.str()));
}

// Multiple comma-separated attributes make a tuple key (jinja2's make_multi_attrgetter).
Result<Value> sort_key(Interp& in, const Value& item, const Value* attribute, bool case_sensitive) {
  if (attribute == nullptr || attribute->is_none()) return ignore_case(item, case_sensitive);
  if (attribute->is_string() && attribute->str().find(',') != std::string::npos) {
    ValueList parts;
    for (const std::string& a : pystr::split(attribute->str(), &kComma, -1)) {
      OX_ASSIGN_OR_RETURN(Value v, get_path(in, item, Value::string(a)));
      parts.push_back(ignore_case(v, case_sensitive));
    }
    return Value::tuple(std::move(parts));
  }
  OX_ASSIGN_OR_RETURN(Value v, get_path(in, item, *attribute));
  return ignore_case(v, case_sensitive);
}

// Stable sort by precomputed keys; Python's TypeError for unorderable keys becomes an error.
Status sort_by_keys(ValueList* items, ValueList* keys, bool reverse) {
  std::vector<size_t> order(items->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status failure;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!failure.is_ok()) return false;
    Result<int> c = reverse ? compare((*keys)[b], (*keys)[a]) : compare((*keys)[a], (*keys)[b]);
    if (!c.ok()) {
      failure = c.status();
      return false;
    }
    return *c < 0;
  });
  OX_TRY(failure);
  ValueList sorted;
  sorted.reserve(items->size());
  for (size_t i : order) sorted.push_back(std::move((*items)[i]));
  *items = std::move(sorted);
  return Status::ok();
}

Result<Value> select_impl(Interp& in, const Value& v, CallArgs& a, bool keep, bool by_attr) {
  if (!truthy(v)) return Value::iterator({});  // jinja2 yields nothing for a falsy input
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  size_t off = 0;
  const Value* attribute = nullptr;
  if (by_attr) {
    if (a.args.empty()) return type_error("missing parameter for attribute name");
    attribute = &a.args[0];
    off = 1;
  }
  const Value* test = a.args.size() > off ? &a.args[off] : nullptr;
  CallArgs test_args;
  for (size_t i = off + 1; i < a.args.size(); ++i) test_args.args.push_back(a.args[i]);
  test_args.kwargs = a.kwargs;
  if (test != nullptr && !test->is_string()) return type_error("test name must be a string");
  ValueList out;
  for (const Value& item : items) {
    Value probe = item;
    if (attribute != nullptr) {
      OX_ASSIGN_OR_RETURN(probe, get_path(in, item, *attribute));
    }
    bool pass = false;
    if (test == nullptr) {
      pass = truthy(probe);
    } else {
      if (!is_test_name(test->str())) return type_error("no test named '" + test->str() + "'");
      CallArgs copy = test_args;
      OX_ASSIGN_OR_RETURN(pass, call_test(in, test->str(), probe, copy));
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::iterator(std::move(out));
}

Result<Value> min_max(Interp& in, const Value& v, CallArgs& a, bool want_max) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, want_max ? "max" : "min", {"case_sensitive", "attribute"}, &p));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  const bool cs = p[0] != nullptr && truthy(*p[0]);
  size_t best = 0;
  OX_ASSIGN_OR_RETURN(Value best_key, sort_key(in, items[0], p[1], cs));
  for (size_t i = 1; i < items.size(); ++i) {
    OX_ASSIGN_OR_RETURN(Value key, sort_key(in, items[i], p[1], cs));
    OX_ASSIGN_OR_RETURN(int c, compare(key, best_key));
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

}  // namespace

Result<Value> first(Interp& in, const Value& v, CallArgs&) {
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> last(Interp& in, const Value& v, CallArgs&) {
  if (v.kind() == Kind::kIterator) return type_error("'generator' object is not reversible");
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> list(Interp& in, const Value& v, CallArgs&) {
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  return Value::list(std::move(items));
}

Result<Value> items(Interp&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::iterator({});
  if (!v.is_dict()) return type_error("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [k, item] : v.dict().entries()) out.push_back(Value::tuple({k, item}));
  return Value::iterator(std::move(out));
}

Result<Value> join(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "join", {"d", "attribute"}, &p));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  const std::string sep = p[0] != nullptr ? to_str(*p[0]) : "";
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (p[1] != nullptr && !p[1]->is_none()) {
      OX_ASSIGN_OR_RETURN(item, get_path(in, item, *p[1]));
    }
    if (i > 0) out += sep;
    out += to_str(item);
    OX_TRY(in.check_string_size(out.size()));
  }
  return Value::string(std::move(out));
}

Result<Value> map(Interp& in, const Value& v, CallArgs& a) {
  if (!truthy(v)) return Value::iterator({});  // jinja2 yields nothing for a falsy input
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  ValueList out;
  out.reserve(items.size());
  if (a.args.empty()) {
    const Value* attribute = nullptr;
    const Value* fallback = nullptr;
    for (const auto& [k, val] : a.kwargs) {
      if (k == "attribute") {
        attribute = &val;
      } else if (k == "default") {
        fallback = &val;
      } else {
        return type_error("Unexpected keyword argument '" + k + "'");
      }
    }
    if (attribute == nullptr) return type_error("map requires a filter argument");
    for (const Value& item : items) {
      OX_ASSIGN_OR_RETURN(Value got, get_path(in, item, *attribute));
      out.push_back(got.is_undefined() && fallback != nullptr ? *fallback : got);
    }
    return Value::iterator(std::move(out));
  }
  if (!a.args[0].is_string() || !is_filter_name(a.args[0].str())) return type_error("map: no filter named " + repr(a.args[0]));
  CallArgs rest;
  rest.args.assign(a.args.begin() + 1, a.args.end());
  rest.kwargs = a.kwargs;
  for (const Value& item : items) {
    CallArgs copy = rest;
    OX_ASSIGN_OR_RETURN(Value got, call_filter(in, a.args[0].str(), item, copy));
    out.push_back(std::move(got));
  }
  return Value::iterator(std::move(out));
}

Result<Value> select(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }
Result<Value> reject(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Result<Value> selectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Result<Value> rejectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Result<Value> max(Interp& in, const Value& v, CallArgs& a) { return min_max(in, v, a, true); }
Result<Value> min(Interp& in, const Value& v, CallArgs& a) { return min_max(in, v, a, false); }

Result<Value> reverse(Interp& in, const Value& v, CallArgs&) {
  if (v.is_string()) return slice_value(v, Value::none(), Value::none(), Value::integer(-1));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  std::reverse(items.begin(), items.end());
  return Value::iterator(std::move(items));  // reversed() gives an iterator
}

Result<Value> sort(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "sort", {"reverse", "case_sensitive", "attribute"}, &p));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  ValueList keys;
  for (const Value& item : items) {
    OX_ASSIGN_OR_RETURN(Value k, sort_key(in, item, p[2], p[1] != nullptr && truthy(*p[1])));
    keys.push_back(std::move(k));
  }
  OX_TRY(sort_by_keys(&items, &keys, p[0] != nullptr && truthy(*p[0])));
  return Value::list(std::move(items));
}

Result<Value> dictsort(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "dictsort", {"case_sensitive", "by", "reverse"}, &p));
  if (!v.is_dict()) return type_error("dictsort needs a mapping");
  const std::string by = p[1] != nullptr ? to_str(*p[1]) : "key";
  if (by != "key" && by != "value") return type_error("You can only sort by either 'key' or 'value'");
  ValueList items;
  ValueList keys;
  for (const auto& [k, item] : v.dict().entries()) {
    items.push_back(Value::tuple({k, item}));
    keys.push_back(ignore_case(by == "key" ? k : item, p[0] != nullptr && truthy(*p[0])));
  }
  OX_TRY(sort_by_keys(&items, &keys, p[2] != nullptr && truthy(*p[2])));
  return Value::list(std::move(items));
}

Result<Value> unique(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "unique", {"case_sensitive", "attribute"}, &p));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  ValueList out;
  std::vector<std::string> seen;
  for (const Value& item : items) {
    OX_ASSIGN_OR_RETURN(Value key, sort_key(in, item, p[1], p[0] != nullptr && truthy(*p[0])));
    std::optional<std::string> h = hash_key(key);
    if (!h) return type_error(strfmt("unhashable type: '%s'", type_name(key)));
    if (std::find(seen.begin(), seen.end(), *h) != seen.end()) continue;
    seen.push_back(std::move(*h));
    out.push_back(item);
  }
  return Value::iterator(std::move(out));
}

Result<Value> sum(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "sum", {"attribute", "start"}, &p));
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  Value total = p[1] != nullptr ? *p[1] : Value::integer(0);
  for (const Value& item : items) {
    Value x = item;
    if (p[0] != nullptr && !p[0]->is_none()) {
      OX_ASSIGN_OR_RETURN(x, get_path(in, item, *p[0]));
    }
    OX_ASSIGN_OR_RETURN(total, binary_op(BinOp::kAdd, total, x, in));
  }
  return total;
}

Result<Value> batch(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "batch", {"linecount", "fill_with"}, &p));
  if (p[0] == nullptr || !p[0]->is_int() || p[0]->get_int() <= 0) return type_error("batch() needs a positive line count");
  const auto n = static_cast<size_t>(p[0]->get_int());
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  ValueList out;
  ValueList row;
  for (Value& item : items) {
    row.push_back(std::move(item));
    if (row.size() == n) {
      out.push_back(Value::list(std::move(row)));
      row.clear();
    }
  }
  if (!row.empty()) {
    if (p[1] != nullptr && !p[1]->is_none()) {
      while (row.size() < n) row.push_back(*p[1]);
    }
    out.push_back(Value::list(std::move(row)));
  }
  return Value::iterator(std::move(out));
}

Result<Value> slice(Interp& in, const Value& v, CallArgs& a) {
  std::vector<const Value*> p;
  OX_TRY(bind_args(a, "slice", {"slices", "fill_with"}, &p));
  if (p[0] == nullptr || !p[0]->is_int() || p[0]->get_int() <= 0 || p[0]->get_int() > 100000) {
    return type_error("slice() needs a positive number of slices");
  }
  OX_ASSIGN_OR_RETURN(ValueList items, in.iterate(v));
  const auto slices = static_cast<size_t>(p[0]->get_int());
  const size_t per = items.size() / slices;
  const size_t with_extra = items.size() % slices;
  size_t offset = 0;
  ValueList out;
  for (size_t i = 0; i < slices; ++i) {
    const size_t start = offset + i * per;
    if (i < with_extra) ++offset;
    const size_t end = offset + (i + 1) * per;
    ValueList part(items.begin() + static_cast<std::ptrdiff_t>(start), items.begin() + static_cast<std::ptrdiff_t>(end));
    if (p[1] != nullptr && !p[1]->is_none() && i >= with_extra) part.push_back(*p[1]);
    out.push_back(Value::list(std::move(part)));
  }
  return Value::iterator(std::move(out));
}

}  // namespace ox::chat::filters
