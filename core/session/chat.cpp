// LoadedModel::apply_chat_template and chat_prompt: the model's chat template (chat_template():
// the file's, a guessed built-in or an override) applied to OpenAI-style messages, with the model's BOS/EOS texts; chat_prompt also
// tokenizes the result so that text from the messages can never become a control token.
#include <nlohmann/json.hpp>

#include "core/session/session.h"

namespace ox {
namespace {

// Message strings that hold control-token texts ("<|im_end|>", "</s>") are marked before the
// template runs: each such text is wrapped in U+E000 ... U+E001, and any of U+E000-U+E002 the user
// typed is escaped with U+E002. After rendering, the marks become literal byte ranges that the
// tokenizer reads as text, and are removed. Strings without control texts or marks are passed as
// they are, so rendering is byte for byte unchanged for them. (A template that itself contains
// U+E000-U+E002 would have them dropped; no published template does.)
constexpr std::string_view kOpen = "\xEE\x80\x80";    // U+E000
constexpr std::string_view kClose = "\xEE\x80\x81";   // U+E001
constexpr std::string_view kEscape = "\xEE\x80\x82";  // U+E002

bool is_mark_at(std::string_view s, size_t i) {
  return i + 3 <= s.size() && s.compare(i, 2, "\xEE\x80") == 0 && static_cast<uint8_t>(s[i + 2]) >= 0x80 &&
         static_cast<uint8_t>(s[i + 2]) <= 0x82;
}

bool mark_string(const tok::Tokenizer& t, std::string* s) {
  const std::vector<tok::TextRange> ranges = t.control_token_ranges(*s);
  bool has_marks = false;
  for (size_t i = 0; i < s->size() && !has_marks; ++i) has_marks = is_mark_at(*s, i);
  if (ranges.empty() && !has_marks) return false;
  std::string out;
  out.reserve(s->size() + ranges.size() * 6);
  size_t r = 0;
  for (size_t i = 0; i < s->size();) {
    if (r < ranges.size() && i == ranges[r].offset) {
      out += kOpen;
      out.append(*s, i, ranges[r].length);  // a control text holds no marks (they are not ASCII markup)
      out += kClose;
      i += ranges[r].length;
      ++r;
    } else if (is_mark_at(*s, i)) {
      out += kEscape;
      out.append(*s, i, 3);
      i += 3;
    } else {
      out.push_back((*s)[i++]);
    }
  }
  *s = std::move(out);
  return true;
}

// Marks every string of the messages except the keys templates compare against ("role", "type").
void mark_messages(const tok::Tokenizer& t, nlohmann::ordered_json* j, std::string_view key = {}) {
  if (j->is_string()) {
    if (key != "role" && key != "type") mark_string(t, j->get_ptr<std::string*>());
  } else if (j->is_array()) {
    for (auto& item : *j) mark_messages(t, &item);
  } else if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) mark_messages(t, &it.value(), it.key());
  }
}

// Removes the marks; `literal` gets the byte ranges of the clean text that were marked.
std::string unmark(std::string_view rendered, std::vector<tok::TextRange>* literal) {
  std::string out;
  out.reserve(rendered.size());
  int64_t open_at = -1;
  for (size_t i = 0; i < rendered.size();) {
    if (!is_mark_at(rendered, i)) {
      out.push_back(rendered[i++]);
      continue;
    }
    const std::string_view mark = rendered.substr(i, 3);
    i += 3;
    if (mark == kEscape) {
      if (is_mark_at(rendered, i)) {
        out.append(rendered.substr(i, 3));
        i += 3;
      }
    } else if (mark == kOpen) {
      if (open_at < 0) open_at = static_cast<int64_t>(out.size());
    } else if (open_at >= 0) {  // kClose; one without an opening (a template cut the text) is dropped
      literal->push_back(tok::TextRange{static_cast<uint32_t>(open_at), static_cast<uint32_t>(out.size() - open_at)});
      open_at = -1;
    }
  }
  // An opening whose closing a template cut off protects the rest: never less than asked for.
  if (open_at >= 0) {
    literal->push_back(tok::TextRange{static_cast<uint32_t>(open_at), static_cast<uint32_t>(out.size() - open_at)});
  }
  return out;
}

}  // namespace

Result<std::string> LoadedModel::apply_chat_template(std::string_view messages_json, bool add_generation_prompt) const {
  // ordered_json keeps key order, so tojson prints objects as Python would.
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(messages_json, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) {
    return error(ErrorCode::kInvalidArgument, "messages must be a JSON array of {role, content} objects");
  }
  return render_chat(messages, add_generation_prompt);
}

Result<std::string> LoadedModel::render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                             const nlohmann::ordered_json& extra) const {
  if (!messages.is_array()) {
    return error(ErrorCode::kInvalidArgument, "messages must be a JSON array of {role, content} objects");
  }
  const tok::Tokenizer& t = *tokenizer_;
  std::string bos, eos;
  if (t.bos_id() >= 0) {
    OX_ASSIGN_OR_RETURN(bos, t.token_to_piece(t.bos_id(), true));
  }
  if (t.eos_id() >= 0) {
    OX_ASSIGN_OR_RETURN(eos, t.token_to_piece(t.eos_id(), true));
  }
  return render_chat_template(chat_template_, messages, add_generation_prompt, bos, eos, t.add_bos(), extra);
}

Result<std::vector<int32_t>> LoadedModel::chat_prompt_from_json(std::string_view messages_json, bool add_generation_prompt) const {
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(messages_json, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) {
    return error(ErrorCode::kInvalidArgument, "messages must be a JSON array of {role, content} objects");
  }
  return chat_prompt(std::move(messages), add_generation_prompt);
}

Result<std::vector<int32_t>> LoadedModel::chat_prompt(nlohmann::ordered_json messages, bool add_generation_prompt,
                                                      nlohmann::ordered_json extra) const {
  mark_messages(*tokenizer_, &messages);
  if (extra.contains("tools")) mark_messages(*tokenizer_, &extra["tools"]);  // tool descriptions are text too
  OX_ASSIGN_OR_RETURN(std::string rendered, render_chat(messages, add_generation_prompt, extra));
  std::vector<tok::TextRange> literal;
  const std::string text = unmark(rendered, &literal);
  // Templates write BOS themselves; adding another would double it.
  return tokenizer_->encode(text, /*add_special=*/false, literal);
}

}  // namespace ox
