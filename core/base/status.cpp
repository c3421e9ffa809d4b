// Status helpers: error code names and printf-style formatting.
#include "core/base/status.h"

#include <cstdarg>

namespace ox {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInvalidFile: return "invalid_file";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kOutOfRange: return "out_of_range";
    case ErrorCode::kTooLarge: return "too_large";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kAborted: return "aborted";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string strfmt(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(static_cast<size_t>(n));
    std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  }
  va_end(args);
  return out;
}

}  // namespace ox
