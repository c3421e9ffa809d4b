// UTF-8 decoding and the small Unicode tables the template engine needs (case mapping for
// Latin, Greek, Cyrillic, Armenian and fullwidth Latin; Python's whitespace set).
#include "core/chat/unicode.h"

namespace ox::chat::utf8 {

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

uint64_t length(std::string_view s) {
  if (is_ascii(s)) return s.size();
  uint64_t n = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    decode(s, &pos);
    ++n;
  }
  return n;
}

std::vector<uint32_t> offsets(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size() + 1);
  size_t pos = 0;
  while (pos < s.size()) {
    out.push_back(static_cast<uint32_t>(pos));
    decode(s, &pos);
  }
  out.push_back(static_cast<uint32_t>(s.size()));
  return out;
}

bool is_space(uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

// Returns the lower-case partner of an upper-case letter, or 0 if cp is not upper case.
uint32_t lower_of(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0xC0) return 0;
  if (cp <= 0xDE) return cp == 0xD7 ? 0 : cp + 32;
  if (cp >= 0x100 && cp <= 0x137) return (cp % 2 == 0) ? cp + 1 : 0;
  if (cp >= 0x139 && cp <= 0x148) return (cp % 2 == 1) ? cp + 1 : 0;
  if (cp >= 0x14A && cp <= 0x177) return (cp % 2 == 0) ? cp + 1 : 0;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x179 && cp <= 0x17E) return (cp % 2 == 1) ? cp + 1 : 0;
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 63;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp >= 0x460 && cp <= 0x481) return (cp % 2 == 0) ? cp + 1 : 0;
  if (cp >= 0x48A && cp <= 0x4BF) return (cp % 2 == 0) ? cp + 1 : 0;
  if (cp >= 0x531 && cp <= 0x556) return cp + 48;
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp + 32;
  return 0;
}

// Returns the upper-case partner of a lower-case letter, or 0 if cp is not lower case.
uint32_t upper_of(uint32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp < 0xB5) return 0;
  if (cp == 0xB5) return 0x39C;
  if (cp >= 0xE0 && cp <= 0xFE) return cp == 0xF7 ? 0 : cp - 32;
  if (cp == 0xFF) return 0x178;
  if (cp >= 0x100 && cp <= 0x137) return (cp % 2 == 1) ? (cp == 0x131 ? 'I' : cp - 1) : 0;
  if (cp >= 0x139 && cp <= 0x148) return (cp % 2 == 0) ? cp - 1 : 0;
  if (cp >= 0x14A && cp <= 0x177) return (cp % 2 == 1) ? cp - 1 : 0;
  if (cp >= 0x179 && cp <= 0x17E) return (cp % 2 == 0) ? cp - 1 : 0;
  if (cp == 0x3AC) return 0x386;
  if (cp >= 0x3AD && cp <= 0x3AF) return cp - 37;
  if (cp == 0x3CC) return 0x38C;
  if (cp == 0x3CD || cp == 0x3CE) return cp - 63;
  if (cp == 0x3C2) return 0x3A3;  // final sigma
  if (cp >= 0x3B1 && cp <= 0x3C9) return cp - 32;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  if (cp >= 0x460 && cp <= 0x481) return (cp % 2 == 1) ? cp - 1 : 0;
  if (cp >= 0x48A && cp <= 0x4BF) return (cp % 2 == 1) ? cp - 1 : 0;
  if (cp >= 0x561 && cp <= 0x586) return cp - 48;
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 32;
  return 0;
}

}  // namespace

bool is_upper(uint32_t cp) { return lower_of(cp) != 0; }
bool is_lower(uint32_t cp) { return upper_of(cp) != 0 || cp == 0xDF; }

uint32_t to_upper(uint32_t cp) {
  const uint32_t u = upper_of(cp);
  return u != 0 ? u : cp;
}

uint32_t to_lower(uint32_t cp) {
  const uint32_t l = lower_of(cp);
  return l != 0 ? l : cp;
}

bool is_digit(uint32_t cp) { return (cp >= '0' && cp <= '9') || (cp >= 0xFF10 && cp <= 0xFF19); }

bool is_alpha(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  if (is_upper(cp) || is_lower(cp)) return true;
  if (cp < 0xC0) return cp == 0xAA || cp == 0xBA;
  if (cp == 0xD7 || cp == 0xF7) return false;
  if (is_space(cp)) return false;
  // Punctuation, symbols, arrows, box drawing, CJK punctuation, private use, variation
  // selectors, specials, emoji and pictographs are not letters.
  if (cp >= 0x2000 && cp <= 0x2BFF) return false;
  if (cp >= 0x3000 && cp <= 0x303F) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;
  if (cp >= 0xFE00 && cp <= 0xFE0F) return false;
  if (cp >= 0xFF00 && cp <= 0xFF20) return false;
  if (cp >= 0xFFF0 && cp <= 0xFFFF) return false;
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;
  if (cp >= 0xE0000) return false;
  return true;
}

bool is_word(uint32_t cp) { return cp == '_' || is_digit(cp) || is_alpha(cp); }

namespace {

template <typename Map>
std::string map_case(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    const auto b = static_cast<uint8_t>(s[pos]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(map(b)));
      ++pos;
      continue;
    }
    const size_t start = pos;
    const uint32_t cp = decode(s, &pos);
    const uint32_t mapped = map(cp);
    if (mapped == cp) {
      out.append(s.substr(start, pos - start));  // keeps malformed bytes as they were
    } else {
      append(&out, mapped);
    }
  }
  return out;
}

bool in_chars(uint32_t cp, std::string_view chars) {
  size_t pos = 0;
  while (pos < chars.size()) {
    if (decode(chars, &pos) == cp) return true;
  }
  return false;
}

}  // namespace

std::string upper(std::string_view s) { return map_case(s, to_upper); }
std::string lower(std::string_view s) { return map_case(s, to_lower); }

std::string_view strip(std::string_view s, const std::string_view* chars, bool left, bool right) {
  auto drop = [&](uint32_t cp) { return chars == nullptr ? is_space(cp) : in_chars(cp, *chars); };
  size_t begin = 0;
  if (left) {
    while (begin < s.size()) {
      size_t next = begin;
      if (!drop(decode(s, &next))) break;
      begin = next;
    }
  }
  size_t end = s.size();
  if (right) {
    while (end > begin) {
      size_t start = end - 1;  // back up to the lead byte of the last code point
      while (start > begin && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) --start;
      size_t probe = start;
      if (!drop(decode(s, &probe))) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

}  // namespace ox::chat::utf8
