// Strings and token arrays from JS, copied into wasm memory only after their size is checked
// against memory_budget(): embind's own std::string conversion mallocs without looking (a null
// from a failed malloc becomes a write at address 0) and a std::vector that cannot grow aborts.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ox::web {

// A JS string as UTF-8; kInvalidArgument naming `what` for anything else, kTooLarge with the bytes
// when it (at most 3 UTF-8 bytes per UTF-16 unit) and embind's staging copy do not both fit.
Result<std::string> string_from_js(const emscripten::val& v, std::string_view what);

// A JSON text from JS (chat messages, tool definitions) to be parsed and rendered: string_from_js,
// and kTooLarge unless kJsonWorkingBytesPerByte times its bytes fit too. nlohmann-json's tree of a
// text of many small values takes up to ~12 bytes per byte of it (a 32-byte node per number or
// short string, a map entry per key), and a rendered prompt is about as long again: 16 bounds both.
constexpr uint64_t kJsonWorkingBytesPerByte = 16;
Result<std::string> json_from_js(const emscripten::val& v, std::string_view what);

// An Int32Array or array of numbers as token ids (undefined / null: none); kInvalidArgument for a
// value without an integer length, kTooLarge when its ids do not fit in memory.
Result<std::vector<int32_t>> tokens_from_js(const emscripten::val& v, std::string_view what);

}  // namespace ox::web
