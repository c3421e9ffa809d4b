// UTF-8 helpers for the template engine: Python strings count code points, not bytes, so
// len(), indexing, slicing and the case/space predicates of str need these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/utf8.h"

namespace ox::chat::utf8 {

// ox::decode_utf8_at / append_utf8 (core/base/utf8.h) in this layer's pointer style: malformed
// bytes decode as U+FFFD one byte at a time, so every input makes progress.
inline uint32_t decode(std::string_view s, size_t* pos) { return decode_utf8_at(s, *pos); }
inline void append(std::string* out, uint32_t cp) { append_utf8(*out, cp); }

// Number of code points.
uint64_t length(std::string_view s);
// Byte offsets of every code point start, plus s.size() at the end (size = length + 1).
std::vector<uint32_t> offsets(std::string_view s);
// True when every byte is ASCII (then byte offsets are code point offsets).
bool is_ascii(std::string_view s);

// Python's str.isspace() set (also what re's \s and str.strip() use).
bool is_space(uint32_t cp);
// Approximations of Python's Unicode predicates: exact for ASCII, Latin, Greek, Cyrillic;
// other scripts' letters (CJK, ...) count as letters without case.
bool is_alpha(uint32_t cp);
bool is_digit(uint32_t cp);
bool is_word(uint32_t cp);  // re's \w: letters, digits, underscore
bool is_upper(uint32_t cp);
bool is_lower(uint32_t cp);
uint32_t to_upper(uint32_t cp);
uint32_t to_lower(uint32_t cp);

std::string upper(std::string_view s);
std::string lower(std::string_view s);

// Python str.strip/lstrip/rstrip: with chars == nullptr strips whitespace, else any code point
// found in *chars.
std::string_view strip(std::string_view s, const std::string_view* chars, bool left, bool right);

}  // namespace ox::chat::utf8
