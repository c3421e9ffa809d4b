// LoadedModel::apply_chat_template: the model's Jinja chat template (or a built-in one) applied
// to OpenAI-style messages, with the model's BOS/EOS texts.
#include <nlohmann/json.hpp>

#include "core/chat/template.h"
#include "core/session/session.h"

namespace ox {
namespace {

// True if `text` is a single special token of this vocabulary.
bool has_special_token(const tok::Tokenizer& t, std::string_view text) {
  Result<std::vector<int32_t>> ids = t.encode(text, /*add_special=*/false, /*parse_special=*/true);
  return ids.ok() && ids.value().size() == 1;
}

}  // namespace

Result<std::string> LoadedModel::apply_chat_template(std::string_view messages_json, bool add_generation_prompt) const {
  // ordered_json keeps key order, so tojson prints objects as Python would.
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(messages_json, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) {
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
  std::string_view source = t.chat_template();
  if (source.empty()) {
    // No tokenizer.chat_template: a built-in one chosen from the vocabulary's markers, as llama.cpp does.
    Result<std::string_view> arch = file().get_string("general.architecture");
    source = chat::builtin_template(chat::guess_template_name_by(
        arch.ok() ? arch.value() : std::string_view(), [&](std::string_view text) { return has_special_token(t, text); }));
  }
  return chat::apply_chat_template_ordered(source, messages, add_generation_prompt, bos, eos);
}

}  // namespace ox
