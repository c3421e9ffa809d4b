// TextStream implementation.
#include "core/session/text_stream.h"

#include <algorithm>

namespace ox {

size_t complete_utf8_prefix(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 1;
    if ((c & 0xE0) == 0xC0) need = 2;
    else if ((c & 0xF0) == 0xE0) need = 3;
    else if ((c & 0xF8) == 0xF0) need = 4;
    return need > back ? n - back : n;
  }
  return n;  // ASCII end, or stray continuation bytes: nothing to wait for
}

TextStream::TextStream(std::vector<std::string> stop) : stop_(std::move(stop)) {
  stop_.erase(std::remove_if(stop_.begin(), stop_.end(), [](const std::string& s) { return s.empty(); }), stop_.end());
}

size_t TextStream::safe_prefix_length() const {
  size_t safe = complete_utf8_prefix(held_);
  // Hold back the longest tail of held_ that is a proper prefix of some stop string.
  for (const std::string& stop : stop_) {
    const size_t max_len = std::min(stop.size() - 1, held_.size());
    for (size_t len = max_len; len > 0; --len) {
      if (std::string_view(held_).substr(held_.size() - len) == std::string_view(stop).substr(0, len)) {
        safe = std::min(safe, held_.size() - len);
        break;
      }
    }
  }
  return safe;
}

bool TextStream::push(std::string_view piece) {
  if (stopped_) return true;
  held_.append(piece);
  size_t first_stop = std::string::npos;
  for (const std::string& stop : stop_) first_stop = std::min(first_stop, held_.find(stop));
  if (first_stop != std::string::npos) {
    released_.append(held_, 0, first_stop);
    held_.clear();
    stopped_ = true;
    return true;
  }
  const size_t safe = safe_prefix_length();
  released_.append(held_, 0, safe);
  held_.erase(0, safe);
  return false;
}

void TextStream::finish() {
  if (!stopped_) released_.append(held_);
  held_.clear();
}

std::string_view TextStream::take() {
  taken_.swap(released_);
  released_.clear();
  return taken_;
}

}  // namespace ox
