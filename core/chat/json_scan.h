// JSON that may be cut short (streamed model output): where a value ends and whether it was
// complete, the members of an object, and the whitespace-free copy used as tool-call arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ox::chat {

enum class JsonScan { kComplete, kIncomplete, kInvalid };

// end: one past the value (kComplete), text.size() (kIncomplete) or the offending byte (kInvalid).
struct JsonSpan {
  JsonScan state = JsonScan::kInvalid;
  size_t end = 0;
};

// A JSON value starting at text[pos] (no leading whitespace skipped). A number running to the end
// of the text is kIncomplete: more digits may follow.
JsonSpan scan_json_value(std::string_view text, size_t pos);

struct JsonMember {
  std::string key;     // decoded
  size_t value_begin;  // offset of the value's first byte
  JsonSpan value;
};

// The members of the object at text[pos] ('{'), in order. kIncomplete: the text ended inside it
// (members holds those whose value began; the last one's value may be incomplete).
struct JsonObjectScan {
  JsonScan state = JsonScan::kInvalid;
  size_t end = 0;
  std::vector<JsonMember> members;
  const JsonMember* find(std::string_view key) const;
};
JsonObjectScan scan_json_object(std::string_view text, size_t pos);

// The text without whitespace outside strings: prefixes of a value give prefixes of the result,
// so streamed arguments only ever grow.
std::string minify_json(std::string_view raw);

// A complete JSON string literal ("...") decoded; false if malformed.
bool decode_json_string(std::string_view literal, std::string* out);

size_t skip_json_ws(std::string_view text, size_t pos);

}  // namespace ox::chat
