#include "core/gguf/kv_override.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace ox::gguf {

Result<KvOverride> parse_kv_override(std::string_view text, std::string_view flag) {
  const std::string quoted = strfmt("%.*s '%.*s'", static_cast<int>(flag.size()), flag.data(),
                                    static_cast<int>(text.size()), text.data());
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return error(ErrorCode::kInvalidArgument, quoted + ": expected KEY=TYPE:VALUE (TYPE: int, float, bool or str)");
  }
  if (eq >= 128) return error(ErrorCode::kInvalidArgument, quoted + ": the key is longer than 127 bytes");
  KvOverride o;
  o.key.assign(text.substr(0, eq));
  const std::string_view rest = text.substr(eq + 1);
  const size_t colon = rest.find(':');
  const std::string_view type = rest.substr(0, colon);
  const std::string_view value = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  if (colon == std::string_view::npos || (type != "int" && type != "float" && type != "bool" && type != "str")) {
    return error(ErrorCode::kInvalidArgument, quoted + ": the type must be int:, float:, bool: or str:");
  }
  if (type == "int") {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v > UINT32_MAX) {
      return error(ErrorCode::kInvalidArgument,
                   quoted + ": int: takes a whole number in 0..4294967295 (llama.cpp stores it as a u32)");
    }
    o.value = encode_u32(static_cast<uint32_t>(v));
  } else if (type == "float") {
    const std::string s(value);
    char* end = nullptr;
    const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(static_cast<float>(v))) {
      return error(ErrorCode::kInvalidArgument, quoted + ": float: takes a finite number");
    }
    o.value = encode_f32(static_cast<float>(v));
  } else if (type == "bool") {
    if (value != "true" && value != "false") {
      return error(ErrorCode::kInvalidArgument, quoted + ": bool: takes true or false");
    }
    o.value = encode_bool(value == "true");
  } else {
    if (value.size() > 127) return error(ErrorCode::kInvalidArgument, quoted + ": str: takes at most 127 bytes");
    o.value = encode_string(value);
  }
  return o;
}

}  // namespace ox::gguf
