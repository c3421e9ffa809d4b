// LoadedModel's structured-output constraints: the vocabulary's token trie (every token's bytes;
// control tokens kept out of text matching but reachable by grammar token references), and GBNF
// grammars (also lazy ones) or JSON schemas compiled against it.
#include "core/sampler/grammar_constraint.h"
#include "core/sampler/json_schema.h"
#include "core/session/session.h"

namespace ox {

std::shared_ptr<const TokenTrie> LoadedModel::token_trie() const {
  std::call_once(trie_once_, [this] {
    const tok::Tokenizer& t = *tokenizer_;
    std::vector<std::string> pieces(static_cast<size_t>(t.n_vocab()));
    std::vector<int32_t> control;
    for (int32_t id = 0; id < t.n_vocab(); ++id) {
      Result<std::string> piece = t.token_to_piece(id, /*render_special=*/true);
      if (piece.ok()) pieces[static_cast<size_t>(id)] = std::move(piece).value();
      if (t.is_control(id)) control.push_back(id);
    }
    trie_ = TokenTrie::build(std::move(pieces), control);
  });
  return trie_;
}

namespace {

std::vector<int32_t> eog_ids(const tok::Tokenizer& t) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < t.n_vocab(); ++id) {
    if (t.is_eog(id)) ids.push_back(id);
  }
  return ids;
}

}  // namespace

Result<std::shared_ptr<TokenConstraint>> LoadedModel::grammar_constraint(std::string_view gbnf) const {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<TokenConstraint> c, make_grammar_constraint(gbnf, token_trie(), eog_ids(*tokenizer_)));
  return std::shared_ptr<TokenConstraint>(std::move(c));
}

Result<std::shared_ptr<TokenConstraint>> LoadedModel::lazy_grammar_constraint(std::string_view gbnf,
                                                                              std::vector<GrammarTrigger> triggers) const {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<LazyGrammarConstraint> c,
                      LazyGrammarConstraint::create(gbnf, std::move(triggers), token_trie(), eog_ids(*tokenizer_)));
  return std::shared_ptr<TokenConstraint>(std::move(c));
}

Result<std::shared_ptr<TokenConstraint>> LoadedModel::json_schema_constraint(std::string_view schema_json) const {
  std::string gbnf;
  if (schema_json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    gbnf = json_object_gbnf();
  } else {
    OX_ASSIGN_OR_RETURN(gbnf, json_schema_to_gbnf(schema_json));
  }
  return grammar_constraint(gbnf);
}

}  // namespace ox
