// StreamDecoder and StopMatcher (see stream_decoder.h).
#include "core/tokenizer/stream_decoder.h"

#include <algorithm>

namespace ox::tok {

size_t complete_utf8_prefix(std::string_view s) {
  const size_t n = s.size();
  // Find the start of the last sequence within its longest possible length (4 bytes).
  for (size_t k = 1; k <= std::min<size_t>(4, n); ++k) {
    const uint8_t b = static_cast<uint8_t>(s[n - k]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 1;
    if ((b & 0xE0) == 0xC0) need = 2;
    else if ((b & 0xF0) == 0xE0) need = 3;
    else if ((b & 0xF8) == 0xF0) need = 4;
    return need > k ? n - k : n;
  }
  return n;  // only continuation bytes at the end: stray bytes, nothing to wait for
}

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool render_special)
    : tokenizer_(tokenizer), render_special_(render_special) {}

Result<std::string> StreamDecoder::push(int32_t id) {
  OX_ASSIGN_OR_RETURN(std::string piece, tokenizer_.token_to_piece(id, render_special_));
  pending_ += piece;
  const size_t done = complete_utf8_prefix(pending_);
  std::string out = pending_.substr(0, done);
  pending_.erase(0, done);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

StopMatcher::StopMatcher(std::vector<std::string> stop_strings) {
  for (std::string& s : stop_strings) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

StopMatcher::Step StopMatcher::push(std::string_view text) {
  Step step;
  if (stopped_) return step;
  std::string buf = held_;
  buf.append(text);
  // The stop that completes first wins (what a reader of the stream would see first); among
  // those ending at the same place, the one starting earliest.
  size_t best_start = std::string::npos, best_end = std::string::npos;
  const std::string* best = nullptr;
  for (const std::string& stop : stops_) {
    const size_t pos = buf.find(stop);
    if (pos == std::string::npos) continue;
    const size_t end = pos + stop.size();
    if (best == nullptr || end < best_end || (end == best_end && pos < best_start)) {
      best = &stop;
      best_start = pos;
      best_end = end;
    }
  }
  if (best != nullptr) {
    stopped_ = true;
    matched_ = *best;
    held_.clear();
    step.text = buf.substr(0, best_start);
    step.stopped = true;
    return step;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& stop : stops_) {
    for (size_t len = std::min(stop.size() - 1, buf.size()); len > hold; --len) {
      if (std::string_view(buf).substr(buf.size() - len) == std::string_view(stop).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  held_ = buf.substr(buf.size() - hold);
  step.text = buf.substr(0, buf.size() - hold);
  return step;
}

std::string StopMatcher::flush() {
  std::string out;
  if (!stopped_) out.swap(held_);
  return out;
}

}  // namespace ox::tok
