// Bridges JSON and template values: the caller's messages/tools (nlohmann JSON) become Values,
// and the tojson filter writes Values the way Python's json.dumps does.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/value.h"

namespace ox::chat {

// Objects keep their key order: nlohmann::json iterates keys sorted, ordered_json as written.
Result<Value> value_from_json(const nlohmann::json& j);
Result<Value> value_from_json(const nlohmann::ordered_json& j);

// json.dumps(obj, ensure_ascii, indent, separators, sort_keys) as transformers' tojson calls it.
struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // nullopt: one line
  std::optional<std::string> item_sep;  // default ", " (one line) or "," (indented)
  std::string key_sep = ": ";
  bool sort_keys = false;
};
Result<std::string> dump_json(const Value& v, const JsonDumpOptions& options);

// A JSON string literal with Python's escapes (no ASCII escaping of non-ASCII text).
void append_json_string(std::string* out, std::string_view s, bool ensure_ascii);

}  // namespace ox::chat
