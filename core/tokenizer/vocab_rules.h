// The per-family knowledge GGUF files do not carry: which tokenizer.ggml.pre names share which
// pre-tokenizer and flags, and which token texts are end-of-generation / FIM / strip-whitespace
// tokens (llama.cpp recognises these by text). Internal to core/tokenizer.
#pragma once

#include <string_view>

#include "core/tokenizer/vocab.h"

namespace ox::tok {

struct PreTypeRule {
  const char* name;
  PreType pre;
  bool clean_spaces = true;        // false: decode keeps " ?" " 's" ... as they are
  bool ignore_merges = false;      // a pre-token that is itself a token is emitted whole
  bool add_bos = false;
  bool escape_whitespaces = false; // ' ' -> U+2581 before BPE (SPM-style BPE)
  bool no_bos = false;             // the family has no BOS token
};

// Rule for a tokenizer.ggml.pre value ("" means the default), or nullptr if unsupported.
const PreTypeRule* find_pre_type_rule(std::string_view pre);

// After tokens, types and ids are loaded: detects EOT/EOM/FIM tokens by text, builds the
// end-of-generation set (forcing those tokens to CONTROL, as llama.cpp does), builds the
// special-token list and applies per-model strip attributes (phi-3 RSTRIP, <mask> LSTRIP).
void finish_special_tokens(std::string_view general_name, std::string_view architecture, Vocab* v);

}  // namespace ox::tok
