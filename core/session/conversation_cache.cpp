// ConversationCache: longest-prefix lookup over saved states, LRU eviction.
#include "core/session/conversation_cache.h"

#include <algorithm>

#include "core/session/session.h"

namespace ox {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

uint64_t ConversationCache::bytes() const {
  uint64_t total = 0;
  for (const Slot& s : slots_) total += s.state.size();
  return total;
}

Result<int> ConversationCache::swap_in(Session& session, std::span<const int32_t> prompt) {
  const size_t held = common_prefix(session.tokens(), prompt);
  // The session's conversation is worth saving when the prompt would overwrite most of it (a side
  // request), not when it goes on from it (the next turn, perhaps re-rendering the last few tokens).
  const bool keep_current = session.n_past() > 0 && held * 2 < static_cast<size_t>(session.n_past());
  auto best = slots_.end();
  size_t best_len = held;
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    const size_t len = common_prefix(it->tokens, prompt);
    if (len > best_len) best = it, best_len = len;
  }
  if (keep_current) {
    OX_ASSIGN_OR_RETURN(std::vector<uint8_t> current, session.save_state());
    Slot saved{session.tokens(), std::move(current)};
    if (best == slots_.end()) {
      slots_.push_front(std::move(saved));
      evict();
      return static_cast<int>(held);
    }
    Slot chosen = std::move(*best);
    slots_.erase(best);
    OX_TRY(session.load_state(chosen.state));
    slots_.push_front(std::move(saved));
    evict();
    return static_cast<int>(best_len);
  }
  if (best == slots_.end()) return static_cast<int>(held);
  OX_TRY(session.load_state(best->state));
  slots_.erase(best);
  return static_cast<int>(best_len);
}

void ConversationCache::evict() {
  while (!slots_.empty() && (static_cast<int>(slots_.size()) > max_slots_ || bytes() > max_bytes_)) slots_.pop_back();
}

}  // namespace ox
