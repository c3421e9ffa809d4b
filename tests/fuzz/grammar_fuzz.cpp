// libFuzzer target: GBNF text and token bytes. The input is split at the first 0xFF byte: before it
// a grammar (parse_grammar must return a grammar or an error, never crash or hang), after it bytes
// cut into tokens of 1-4 bytes (a small vocabulary); for grammars that parse, a constraint walks
// the tokens (12 steps): masks computed and equal to is_allowed() (the end-of-generation token's too),
// the first allowed token of each step accepted, and a token the mask refuses must be refused by
// accept() too. Inputs starting with '{' also go through json_schema_to_gbnf, whose grammar must parse.
#include <string>
#include <string_view>
#include <vector>

#include "core/sampler/grammar_constraint.h"
#include "core/sampler/grammar_parser.h"
#include "core/sampler/json_schema.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

std::shared_ptr<const TokenTrie> vocab_from(std::string_view bytes) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < bytes.size() && pieces.size() < 64;) {
    const size_t len = 1 + static_cast<uint8_t>(bytes[i]) % 4;
    pieces.push_back(std::string(bytes.substr(i, len)));
    i += len;
  }
  pieces.push_back("</s>");
  return TokenTrie::build(pieces, std::vector<int32_t>{static_cast<int32_t>(pieces.size() - 1)});
}

void walk(Grammar grammar, std::string_view token_bytes) {
  auto trie = vocab_from(token_bytes);
  const int32_t eog = trie->n_vocab() - 1;
  auto made = GrammarConstraint::create(std::move(grammar), trie, std::vector<int32_t>{eog});
  if (!made.ok()) return;
  GrammarConstraint& c = **made;
  for (int step = 0; step < 12; ++step) {
    int n_refusals_checked = 0;
    const std::vector<uint8_t> mask = c.allowed_tokens();
    int32_t pick = -1;
    for (int32_t id = 0; id < eog; ++id) {
      OX_CHECK((mask[id] != 0) == c.is_allowed(id));
      if (mask[id] && pick < 0 && id >= step % (eog + 1)) pick = id;
      if (!mask[id] && n_refusals_checked++ < 4) OX_CHECK(!c.accept(id).is_ok());  // the state must not move
    }
    // The end-of-generation token is allowed where the grammar can end, and also where the grammar
    // names it (<[id]>) at the top of a stack.
    OX_CHECK((mask[eog] != 0) == c.is_allowed(eog));
    OX_CHECK(!c.can_end() || mask[eog] != 0);
    if (pick < 0) break;
    OX_CHECK(c.accept(pick).is_ok());
  }
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\xFF');
  const std::string_view text = input.substr(0, cut);
  const std::string_view tokens = cut == std::string_view::npos ? std::string_view("ab\x01" "c{}\x02\"x") : input.substr(cut + 1);
  if (!text.empty() && text[0] == '{') {
    Result<std::string> gbnf = json_schema_to_gbnf(text);
    if (gbnf.ok()) {
      Result<Grammar> g = parse_grammar(*gbnf);
      OX_CHECK(g.ok());  // the converter's grammars always parse
      walk(std::move(g).value(), tokens);
    }
    return 0;
  }
  Result<Grammar> g = parse_grammar(text);
  if (g.ok()) walk(std::move(g).value(), tokens);
  return 0;
}
