// Which chat template a model renders with, and where it came from: the GGUF's
// tokenizer.chat_template, a built-in guessed for a file without one, or an override (a built-in
// name or Jinja source from --chat-template / the JS chatTemplate option).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/tokenizer/tokenizer.h"

namespace ox {

enum class ChatTemplateOrigin { kFile, kGuessed, kOverride };

struct ChatTemplateInfo {
  std::string name;    // a built-in's name, else the built-in format a Jinja source was recognised as, else "custom"
  ChatTemplateOrigin origin = ChatTemplateOrigin::kGuessed;
  std::string source;  // the Jinja text rendered
  bool builtin = false;  // source is the registry's: BOS is added as the vocabulary asks (llama.cpp's way)
  std::string reason;  // how a guess was made ("the vocabulary's <|im_start|> token"; empty: the default)
};

// "file", "guessed", "override" (the JS ModelInfo spelling).
std::string_view chat_template_origin_name(ChatTemplateOrigin origin);
// One line: "llama3 (from the file)", "chatml (guessed from general.architecture = qwen2)", ...
std::string describe_chat_template(const ChatTemplateInfo& info);

// The template of a model file: tokenizer.chat_template, else a guess (chat::guess_template).
ChatTemplateInfo model_chat_template(const gguf::GgufFile& file, const tok::Tokenizer& tokenizer);
// An override: a built-in name (or alias) or Jinja source. A string that is neither (no Jinja
// markup, one word) is an error listing the built-in names; bad Jinja is a parse error.
Result<ChatTemplateInfo> override_chat_template(std::string_view name_or_source);

// Renders messages with `info`; bos/eos fill bos_token/eos_token. A built-in's render is
// preceded by `bos` when `add_bos` (the vocabulary's tokenizer.ggml.add_bos_token): llama.cpp's
// formats leave BOS to the tokenizer, and chat prompts here are tokenized without adding it.
// `extra`: more template variables (tools, enable_thinking, ...; chat::tool_template_context).
Result<std::string> render_chat_template(const ChatTemplateInfo& info, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt, std::string_view bos, std::string_view eos,
                                         bool add_bos, const nlohmann::ordered_json& extra = {});

}  // namespace ox
