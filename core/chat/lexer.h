// Template lexer: splits Jinja source into text and tag tokens with Hugging Face's settings
// (trim_blocks, lstrip_blocks, `-`/`+` whitespace control, one trailing newline dropped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ox::chat {

enum class Tok : uint8_t {
  kData,        // literal text between tags
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // text holds the decoded value
  kInt,
  kFloat,
  kOp,          // text holds the operator
  kEof,
};

struct Token {
  Tok type = Tok::kEof;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0.0;
  uint32_t line = 1;
  uint32_t col = 1;
};

// Errors name the line and column: "line 3, column 7: unexpected char '$'".
Result<std::vector<Token>> tokenize(std::string_view source);

const char* token_description(Tok type);

}  // namespace ox::chat
