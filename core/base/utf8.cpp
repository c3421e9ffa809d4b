// UTF-8 decoding and encoding (see utf8.h).
#include "core/base/utf8.h"

namespace ox {

uint32_t decode_utf8_at(std::string_view s, size_t& pos) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(pos);
  if (b0 < 0x80) { pos += 1; return b0; }
  const auto cont = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  uint32_t cp = 0xFFFD;
  size_t len = 1;
  if ((b0 & 0xE0) == 0xC0) {
    if (cont(pos + 1)) { cp = ((b0 & 0x1Fu) << 6) | (byte(pos + 1) & 0x3Fu); len = 2; }
  } else if ((b0 & 0xF0) == 0xE0) {
    if (cont(pos + 1) && cont(pos + 2)) {
      cp = ((b0 & 0x0Fu) << 12) | ((byte(pos + 1) & 0x3Fu) << 6) | (byte(pos + 2) & 0x3Fu);
      len = 3;
    }
  } else if ((b0 & 0xF8) == 0xF0) {
    if (cont(pos + 1) && cont(pos + 2) && cont(pos + 3)) {
      const uint32_t v = ((b0 & 0x07u) << 18) | ((byte(pos + 1) & 0x3Fu) << 12) |
                         ((byte(pos + 2) & 0x3Fu) << 6) | (byte(pos + 3) & 0x3Fu);
      // Past U+10FFFF there is no UTF-8 to re-encode it as: treat the lead byte as invalid.
      if (v <= 0x10FFFF) { cp = v; len = 4; }
    }
  }
  pos += len;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0x10FFFF) {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    append_utf8(out, 0xFFFD);
  }
}

}  // namespace ox
