// Streaming detokenization for generation: StreamDecoder turns token ids into text that never
// ends inside a UTF-8 character (an emoji spread over byte tokens comes out whole), and
// StopMatcher finds stop strings across piece boundaries, holding back text that may still turn
// out to be the start of one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/tokenizer/tokenizer.h"

namespace ox::tok {

// Length of the longest prefix of `s` that does not end with an incomplete UTF-8 sequence.
// Malformed bytes count as complete (they will never become valid; holding them back would stall).
size_t complete_utf8_prefix(std::string_view s);

class StreamDecoder {
 public:
  // The tokenizer must outlive the decoder. render_special: show control tokens' texts.
  explicit StreamDecoder(const Tokenizer& tokenizer, bool render_special = false);

  // Adds one token; returns the text completed by it (possibly empty). Error: id out of range.
  Result<std::string> push(int32_t id);
  // End of stream: whatever is still held (only an unfinished UTF-8 sequence), as raw bytes.
  std::string flush();
  void reset() { pending_.clear(); }

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  std::string pending_;
};

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stop_strings);  // empty strings are ignored

  struct Step {
    std::string text;      // safe to show now
    bool stopped = false;  // a stop string completed: `text` is everything before it; stop generating
  };
  // Feeds newly decoded text. After a stop, further pushes return nothing.
  Step push(std::string_view text);
  // End of generation without a stop: the held-back text.
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }  // the stop string that fired

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace ox::tok
