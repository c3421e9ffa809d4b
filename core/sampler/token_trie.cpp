// TokenTrie construction: sort the pieces, then one pass adds each piece's bytes beyond its common
// prefix with the previous one; a node's subtree ends when a later piece no longer shares it.
#include "core/sampler/token_trie.h"

#include <algorithm>

namespace ox {

std::shared_ptr<const TokenTrie> TokenTrie::build(std::vector<std::string> pieces, std::span<const int32_t> control_ids) {
  auto trie = std::make_shared<TokenTrie>();
  const size_t n = pieces.size();
  trie->pieces_ = std::move(pieces);
  trie->control_.assign(n, 0);
  trie->in_trie_.assign(n, 0);
  for (int32_t id : control_ids) {
    if (id >= 0 && static_cast<size_t>(id) < n) trie->control_[static_cast<size_t>(id)] = 1;
  }
  std::vector<int32_t>& ids = trie->token_ids_;
  for (size_t id = 0; id < n; ++id) {
    const std::string& p = trie->pieces_[id];
    if (trie->control_[id] || p.empty() || p[0] == '\0') continue;
    trie->in_trie_[id] = 1;
    ids.push_back(static_cast<int32_t>(id));
  }
  const std::vector<std::string>& ps = trie->pieces_;
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return ps[a] < ps[b]; });

  std::vector<Node>& nodes = trie->nodes_;
  std::vector<uint32_t> path;  // node index per depth-1 of the current piece
  const std::string* prev = nullptr;
  for (uint32_t k = 0; k < ids.size(); ++k) {
    const std::string& p = ps[ids[k]];
    size_t lcp = 0;
    if (prev != nullptr) {
      const size_t m = std::min(prev->size(), p.size());
      while (lcp < m && (*prev)[lcp] == p[lcp]) ++lcp;
    }
    while (path.size() > lcp) {  // close the subtrees this piece leaves
      nodes[path.back()].subtree_end = static_cast<uint32_t>(nodes.size());
      path.pop_back();
    }
    for (size_t d = lcp; d < p.size(); ++d) {
      path.push_back(static_cast<uint32_t>(nodes.size()));
      nodes.push_back({0, static_cast<uint32_t>(d + 1), 0, 0, static_cast<uint8_t>(p[d])});
    }
    Node& end = nodes[path.back()];
    if (end.n_tokens == 0) end.token_begin = k;
    ++end.n_tokens;  // identical pieces are adjacent in sorted order
    prev = &p;
  }
  for (uint32_t idx : path) nodes[idx].subtree_end = static_cast<uint32_t>(nodes.size());
  return trie;
}

std::optional<int32_t> TokenTrie::find(std::string_view text) const {
  std::optional<int32_t> plain;
  for (size_t id = 0; id < pieces_.size(); ++id) {
    if (pieces_[id] != text) continue;
    if (control_[id]) return static_cast<int32_t>(id);
    if (!plain) plain = static_cast<int32_t>(id);
  }
  return plain;
}

}  // namespace ox
