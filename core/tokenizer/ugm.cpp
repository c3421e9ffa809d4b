// Unigram (T5 / XLM-R SentencePiece, llama.cpp "UGM"): normalise with the model's precompiled
// charsmap (a darts-clone double array of prefix -> replacement), escape spaces, then choose the
// segmentation with the highest sum of token log-probabilities (Viterbi over byte offsets).
// Also the ByteTrie it matches tokens with.
#include <algorithm>
#include <cfloat>
#include <cstring>
#include <deque>

#include "core/tokenizer/models.h"
#include "core/tokenizer/unicode.h"

namespace ox::tok {

void ByteTrie::build(std::vector<std::pair<std::string_view, int32_t>> entries) {
  // Sorted entries make every node's subtree a contiguous range, so nodes can be laid out
  // breadth-first with each node's children contiguous and in byte order.
  std::sort(entries.begin(), entries.end());
  nodes_.assign(1, Node{});
  struct Pending {
    uint32_t node, lo, hi, depth;
  };
  std::deque<Pending> queue{{0, 0, static_cast<uint32_t>(entries.size()), 0}};
  while (!queue.empty()) {
    const Pending p = queue.front();
    queue.pop_front();
    uint32_t i = p.lo;
    for (; i < p.hi && entries[i].first.size() == p.depth; ++i) nodes_[p.node].value = entries[i].second;
    nodes_[p.node].first_child = static_cast<uint32_t>(nodes_.size());
    while (i < p.hi) {
      const uint8_t c = static_cast<uint8_t>(entries[i].first[p.depth]);
      uint32_t j = i;
      while (j < p.hi && static_cast<uint8_t>(entries[j].first[p.depth]) == c) ++j;
      Node child;
      child.label = c;
      queue.push_back({static_cast<uint32_t>(nodes_.size()), i, j, p.depth + 1});
      nodes_.push_back(child);
      i = j;
    }
    nodes_[p.node].n_children = static_cast<uint32_t>(nodes_.size()) - nodes_[p.node].first_child;
  }
}

int32_t ByteTrie::child(int32_t node, uint8_t c) const {
  const Node& n = nodes_[node];
  const auto begin = nodes_.begin() + n.first_child, end = begin + n.n_children;
  const auto it = std::lower_bound(begin, end, c, [](const Node& a, uint8_t b) { return a.label < b; });
  return (it != end && it->label == c) ? static_cast<int32_t>(it - nodes_.begin()) : -1;
}

size_t ByteTrie::longest_path(std::string_view s) const {
  int32_t node = 0;
  size_t k = 0;
  while (k < s.size() && (node = child(node, static_cast<uint8_t>(s[k]))) >= 0) ++k;
  return k;
}

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";
constexpr float kUnknownPenalty = 10.0f;  // unknown pieces score this far below the worst token

// One darts-clone unit: BASE (offset), LCHECK (label), LEAF flag and VALUE packed in 32 bits.
uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
uint32_t unit_label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
bool unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
uint32_t unit_value(uint32_t u) { return u & ((1u << 31) - 1); }

}  // namespace

UgmTokenizer::UgmTokenizer(const Vocab& vocab) : vocab_(vocab) {
  std::vector<std::pair<std::string_view, int32_t>> tokens, user_defined;
  float min_score = FLT_MAX;
  for (int32_t id = 0; id < vocab.n_vocab(); ++id) {
    const uint32_t attr = vocab.attrs[id];
    if (attr & kAttrNormal) min_score = std::min(min_score, vocab.scores[id]);
    if (attr & (kAttrNormal | kAttrUserDefined | kAttrUnused)) tokens.emplace_back(vocab.text(id), id);
    if (attr & kAttrUserDefined) user_defined.emplace_back(vocab.text(id), id);
  }
  unknown_score_ = (min_score == FLT_MAX ? 0.0f : min_score) - kUnknownPenalty;
  tokens_.build(std::move(tokens));
  user_defined_.build(std::move(user_defined));

  // Charsmap layout (validated in load_vocab): u32 size of the double array, the array, then
  // NUL-terminated replacement strings. The array is copied: GGUF bytes need not be aligned.
  const std::vector<uint8_t>& map = vocab.precompiled_charsmap;
  if (map.size() > 4) {
    uint32_t blob = 0;
    std::memcpy(&blob, map.data(), 4);
    xcda_.resize(blob / 4);
    if (!xcda_.empty()) std::memcpy(xcda_.data(), map.data() + 4, xcda_.size() * 4);
    replacements_ = std::string_view(reinterpret_cast<const char*>(map.data()) + 4 + blob, map.size() - 4 - blob);
  }
}

UgmTokenizer::Prefix UgmTokenizer::normalize_prefix(std::string_view in, size_t off) const {
  // A user-defined token is kept as it is. (llama.cpp measures how far the text follows the
  // token trie, whether or not a whole token ends there.)
  const size_t user = user_defined_.longest_path(in.substr(off));
  if (user > 0) return {in.substr(off, user), user};

  size_t best_len = 0, best_value = 0;
  if (!xcda_.empty()) {
    uint32_t node = unit_offset(xcda_[0]);
    for (size_t k = off; k < in.size(); ++k) {
      const uint8_t c = static_cast<uint8_t>(in[k]);
      if (c == 0) break;
      node ^= c;
      if (node >= xcda_.size() || unit_label(xcda_[node]) != c) break;
      const bool leaf = unit_has_leaf(xcda_[node]);
      node ^= unit_offset(xcda_[node]);
      if (leaf) {
        if (node >= xcda_.size()) break;
        best_len = k - off + 1;
        best_value = unit_value(xcda_[node]);
      }
    }
  }
  if (best_len > 0 && best_value < replacements_.size()) {
    const std::string_view rest = replacements_.substr(best_value);
    return {rest.substr(0, std::min(rest.find('\0'), rest.size())), best_len};
  }
  // No rule: a well-formed UTF-8 character passes through; a bad byte becomes U+FFFD.
  size_t pos = off;
  const uint32_t cp = decode_utf8_at(in, pos);
  if (cp == kReplacementChar && in.substr(off, 3) != "\xEF\xBF\xBD") return {"\xEF\xBF\xBD", 1};
  return {in.substr(off, pos - off), pos - off};
}

void UgmTokenizer::normalize(std::string_view in, std::string* out) const {
  out->clear();
  const std::string_view space = vocab_.escape_whitespaces ? kSpaceMark : std::string_view(" ");
  const bool prepend = !vocab_.treat_whitespace_as_suffix && vocab_.add_space_prefix;
  const bool append = vocab_.treat_whitespace_as_suffix && vocab_.add_space_prefix;
  const bool merge = vocab_.remove_extra_whitespaces;
  bool prepended = false, in_word = false;
  for (size_t off = 0; off < in.size();) {
    const Prefix p = normalize_prefix(in, off);
    for (char c : p.text) {
      if (c != ' ') {
        if (!in_word) {
          in_word = true;
          if ((prepend && !prepended) || merge) {
            out->append(space);
            prepended = true;
          }
        }
        out->push_back(c);
      } else {
        in_word = false;
        if (!merge) out->append(space);
      }
    }
    off += std::max<size_t>(p.consumed, 1);
  }
  if (append) out->append(space);
}

void UgmTokenizer::tokenize(std::string_view text, std::vector<int32_t>* out) const {
  std::string norm;
  normalize(text, &norm);
  const size_t n = norm.size();
  if (n == 0) return;
  struct Best {
    int32_t token;
    uint32_t from;
    // Double, as llama.cpp keeps it: deep into a long text the running sum is large enough that
    // float rounding flips near-ties between segmentations.
    double score;
  };
  const int32_t unk = vocab_.unk;
  std::vector<Best> best(n + 1, Best{unk, 0, -DBL_MAX});
  best[0] = Best{unk, 0, 0.0f};
  for (size_t off = 0; off < n;) {
    const size_t char_len = std::min<size_t>(utf8_seq_len(static_cast<uint8_t>(norm[off])), n - off);
    const double base = best[off].score;
    bool whole_char_token = false;
    int32_t node = 0;
    for (size_t end = off; end < n && (node = tokens_.child(node, static_cast<uint8_t>(norm[end]))) >= 0;) {
      ++end;
      const int32_t id = tokens_.value(node);
      if (id < 0) continue;
      if (end - off == char_len) whole_char_token = true;
      // User-defined tokens score 0 (normal scores are log-probabilities) so they win.
      const double score = base + ((vocab_.attrs[id] & kAttrUserDefined) ? 0.0 : vocab_.scores[id]);
      if (score > best[end].score) best[end] = Best{id, static_cast<uint32_t>(off), score};
    }
    if (!whole_char_token) {
      const double score = base + unknown_score_;
      if (score > best[off + char_len].score) {
        best[off + char_len] = Best{unk, static_cast<uint32_t>(off), score};
      }
    }
    off += char_len;
  }
  // Walk back from the end; runs of unknown pieces collapse into one unknown token.
  const size_t start = out->size();
  bool prev_unknown = false;
  for (size_t at = n;;) {
    const Best& b = best[at];
    const bool unknown = b.token == unk;
    if (!(prev_unknown && unknown) && b.token >= 0) out->push_back(b.token);
    if (b.from == 0) break;
    prev_unknown = unknown;
    at = b.from;
  }
  std::reverse(out->begin() + static_cast<std::ptrdiff_t>(start), out->end());
}

}  // namespace ox::tok
