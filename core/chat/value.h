// Values of the template language: the Python objects Jinja templates see (None, bool, int,
// float, str, list, tuple, insertion-ordered dict, callables, namespace(), the loop object and
// Undefined), with Python's equality, ordering, str() and repr().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace ox::chat {

class Value;
class Dict;
class Interp;
struct Scope;
struct Stmt;
using ValueList = std::vector<Value>;

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kTuple,
  kIterator,  // what jinja2's lazy filters return (map, select, ...): iterable, always true, no len()
  kDict,
  kCallable,
  kNamespace,
  kLoop,
};

// Lists and dicts are immutable once built (the sandbox forbids append/update), so values
// share them freely. `depth` bounds nesting so recursive printing cannot overflow the stack.
struct ListData {
  ValueList items;
  uint32_t depth = 1;
};

// Mutable objects with identity: callables, namespaces, loop state.
struct Object {
  virtual ~Object() = default;
};

class Value {
 public:
  Value() = default;  // Undefined
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value real(double f);
  static Value string(std::string s);
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value iterator(ValueList items);
  static Value dict(Dict d);
  static Value object(Kind kind, std::shared_ptr<Object> obj);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_int() const { return kind_ == Kind::kInt || kind_ == Kind::kBool; }  // Python: bool is an int
  bool is_number() const { return is_int() || kind_ == Kind::kFloat; }
  bool is_sequence() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }

  bool get_bool() const { return n_.b; }
  int64_t get_int() const { return kind_ == Kind::kBool ? (n_.b ? 1 : 0) : n_.i; }
  double get_float() const { return kind_ == Kind::kFloat ? n_.f : static_cast<double>(get_int()); }
  // String contents; for Undefined the hint naming what was missing.
  const std::string& str() const;
  const ValueList& items() const;  // list, tuple or iterator
  std::shared_ptr<const ListData> list_data() const;
  const Dict& dict() const;
  template <typename T>
  T* as() const {
    return static_cast<T*>(const_cast<Object*>(static_cast<const Object*>(ptr_.get())));
  }
  const void* identity() const { return ptr_.get(); }
  std::shared_ptr<Object> object_ptr() const {
    return std::const_pointer_cast<Object>(std::static_pointer_cast<const Object>(ptr_));
  }
  uint32_t depth() const;

 private:
  Kind kind_ = Kind::kUndefined;
  union {
    bool b;
    int64_t i;
    double f;
  } n_{};
  // One payload, typed by kind_: std::string (kString, and kUndefined's hint), ListData,
  // Dict, or an Object subclass (kCallable, kNamespace, kLoop).
  std::shared_ptr<const void> ptr_;
};

// Python dict: keeps insertion order; keys hash like Python (1 == 1.0 == True).
class Dict {
 public:
  // Inserts or overwrites (keeping the first position); fails for unhashable keys.
  Status set(Value key, Value value);
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  uint32_t depth() const { return depth_; }

 private:
  std::vector<std::pair<Value, Value>> entries_;
  std::unordered_map<std::string, uint32_t> index_;  // hash key -> position in entries_
  uint32_t depth_ = 1;
};

struct CallArgs {
  ValueList args;
  std::vector<std::pair<std::string, Value>> kwargs;
};

using NativeFn = std::function<Result<Value>(Interp&, CallArgs&)>;

// A builtin function, a bound method, a macro or a call block's caller().
struct Callable : Object {
  std::string name;
  uint32_t depth = 0;            // nesting of the values the function captured (bound self)
  NativeFn fn;                   // set for builtins and bound methods
  const Stmt* macro = nullptr;   // set for macros and caller blocks
  std::weak_ptr<Scope> closure;  // scope the macro was defined in
};

// namespace(): the one mutable container, so loops can carry state out of their scope.
struct Namespace : Object {
  std::vector<std::pair<std::string, Value>> attrs;
  bool printing = false;  // set while str() descends into it, to print cycles as {...}
  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value v);
};

// The `loop` variable of a for loop.
struct LoopState : Object {
  std::shared_ptr<const ListData> items;  // never null while the loop runs
  int64_t index0 = 0;
  int64_t depth0 = 0;
  std::optional<Value> last_changed;
};

bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
// Python's ordering (<): numbers, strings, lists/tuples of the same kind; otherwise an error.
Result<int> compare(const Value& a, const Value& b);
// Python's hash identity for dict keys; nullopt when unhashable (list, dict, ...).
std::optional<std::string> hash_key(const Value& v);

// str(v) as Jinja prints it (Undefined prints as "").
std::string to_str(const Value& v);
std::string repr(const Value& v);
std::string repr_string(std::string_view s);
std::string float_repr(double f);
// Python type name for messages: 'str', 'int', 'NoneType', ...
const char* type_name(const Value& v);

}  // namespace ox::chat
