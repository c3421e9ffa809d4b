// Lookups over the generated Unicode tables, lenient UTF-8 decoding and the GPT-2 byte alphabet.
#include "core/tokenizer/unicode.h"

#include <algorithm>
#include <array>

namespace ox::tok {

namespace tables {
extern const uint32_t kCategoryRunStarts[];
extern const uint32_t kCategoryRunStarts_count;
extern const uint8_t kCategoryRunValues[];
extern const uint32_t kLowercasePairs[];
extern const uint32_t kLowercasePairs_count;
extern const uint32_t kNfdFirstRuns[];
extern const uint32_t kNfdFirstRuns_count;
}  // namespace tables

namespace {

constexpr uint8_t kWhitespaceBit = 0x80;  // set in the generated run values
constexpr uint32_t kBmpSize = 0x10000;

uint16_t class_of_category(GeneralCategory c) {
  switch (c) {
    case GeneralCategory::Cn: return kCpUndefined;
    case GeneralCategory::Lu: case GeneralCategory::Ll: case GeneralCategory::Lt:
    case GeneralCategory::Lm: case GeneralCategory::Lo: return kCpLetter;
    case GeneralCategory::Mn: case GeneralCategory::Mc: case GeneralCategory::Me: return kCpMark;
    case GeneralCategory::Nd: case GeneralCategory::Nl: case GeneralCategory::No: return kCpNumber;
    case GeneralCategory::Pc: case GeneralCategory::Pd: case GeneralCategory::Ps: case GeneralCategory::Pe:
    case GeneralCategory::Pi: case GeneralCategory::Pf: case GeneralCategory::Po: return kCpPunctuation;
    case GeneralCategory::Sm: case GeneralCategory::Sc: case GeneralCategory::Sk:
    case GeneralCategory::So: return kCpSymbol;
    case GeneralCategory::Zs: case GeneralCategory::Zl: case GeneralCategory::Zp: return kCpSeparator;
    case GeneralCategory::Cc: case GeneralCategory::Cf: case GeneralCategory::Cs:
    case GeneralCategory::Co: return kCpControl;
  }
  return kCpUndefined;
}

// Raw run value (category | whitespace bit) by binary search over the run starts.
uint8_t run_value(uint32_t cp) {
  const uint32_t* begin = tables::kCategoryRunStarts;
  const uint32_t* end = begin + tables::kCategoryRunStarts_count;
  const uint32_t* it = std::upper_bound(begin, end, cp);
  return tables::kCategoryRunValues[(it - begin) - 1];
}

// The BMP is looked up through a flat table (64 KiB) built once: tokenizing CJK text would
// otherwise binary-search for every character.
struct BmpTable {
  std::array<uint16_t, kBmpSize> cls{};
  std::array<uint8_t, kBmpSize> cat{};
  BmpTable() {
    for (uint32_t cp = 0; cp < kBmpSize; ++cp) {
      const uint8_t v = run_value(cp);
      cat[cp] = v & 0x7F;
      cls[cp] = class_of_category(static_cast<GeneralCategory>(v & 0x7F)) |
                ((v & kWhitespaceBit) ? kCpWhitespace : 0);
    }
  }
};

const BmpTable& bmp_table() {
  static const BmpTable table;
  return table;
}

// GPT-2's printable alphabet: bytes that are printable Latin-1 map to themselves, the other 68
// bytes map to U+0100 onwards in byte order.
struct Gpt2Alphabet {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 0x200> to_byte{};  // every alphabet code point is below U+0144
  Gpt2Alphabet() {
    to_byte.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_cp[b] = printable ? b : next++;
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Gpt2Alphabet& gpt2_alphabet() {
  static const Gpt2Alphabet alphabet;
  return alphabet;
}

}  // namespace

GeneralCategory general_category(uint32_t cp) {
  if (cp < kBmpSize) return static_cast<GeneralCategory>(bmp_table().cat[cp]);
  if (cp > kMaxCodePoint) return GeneralCategory::Cn;
  return static_cast<GeneralCategory>(run_value(cp) & 0x7F);
}

uint16_t cp_class(uint32_t cp) {
  if (cp < kBmpSize) return bmp_table().cls[cp];
  if (cp > kMaxCodePoint) return kCpUndefined;
  const uint8_t v = run_value(cp);
  return class_of_category(static_cast<GeneralCategory>(v & 0x7F)) |
         ((v & kWhitespaceBit) ? kCpWhitespace : 0);
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  // Pairs are stored flat (cp, lower, cp, lower, ...) sorted by cp.
  uint32_t lo = 0, hi = tables::kLowercasePairs_count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const uint32_t key = tables::kLowercasePairs[2 * mid];
    if (key == cp) return tables::kLowercasePairs[2 * mid + 1];
    if (key < cp) lo = mid + 1; else hi = mid;
  }
  return cp;
}

uint32_t nfd_first(uint32_t cp) {
  if (cp < 0xC0) return cp;  // nothing below U+00C0 decomposes canonically
  // Triples (first, last, value) sorted by first; find the last run starting at or before cp.
  uint32_t lo = 0, hi = tables::kNfdFirstRuns_count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (tables::kNfdFirstRuns[3 * mid] <= cp) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return cp;
  const uint32_t* run = &tables::kNfdFirstRuns[3 * (lo - 1)];
  return cp <= run[1] ? run[2] : cp;
}

void decode_utf8(std::string_view s, std::vector<uint32_t>& out) {
  out.clear();
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) out.push_back(decode_utf8_at(s, pos));
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t b0 = static_cast<uint8_t>(s[i]);
    if (b0 < 0x80) { ++i; continue; }
    uint32_t len = 0, cp = 0, min = 0;
    if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
    else return false;
    if (i + len > s.size()) return false;
    for (uint32_t k = 1; k < len; ++k) {
      const uint8_t b = static_cast<uint8_t>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

uint32_t byte_to_gpt2_cp(uint8_t b) { return gpt2_alphabet().to_cp[b]; }

int32_t gpt2_cp_to_byte(uint32_t cp) {
  if (cp >= gpt2_alphabet().to_byte.size()) return -1;
  return gpt2_alphabet().to_byte[cp];
}

}  // namespace ox::tok
