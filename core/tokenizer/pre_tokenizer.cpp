// Hand-written matchers for the pre-tokenizer regexes of each BPE family (see pre_tokenizer.h).
// Every matcher reproduces one regex's leftmost-first semantics inside one chunk: text between two
// matches stays a piece of its own, and lookaheads/$ see the chunk's end as the end of input.
// Character classes test the code point's Unicode class; non-ASCII White_Space counts as \s
// everywhere and as nothing else (llama.cpp maps it to \v before running std::regex).
#include "core/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "core/tokenizer/unicode.h"

namespace ox::tok {

namespace {

struct Ctx {
  const std::vector<uint32_t>& cps;
  const std::vector<uint16_t>& cls;
};

// Collects the pieces of one chunk: matches and the gaps between them.
class Emitter {
 public:
  explicit Emitter(std::vector<uint32_t>* ends) : ends_(ends) {}
  void start(uint32_t b) { last_ = b; }
  void match(uint32_t s, uint32_t t) {
    if (s > last_) ends_->push_back(s);
    ends_->push_back(t);
    last_ = t;
  }
  void finish(uint32_t e) {
    if (e > last_) ends_->push_back(e);
    last_ = e;
  }

 private:
  std::vector<uint32_t>* ends_;
  uint32_t last_ = 0;
};

constexpr uint16_t kWs = kCpWhitespace;

bool is_cr_or_lf(uint32_t cp) { return cp == '\r' || cp == '\n'; }
uint32_t ascii_lower(uint32_t cp) { return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp; }

// The value std::wregex sees for a code point: non-ASCII whitespace becomes \v.
uint32_t wide_value(const Ctx& c, uint32_t i) {
  const uint32_t cp = c.cps[i];
  return (cp > 0x7F && (c.cls[i] & kWs)) ? 0x0B : cp;
}

uint32_t run_end(uint32_t p, uint32_t e, uint32_t max_len, auto&& in_class) {
  uint32_t t = p;
  while (t < e && in_class(t) && (max_len == 0 || t - p < max_len)) ++t;
  return t;
}

// Contractions: 's 't 're 've 'm 'll 'd (case-insensitive when `fold`). Returns 0, 2 or 3.
uint32_t match_contraction(const Ctx& c, uint32_t p, uint32_t e, bool fold) {
  if (c.cps[p] != '\'' || p + 1 >= e) return 0;
  const auto at = [&](uint32_t i) { return fold ? ascii_lower(c.cps[i]) : c.cps[i]; };
  const uint32_t n1 = at(p + 1);
  if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') return 2;
  if (p + 2 >= e) return 0;
  const uint32_t n2 = at(p + 2);
  if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) return 3;
  return 0;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)  (then \s+, which only
// ever covers what the regex leaves as a one-character gap).
uint32_t match_gpt2(const Ctx& c, uint32_t p, uint32_t e) {
  if (uint32_t n = match_contraction(c, p, e, false)) return n;
  const bool space = c.cps[p] == ' ';
  const uint32_t q = space ? p + 1 : p;
  const uint16_t f = q < e ? c.cls[q] : 0;
  const auto ends_with = [&](uint16_t want) {
    return run_end(q, e, 0, [&](uint32_t i) { return (c.cls[i] & want) != 0; }) - p;
  };
  if (f & kCpLetter) return ends_with(kCpLetter);
  if (f & kCpNumber) return ends_with(kCpNumber);
  if (f != 0 && !(f & (kWs | kCpLetter | kCpNumber))) {
    return run_end(q, e, 0, [&](uint32_t i) { return !(c.cls[i] & (kWs | kCpLetter | kCpNumber)); }) - p;
  }
  const uint32_t w = run_end(p, e, 0, [&](uint32_t i) { return (c.cls[i] & kWs) != 0; }) - p;
  if (w == 0) return 0;
  if (p + w < e && w > 1) return w - 1;  // \s+(?!\S): leave the last space to the next word
  return w;
}

struct Llama3Params {
  uint32_t max_digits;  // \p{N}{1,3} or \p{N}
  bool marks_in_words;  // qwen35: [\p{L}\p{M}]+ words, and \p{M} is not "other"
};

// (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
uint32_t match_llama3(const Ctx& c, uint32_t p, uint32_t e, const Llama3Params& prm) {
  if (uint32_t n = match_contraction(c, p, e, true)) return n;
  const uint16_t word = kCpLetter | (prm.marks_in_words ? kCpMark : 0);
  const uint16_t not_other = kWs | kCpLetter | kCpNumber | (prm.marks_in_words ? kCpMark : 0);
  const uint32_t cp = c.cps[p];
  const uint16_t f = c.cls[p];
  const auto in_word = [&](uint32_t i) { return (c.cls[i] & word) != 0; };
  if (f & word) return run_end(p, e, 0, in_word) - p;
  if (!is_cr_or_lf(cp) && !(f & (kCpLetter | kCpNumber)) && p + 1 < e && in_word(p + 1)) {
    return run_end(p + 1, e, 0, in_word) - p;
  }
  if (f & kCpNumber) {
    return run_end(p, e, prm.max_digits, [&](uint32_t i) { return (c.cls[i] & kCpNumber) != 0; }) - p;
  }
  const auto is_other = [&](uint32_t i) { return !(c.cls[i] & not_other); };
  const uint32_t q = (cp == ' ' && p + 1 < e && is_other(p + 1)) ? p + 1 : p;
  if (is_other(q)) {
    uint32_t t = run_end(q, e, 0, is_other);
    t = run_end(t, e, 0, [&](uint32_t i) { return is_cr_or_lf(c.cps[i]); });
    return t - p;
  }
  uint32_t w = 0, last_cr_lf = 0;
  while (p + w < e && (c.cls[p + w] & kWs)) {
    if (is_cr_or_lf(c.cps[p + w])) last_cr_lf = w + 1;
    ++w;
  }
  if (last_cr_lf > 0) return last_cr_lf;  // \s*[\r\n]+
  if (w > 1 && p + w < e) return w - 1;   // \s+(?!\S)
  if (w > 0) return w;                    // \s+
  return 0;
}

template <typename Match>
void split_by_matcher(const Ctx& c, uint32_t b, uint32_t e, Emitter& em, Match&& match) {
  uint32_t p = b;
  while (p < e) {
    const uint32_t n = match(p, e);
    if (n > 0) {
      em.match(p, p + n);
      p += n;
    } else {
      ++p;
    }
  }
}

// \s?C+ (ws_prefix), C+ or C{1,max_len}: leftmost matches of a character class run.
template <typename InClass>
void split_runs(const Ctx& c, uint32_t b, uint32_t e, Emitter& em, bool ws_prefix, uint32_t max_len,
                InClass&& in_class) {
  uint32_t p = b;
  while (p < e) {
    uint32_t q = p;
    if (ws_prefix && (c.cls[p] & kWs) && p + 1 < e && in_class(p + 1)) {
      q = p + 1;
    } else if (!in_class(p)) {
      ++p;
      continue;
    }
    const uint32_t t = run_end(q, e, max_len, in_class);
    em.match(p, t);
    p = t;
  }
}

// Cased letters (Lu, Ll, Lt) as listed in DeepSeek-LLM's pre-tokenizer regex.
constexpr uint32_t kDeepseekLetters[][2] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377}, {0x37B, 0x37D},
    {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5},
    {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5},
    {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77},
    {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D},
    {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D},
    {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC},
    {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D},
    {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134},
    {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184},
    {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D},
    {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF},
    {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2},
    {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

template <size_t N>
bool in_ranges(const uint32_t (&ranges)[N][2], uint32_t v) {
  for (const auto& r : ranges) {
    if (v < r[0]) return false;  // sorted
    if (v <= r[1]) return true;
  }
  return false;
}

// [!-/:-~！-／：-～‘-‟　-。]
constexpr uint32_t kDeepseekPunct[][2] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};
// [一-龥ࠀ-一가-퟿] as sorted ranges.
constexpr uint32_t kDeepseekCjk[][2] = {{0x0800, 0x9FA5}, {0xAC00, 0xD7FF}};

// [^(\s|.,!?…。，、।۔،)]
bool bloom_class(const Ctx& c, uint32_t i) {
  if (c.cls[i] & kWs) return false;
  switch (c.cps[i]) {
    case '(': case ')': case '|': case '.': case ',': case '!': case '?':
    case 0x2026: case 0x3002: case 0xFF0C: case 0x3001: case 0x0964: case 0x06D4: case 0x060C:
      return false;
    default:
      return true;
  }
}

enum class Stage {
  kGpt2, kLlama3, kQwen2, kQwen35,
  kPunctRun, kPunctRunBacktick,   // [\p{P}\$\+<=>\^~\|]+ and the same with `
  kThreeDigits,                   // [0-9][0-9][0-9]
  kNumberEach, kNumberRun,        // \p{N} and \p{N}+
  kCrLfEach,                      // [\r\n]
  kSpaceLetters, kSpacePunct,     // \s?\p{L}+ and \s?\p{P}+
  kDeepseekLetters, kDeepseekPunct, kTrailingSpace, kDeepseekCjk,
  kBloom,                         //  ?[^(\s|.,!?…。，、।۔،)]+
  kNewlineRuns,                   // [^\n]+|[\n]+
};

void run_stage(Stage s, const Ctx& c, uint32_t b, uint32_t e, Emitter& em) {
  em.start(b);
  const auto has = [&](uint16_t bits) { return [&c, bits](uint32_t i) { return (c.cls[i] & bits) != 0; }; };
  switch (s) {
    case Stage::kGpt2:
      split_by_matcher(c, b, e, em, [&](uint32_t p, uint32_t end) { return match_gpt2(c, p, end); });
      break;
    case Stage::kLlama3: case Stage::kQwen2: case Stage::kQwen35: {
      const Llama3Params prm{s == Stage::kLlama3 ? 3u : 1u, s == Stage::kQwen35};
      split_by_matcher(c, b, e, em, [&](uint32_t p, uint32_t end) { return match_llama3(c, p, end, prm); });
      break;
    }
    case Stage::kPunctRun: case Stage::kPunctRunBacktick: {
      const bool backtick = s == Stage::kPunctRunBacktick;
      split_runs(c, b, e, em, false, 0, [&](uint32_t i) {
        const uint32_t cp = c.cps[i];
        return (c.cls[i] & kCpPunctuation) || cp == '$' || cp == '+' || cp == '<' || cp == '=' ||
               cp == '>' || cp == '^' || cp == '~' || cp == '|' || (backtick && cp == '`');
      });
      break;
    }
    case Stage::kThreeDigits: {
      const auto digit = [&](uint32_t i) { return i < e && c.cps[i] >= '0' && c.cps[i] <= '9'; };
      split_by_matcher(c, b, e, em, [&](uint32_t p, uint32_t) {
        return (digit(p) && digit(p + 1) && digit(p + 2)) ? 3u : 0u;
      });
      break;
    }
    case Stage::kNumberEach: split_runs(c, b, e, em, false, 1, has(kCpNumber)); break;
    case Stage::kNumberRun: split_runs(c, b, e, em, false, 0, has(kCpNumber)); break;
    case Stage::kCrLfEach:
      split_runs(c, b, e, em, false, 1, [&](uint32_t i) { return is_cr_or_lf(c.cps[i]); });
      break;
    case Stage::kSpaceLetters: split_runs(c, b, e, em, true, 0, has(kCpLetter)); break;
    case Stage::kSpacePunct: split_runs(c, b, e, em, true, 0, has(kCpPunctuation)); break;
    case Stage::kDeepseekLetters:
      split_runs(c, b, e, em, true, 0, [&](uint32_t i) { return in_ranges(kDeepseekLetters, wide_value(c, i)); });
      break;
    case Stage::kDeepseekPunct:
      split_runs(c, b, e, em, true, 0, [&](uint32_t i) { return in_ranges(kDeepseekPunct, wide_value(c, i)); });
      break;
    case Stage::kDeepseekCjk:
      split_runs(c, b, e, em, false, 0, [&](uint32_t i) { return in_ranges(kDeepseekCjk, wide_value(c, i)); });
      break;
    case Stage::kTrailingSpace: {
      uint32_t t = e;
      while (t > b && (c.cls[t - 1] & kWs)) --t;
      if (t < e) em.match(t, e);
      break;
    }
    case Stage::kBloom:
      split_by_matcher(c, b, e, em, [&](uint32_t p, uint32_t end) -> uint32_t {
        const uint32_t q = (c.cps[p] == ' ' && p + 1 < end && bloom_class(c, p + 1)) ? p + 1 : p;
        if (!bloom_class(c, q)) return 0;
        return run_end(q, end, 0, [&](uint32_t i) { return bloom_class(c, i); }) - p;
      });
      break;
    case Stage::kNewlineRuns:
      split_by_matcher(c, b, e, em, [&](uint32_t p, uint32_t end) {
        const bool nl = c.cps[p] == '\n';
        return run_end(p, end, 0, [&](uint32_t i) { return (c.cps[i] == '\n') == nl; }) - p;
      });
      break;
  }
  em.finish(e);
}

std::vector<Stage> stages_for(PreType pre) {
  switch (pre) {
    case PreType::kNone: return {};
    case PreType::kDefault:
      return {Stage::kPunctRun, Stage::kGpt2, Stage::kNumberRun, Stage::kThreeDigits};
    case PreType::kGpt2: return {Stage::kGpt2};
    case PreType::kLlama3: return {Stage::kLlama3};
    case PreType::kQwen2: return {Stage::kQwen2};
    case PreType::kQwen35: return {Stage::kQwen35};
    case PreType::kDeepseekLlm:
      return {Stage::kCrLfEach, Stage::kDeepseekLetters, Stage::kDeepseekPunct, Stage::kTrailingSpace,
              Stage::kDeepseekCjk, Stage::kNumberRun};
    case PreType::kDeepseekCoder:
      return {Stage::kCrLfEach, Stage::kSpaceLetters, Stage::kSpacePunct, Stage::kDeepseekCjk, Stage::kNumberEach};
    case PreType::kFalcon: return {Stage::kPunctRunBacktick, Stage::kGpt2, Stage::kThreeDigits};
    case PreType::kStarcoder: return {Stage::kNumberEach, Stage::kGpt2};
    case PreType::kBloom: return {Stage::kBloom};
    case PreType::kViking: return {Stage::kBloom, Stage::kNumberEach};
    case PreType::kGemma4: return {Stage::kNewlineRuns};
  }
  return {};
}

}  // namespace

void pre_tokenize(PreType pre, std::string_view text, PreTokenized* out) {
  out->text.clear();
  out->ends.clear();
  if (text.empty()) return;
  std::vector<uint32_t> cps;
  decode_utf8(text, cps);
  std::vector<uint16_t> cls(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) cls[i] = cp_class(cps[i]);
  const Ctx ctx{cps, cls};

  // Chunk boundaries in code points; each stage re-splits every chunk of the previous one.
  std::vector<uint32_t> ends{static_cast<uint32_t>(cps.size())};
  std::vector<uint32_t> next;
  for (Stage s : stages_for(pre)) {
    next.clear();
    next.reserve(ends.size() * 2);
    Emitter em(&next);
    uint32_t b = 0;
    for (uint32_t e : ends) {
      run_stage(s, ctx, b, e, em);
      b = e;
    }
    ends.swap(next);
  }

  out->text.reserve(text.size() + 16);
  out->ends.reserve(ends.size());
  uint32_t b = 0;
  for (uint32_t e : ends) {
    for (uint32_t i = b; i < e; ++i) append_utf8(out->text, cps[i]);
    out->ends.push_back(static_cast<uint32_t>(out->text.size()));
    b = e;
  }
}

}  // namespace ox::tok
