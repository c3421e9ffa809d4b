// string_from_js / tokens_from_js: JS values copied into wasm memory after a memory check.
#include "wasm/js_input.h"

#include <cmath>

#include "core/base/memory.h"

namespace ox::web {
namespace {

using emscripten::val;

// Below this many bytes the copy is not checked: mallinfo() walks the heap, a cost only a large
// input repays, and a small one fits wherever the engine could run at all.
constexpr uint64_t kCheckFrom = uint64_t{1} << 20;

Status check_copy(uint64_t bytes, std::string_view what, const char* unit, double count) {
  if (bytes < kCheckFrom) return Status::ok();
  return check_memory(bytes, strfmt("%.*s (%.0f %s)", static_cast<int>(what.size()), what.data(), count, unit),
                      "send less at once");
}

}  // namespace

Result<std::string> string_from_js(const val& v, std::string_view what) {
  if (!v.isString()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%.*s must be a string", static_cast<int>(what.size()), what.data()));
  }
  const double units = v["length"].as<double>();
  // embind's staging buffer (4 + bytes + 1) and the std::string built from it are alive together.
  OX_TRY(check_copy(2 * (3 * static_cast<uint64_t>(units) + 5), what, "characters", units));
  return v.as<std::string>();
}

Result<std::string> json_from_js(const val& v, std::string_view what) {
  OX_ASSIGN_OR_RETURN(std::string text, string_from_js(v, what));
  OX_TRY(check_copy(kJsonWorkingBytesPerByte * text.size(), what, "bytes of JSON to parse and render",
                    static_cast<double>(text.size())));
  return text;
}

Result<std::vector<int32_t>> tokens_from_js(const val& v, std::string_view what) {
  if (v.isUndefined() || v.isNull()) return std::vector<int32_t>{};
  const val length = v["length"];
  const double n = length.isNumber() ? length.as<double>() : NAN;
  if (!(n >= 0 && n == std::floor(n) && n <= 9007199254740991.0)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%.*s must be an Int32Array or an array of token ids", static_cast<int>(what.size()), what.data()));
  }
  OX_TRY(check_copy(static_cast<uint64_t>(n) * sizeof(int32_t), what, "token ids", n));
  return emscripten::convertJSArrayToNumberVector<int32_t>(v);
}

}  // namespace ox::web
