// UTF-8 decoding and encoding shared by the tokenizers and the template engine, with llama.cpp's
// lenient semantics so both layers treat malformed text the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ox {

// Decodes one code point at s[pos] (pos < s.size()) and advances pos. A byte that cannot start
// a sequence, or a sequence cut short / with a bad continuation byte, yields U+FFFD and consumes
// one byte, so every input makes progress. Overlong forms and surrogates are accepted as decoded;
// values past U+10FFFF become U+FFFD.
uint32_t decode_utf8_at(std::string_view s, size_t& pos);

// Appends the UTF-8 form of cp (values past U+10FFFF append U+FFFD).
void append_utf8(std::string& out, uint32_t cp);

// 0-9 only (std::isdigit depends on the locale).
inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace ox
