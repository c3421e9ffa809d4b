// Reasoning extraction: a leading start tag, its end tag, whitespace trimmed on both sides.
#include "core/chat/reasoning.h"

#include <algorithm>

namespace ox::chat {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

std::string_view trim_space(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

namespace {

size_t skip_space(std::string_view s, size_t pos) {
  while (pos < s.size() && is_space(s[pos])) ++pos;
  return pos;
}

}  // namespace

size_t partial_marker_suffix(std::string_view text, std::string_view marker) {
  const size_t max = std::min(text.size(), marker.size() - (marker.empty() ? 0 : 1));
  for (size_t n = max; n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

ReasoningSplit split_reasoning(std::string_view text, const ReasoningTags& tags, bool forced_open, bool is_partial) {
  ReasoningSplit out{"", 0, true};
  if (tags.start.empty()) return out;
  size_t body = 0;
  const size_t first = skip_space(text, 0);
  if (text.substr(first, tags.start.size()) == tags.start) {
    body = first + tags.start.size();
  } else if (is_partial && first < text.size() && tags.start.substr(0, text.size() - first) == text.substr(first)) {
    out.content_begin = text.size();  // maybe the start tag: hold everything back
    out.closed = false;
    return out;
  } else if (!forced_open) {
    return out;
  }
  const size_t end = text.find(tags.end, body);
  if (end == std::string_view::npos) {
    std::string_view rest = text.substr(body);
    if (is_partial) rest.remove_suffix(partial_marker_suffix(rest, tags.end));
    out.reasoning = std::string(trim_space(rest));
    out.content_begin = text.size();
    out.closed = false;
    return out;
  }
  out.reasoning = std::string(trim_space(text.substr(body, end - body)));
  out.content_begin = skip_space(text, end + tags.end.size());
  return out;
}

}  // namespace ox::chat
