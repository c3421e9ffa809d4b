// TextStream: turns generated token pieces into text that is safe to show as it arrives.
// Holds back an incomplete UTF-8 character (a multi-byte emoji split across byte tokens comes out
// whole) and any tail that could be the start of a stop string; finds stop strings across pieces.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ox {

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stop = {});

  // Adds a piece; true once a stop string has appeared (text from it on is dropped).
  bool push(std::string_view piece);
  // Releases everything still held (end of generation without a stop string).
  void finish();
  // Text released since the last take(); valid until the next push/finish.
  std::string_view take();

 private:
  size_t safe_prefix_length() const;

  std::vector<std::string> stop_;
  std::string held_;      // not yet released
  std::string released_;  // ready for take()
  std::string taken_;     // storage behind the view take() returned
  bool stopped_ = false;
};

// Length of the longest prefix of `s` that does not end inside a UTF-8 multi-byte sequence.
size_t complete_utf8_prefix(std::string_view s);

}  // namespace ox
