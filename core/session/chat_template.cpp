// ChatTemplateInfo: the file's template, a guessed built-in, or an override, and how each is shown.
#include "core/session/chat_template.h"

#include "core/chat/template.h"

namespace ox {
namespace {

// True if `text` is a single special token of this vocabulary.
bool has_special_token(const tok::Tokenizer& t, std::string_view text) {
  Result<std::vector<int32_t>> ids = t.encode(text, /*add_special=*/false, /*parse_special=*/true);
  return ids.ok() && ids.value().size() == 1;
}

std::string_view string_or_empty(const gguf::GgufFile& file, std::string_view key) {
  Result<std::string_view> v = file.get_string(key);
  return v.ok() ? v.value() : std::string_view();
}

bool looks_like_jinja(std::string_view s) {
  return s.find("{{") != std::string_view::npos || s.find("{%") != std::string_view::npos ||
         s.find_first_of(" \n\t") != std::string_view::npos;
}

}  // namespace

std::string_view chat_template_origin_name(ChatTemplateOrigin origin) {
  switch (origin) {
    case ChatTemplateOrigin::kFile: return "file";
    case ChatTemplateOrigin::kGuessed: return "guessed";
    case ChatTemplateOrigin::kOverride: return "override";
  }
  return "?";
}

std::string describe_chat_template(const ChatTemplateInfo& info) {
  switch (info.origin) {
    case ChatTemplateOrigin::kFile:
      return info.name + (info.name == "custom" ? " (from the file; not a built-in format)" : " (from the file)");
    case ChatTemplateOrigin::kGuessed:
      if (info.reason.empty()) {
        return info.name +
               " (llama.cpp's default: the file has no tokenizer.chat_template and nothing in it names a format)";
      }
      return info.name + " (guessed from " + info.reason + "; the file has no tokenizer.chat_template)";
    case ChatTemplateOrigin::kOverride:
      return info.name + (info.builtin ? " (built-in, chosen over the model's)" : " (Jinja given over the model's)");
  }
  return info.name;
}

ChatTemplateInfo model_chat_template(const gguf::GgufFile& file, const tok::Tokenizer& tokenizer) {
  ChatTemplateInfo info;
  const std::string_view source = tokenizer.chat_template();
  if (!source.empty()) {
    const std::string_view name = chat::detect_template_name(source);
    info.name = name.empty() ? "custom" : std::string(name);
    info.origin = ChatTemplateOrigin::kFile;
    info.source = std::string(source);
    return info;
  }
  chat::ModelFacts facts;
  facts.arch = string_or_empty(file, "general.architecture");
  facts.name = string_or_empty(file, "general.name");
  facts.pre = string_or_empty(file, "tokenizer.ggml.pre");
  if (!facts.arch.empty()) {
    Result<uint32_t> n_layer = file.get_u32(std::string(facts.arch) + ".block_count");
    if (n_layer.ok()) facts.n_layer = n_layer.value();
  }
  facts.has_token = [&](std::string_view text) { return has_special_token(tokenizer, text); };
  chat::TemplateGuess guess = chat::guess_template(facts);
  info.name = std::string(guess.name);
  info.origin = ChatTemplateOrigin::kGuessed;
  info.source = std::string(chat::builtin_template(guess.name));
  info.builtin = true;
  info.reason = std::move(guess.reason);
  return info;
}

Result<ChatTemplateInfo> override_chat_template(std::string_view name_or_source) {
  ChatTemplateInfo info;
  info.origin = ChatTemplateOrigin::kOverride;
  if (const chat::BuiltinTemplate* b = chat::find_builtin_template(name_or_source)) {
    info.name = std::string(b->name);
    info.source = std::string(b->source);
    info.builtin = true;
    return info;
  }
  if (name_or_source.empty() || !looks_like_jinja(name_or_source)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("unknown chat template '%.*s': give Jinja source or a built-in name: %s",
                        static_cast<int>(name_or_source.size()), name_or_source.data(),
                        chat::builtin_template_list().c_str()));
  }
  OX_TRY(chat::ChatTemplate::parse(name_or_source).status());
  const std::string_view name = chat::detect_template_name(name_or_source);
  info.name = name.empty() ? "custom" : std::string(name);
  info.source = std::string(name_or_source);
  return info;
}

Result<std::string> render_chat_template(const ChatTemplateInfo& info, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt, std::string_view bos, std::string_view eos,
                                         bool add_bos, const nlohmann::ordered_json& extra) {
  OX_ASSIGN_OR_RETURN(std::string text,
                      chat::apply_chat_template_ordered(info.source, messages, add_generation_prompt, bos, eos, extra));
  if (info.builtin && add_bos && !bos.empty() && !text.starts_with(bos)) text.insert(0, bos);
  return text;
}

}  // namespace ox
