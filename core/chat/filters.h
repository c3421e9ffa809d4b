// Filter implementations shared between filters.cpp (text and numbers) and filters_seq.cpp
// (sequences); the dispatch table lives in filters.cpp.
#pragma once

#include <string_view>

#include "core/chat/builtins.h"

namespace ox::chat::filters {

using FilterFn = Result<Value> (*)(Interp& in, const Value& v, CallArgs& a);

// Sequence filters (filters_seq.cpp).
Result<Value> batch(Interp& in, const Value& v, CallArgs& a);
Result<Value> dictsort(Interp& in, const Value& v, CallArgs& a);
Result<Value> first(Interp& in, const Value& v, CallArgs& a);
Result<Value> last(Interp& in, const Value& v, CallArgs& a);
Result<Value> items(Interp& in, const Value& v, CallArgs& a);
Result<Value> join(Interp& in, const Value& v, CallArgs& a);
Result<Value> list(Interp& in, const Value& v, CallArgs& a);
Result<Value> map(Interp& in, const Value& v, CallArgs& a);
Result<Value> max(Interp& in, const Value& v, CallArgs& a);
Result<Value> min(Interp& in, const Value& v, CallArgs& a);
Result<Value> reject(Interp& in, const Value& v, CallArgs& a);
Result<Value> rejectattr(Interp& in, const Value& v, CallArgs& a);
Result<Value> reverse(Interp& in, const Value& v, CallArgs& a);
Result<Value> select(Interp& in, const Value& v, CallArgs& a);
Result<Value> selectattr(Interp& in, const Value& v, CallArgs& a);
Result<Value> slice(Interp& in, const Value& v, CallArgs& a);
Result<Value> sort(Interp& in, const Value& v, CallArgs& a);
Result<Value> sum(Interp& in, const Value& v, CallArgs& a);
Result<Value> unique(Interp& in, const Value& v, CallArgs& a);

}  // namespace ox::chat::filters
