// Pre-tokenization for BPE vocabularies: splits text into the pieces BPE merges within, by the
// regex list of the vocab's family, without std::regex. Each regex is a hand-written matcher over
// code points with Unicode categories (unicode.h), applied in turn inside the pieces of the previous
// one, reproducing leftmost-first regex matching as llama.cpp's splitter does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace ox::tok {

struct PreTokenized {
  // The pieces back to back as UTF-8. Equal to the input except that bytes that are not valid
  // UTF-8 became U+FFFD (the splitter works on code points, as llama.cpp's does).
  std::string text;
  std::vector<uint32_t> ends;  // end offset of each piece in `text`; pieces are non-empty
};

// Splits `text` with the regex list of `pre` (PreType::kNone: one piece).
void pre_tokenize(PreType pre, std::string_view text, PreTokenized* out);

}  // namespace ox::tok
