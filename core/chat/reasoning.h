// Reasoning blocks (<think>...</think> and each format's equivalent) split off a reply into
// reasoning_content, as llama-server does with --reasoning-format deepseek.
#pragma once

#include <string>
#include <string_view>

#include "core/chat/tool_format.h"

namespace ox::chat {

enum class ReasoningFormat {
  kNone,      // the block stays in content, tags included
  kDeepSeek,  // the block goes to reasoning_content (llama-server's default)
};

struct ReasoningSplit {
  std::string reasoning;  // trimmed; partial: without a possible start of the end tag
  size_t content_begin;   // where the rest of the reply starts (after the end tag and whitespace)
  bool closed;            // the end tag was seen (or there was no block)
};

// A reasoning block at the start of `text` (after whitespace). forced_open: the prompt already
// opened it (prompt_opens_reasoning), so the text starts inside the block. An unclosed block is
// reasoning to the end when partial, and (as llama.cpp) reasoning when complete too.
ReasoningSplit split_reasoning(std::string_view text, const ReasoningTags& tags, bool forced_open, bool is_partial);

// The length of the longest suffix of `text` that is a proper prefix of `marker` (a marker the
// stream may still be writing, held back from output while partial).
size_t partial_marker_suffix(std::string_view text, std::string_view marker);

// `s` without leading and trailing spaces, tabs and newlines.
std::string_view trim_space(std::string_view s);

}  // namespace ox::chat
