// ConversationCache: several cached conversations for one Session, so that a side request (a
// title, a summary, another tab's chat) does not cost the main conversation its cached prefix.
// The session holds one conversation; the others wait here as saved states (Session::save_state),
// least recently used first out, bounded by a slot count and a byte budget. Before a prompt is
// evaluated, swap_in() puts the conversation sharing the longest prefix with it into the session.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <vector>

#include "core/base/status.h"

namespace ox {

class Session;

class ConversationCache {
 public:
  // At most `max_slots` saved conversations and `max_bytes` of them in all (the one in the session
  // is not counted).
  ConversationCache(int max_slots, uint64_t max_bytes) : max_slots_(max_slots), max_bytes_(max_bytes) {}

  // If a saved conversation shares a longer prefix with `prompt` than the session does, saves the
  // session's (when it holds one worth keeping) and loads that one. Returns the prefix length the
  // session then shares with the prompt.
  Result<int> swap_in(Session& session, std::span<const int32_t> prompt);

  void clear() { slots_.clear(); }
  int size() const { return static_cast<int>(slots_.size()); }
  uint64_t bytes() const;

 private:
  struct Slot {
    std::vector<int32_t> tokens;  // what the state holds
    std::vector<uint8_t> state;
  };
  void evict();  // least recently used first, down to the slot and byte limits

  int max_slots_;
  uint64_t max_bytes_;
  std::list<Slot> slots_;  // most recently used first
};

}  // namespace ox
