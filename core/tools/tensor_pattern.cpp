#include "core/tools/tensor_pattern.h"

#include <regex.h>

#include <algorithm>
#include <cctype>

namespace ox {

struct TensorPattern::Compiled {
  regex_t re;
  bool compiled = false;  // regcomp leaves nothing to free when it fails
  ~Compiled() {
    if (compiled) regfree(&re);
  }
};

namespace {

// ECMAScript escapes that POSIX regcomp reads as something else (glibc takes "\d" for a plain
// "d"), each with what to write instead.
const char* posix_spelling(char escaped) {
  switch (escaped) {
    case 'd': return "[0-9]";
    case 'D': return "[^0-9]";
    case 'w': return "[A-Za-z0-9_]";
    case 'W': return "[^A-Za-z0-9_]";
    case 's': return "[[:space:]]";
    case 'S': return "[^[:space:]]";
    case 'b':
    case 'B': return "an explicit separator such as \\.";
    default: return nullptr;
  }
}

Status check_portable(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '(' && pattern[i + 1] == '?') {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--tensor-type pattern '%.*s': '(?' groups (lookaround, non-capturing) are not supported; "
                          "patterns are POSIX extended regular expressions",
                          static_cast<int>(pattern.size()), pattern.data()));
    }
    if (pattern[i] != '\\') continue;
    if (const char* instead = posix_spelling(pattern[i + 1])) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--tensor-type pattern '%.*s': '\\%c' is not supported (patterns are POSIX extended "
                          "regular expressions); write %s",
                          static_cast<int>(pattern.size()), pattern.data(), pattern[i + 1], instead));
    }
    ++i;  // the escaped character is not an escape itself ("\\d" is a backslash and a d)
  }
  return Status::ok();
}

}  // namespace

std::pair<size_t, size_t> block_number_at(std::string_view name) {
  for (size_t at = name.find("blk."); at != std::string_view::npos; at = name.find("blk.", at + 1)) {
    size_t end = at + 4;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end > at + 4 && end - at - 4 <= 9 && end < name.size() && name[end] == '.') return {at + 4, end - at - 4};
  }
  return {std::string_view::npos, 0};
}

Result<TensorTypeOverride> parse_tensor_type_override(std::string_view text) {
  const size_t eq = text.find('=');
  const int n = static_cast<int>(text.size());
  if (eq == std::string_view::npos) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("--tensor-type '%.*s': expected PATTERN=TYPE (e.g. attn_q=q8_0)", n, text.data()));
  }
  if (eq == 0) return error(ErrorCode::kInvalidArgument, strfmt("--tensor-type '%.*s': the pattern is empty", n, text.data()));
  const std::string_view type_name = text.substr(eq + 1);
  if (type_name.empty()) {
    return error(ErrorCode::kInvalidArgument, strfmt("--tensor-type '%.*s': the type is missing", n, text.data()));
  }
  TensorTypeOverride o;
  if (!dtype_from_name(type_name, &o.type)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("--tensor-type '%.*s': '%.*s' is not a GGUF type name (q8_0, q6_k, f16, ...)", n, text.data(),
                        static_cast<int>(type_name.size()), type_name.data()));
  }
  o.pattern.assign(text.substr(0, eq));
  std::transform(o.pattern.begin(), o.pattern.end(), o.pattern.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  OX_TRY(TensorPattern::compile(o.pattern).status());
  return o;
}

Result<TensorPattern> TensorPattern::compile(std::string_view pattern) {
  OX_TRY(check_portable(pattern));
  const std::string text(pattern);  // regcomp wants a terminated string
  auto compiled = std::make_shared<Compiled>();
  const int rc = regcomp(&compiled->re, text.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char why[256];
    regerror(rc, &compiled->re, why, sizeof why);
    return error(ErrorCode::kInvalidArgument, strfmt("--tensor-type pattern '%s': %s", text.c_str(), why));
  }
  compiled->compiled = true;
  TensorPattern p;
  p.compiled_ = std::move(compiled);
  return p;
}

bool TensorPattern::matches(std::string_view name) const {
  const std::string text(name);
  return regexec(&compiled_->re, text.c_str(), 0, nullptr, 0) == 0;
}

}  // namespace ox
