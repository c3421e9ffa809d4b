// A vocabulary's token pieces as a byte trie, built once and shared by every grammar constraint
// on that vocabulary: masking walks it with the grammar state, so tokens sharing a prefix share
// the work of matching it. Nodes are stored in pre-order with a skip index, so a rejected prefix
// skips its whole subtree with one assignment.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ox {

class TokenTrie {
 public:
  struct Node {
    uint32_t subtree_end;  // index one past this node's last descendant
    uint32_t depth;        // bytes from the root: the node at depth d is the d-th byte of its pieces
    uint32_t token_begin;  // tokens whose piece ends here: token_ids()[token_begin, +n_tokens)
    uint32_t n_tokens;
    uint8_t byte;
  };

  // pieces[id] is the text token id stands for. Control tokens (and empty pieces, and pieces
  // starting with a NUL byte, as llama.cpp) are kept out of the trie: only token references in
  // a grammar (<[id]>, <|name|>, !<[id]>) can allow them.
  static std::shared_ptr<const TokenTrie> build(std::vector<std::string> pieces,
                                                std::span<const int32_t> control_ids = {});

  int32_t n_vocab() const { return static_cast<int32_t>(pieces_.size()); }
  const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
  bool in_trie(int32_t id) const { return in_trie_[static_cast<size_t>(id)] != 0; }
  bool is_control(int32_t id) const { return control_[static_cast<size_t>(id)] != 0; }
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const int32_t> token_ids() const { return token_ids_; }
  // The token whose piece is exactly `text` (control tokens first), for <|name|> references.
  std::optional<int32_t> find(std::string_view text) const;

 private:
  std::vector<std::string> pieces_;
  std::vector<uint8_t> in_trie_, control_;
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;  // trie tokens sorted by piece
};

}  // namespace ox
