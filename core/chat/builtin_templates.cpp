// Built-in chat templates for GGUF files without tokenizer.chat_template, written for this
// engine from the published prompt formats, and a guess of which one a model uses.
#include <algorithm>

#include "core/chat/template.h"

namespace ox::chat {

namespace {

// Message content may be a string or a list of typed parts; only text parts are rendered.
#define OX_TEXT_MACRO                                                                        \
  "{%- macro text(content) -%}"                                                              \
  "{%- if content is string -%}{{- content -}}"                                              \
  "{%- elif content is iterable and content is not mapping -%}"                              \
  "{%- for part in content if part is mapping and part.type == 'text' -%}{{- part.text -}}" \
  "{%- endfor -%}"                                                                           \
  "{%- elif content is not none -%}{{- content -}}{%- endif -%}"                             \
  "{%- endmacro -%}\n"

// <|im_start|>role\ncontent<|im_end|>\n per message (Qwen, Yi, SmolLM, many fine-tunes).
constexpr const char kChatml[] = OX_TEXT_MACRO
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message.role + '\\n' + text(message.content) + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

// Llama 2 chat: the system prompt sits inside the first [INST] between <<SYS>> markers; every
// user turn opens with BOS, every assistant turn closes with EOS.
constexpr const char kLlama2[] = OX_TEXT_MACRO
    "{%- if messages and messages[0].role == 'system' -%}\n"
    "{%- set system = text(messages[0].content) | trim -%}{%- set turns = messages[1:] -%}\n"
    "{%- else -%}{%- set system = '' -%}{%- set turns = messages -%}{%- endif -%}\n"
    "{%- for message in turns -%}\n"
    "{%- if message.role == 'user' -%}\n"
    "{%- set body = text(message.content) | trim -%}\n"
    "{%- if loop.first and system -%}{%- set body = '<<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' + body -%}{%- endif -%}\n"
    "{{- bos_token + '[INST] ' + body + ' [/INST]' -}}\n"
    "{%- elif message.role == 'assistant' -%}\n"
    "{{- ' ' + text(message.content) | trim + ' ' + eos_token -}}\n"
    "{%- endif -%}\n"
    "{%- endfor -%}\n";

// Llama 3 / 3.x instruct: header-delimited turns ending in <|eot_id|>.
constexpr const char kLlama3[] = OX_TEXT_MACRO
    "{{- bos_token -}}\n"
    "{%- for message in messages -%}\n"
    "{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + text(message.content) | trim + '<|eot_id|>' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}{%- endif -%}\n";

// Mistral instruct (v0.1-v0.3): [INST] user [/INST] assistant</s>; a system prompt is folded
// into the first user turn, since the format has no system role.
constexpr const char kMistral[] = OX_TEXT_MACRO
    "{{- bos_token -}}\n"
    "{%- set ns = namespace(system='') -%}\n"
    "{%- for message in messages -%}\n"
    "{%- if message.role == 'system' -%}{%- set ns.system = ns.system + text(message.content) | trim + '\\n\\n' -%}\n"
    "{%- elif message.role == 'user' -%}\n"
    "{{- '[INST] ' + ns.system + text(message.content) | trim + ' [/INST]' -}}{%- set ns.system = '' -%}\n"
    "{%- elif message.role == 'assistant' -%}{{- ' ' + text(message.content) | trim + eos_token -}}\n"
    "{%- endif -%}\n"
    "{%- endfor -%}\n";

// Gemma: <start_of_turn>user|model ... <end_of_turn>; no system role, so system text is
// prepended to the next user turn.
constexpr const char kGemma[] = OX_TEXT_MACRO
    "{{- bos_token -}}\n"
    "{%- set ns = namespace(system='') -%}\n"
    "{%- for message in messages -%}\n"
    "{%- if message.role == 'system' -%}{%- set ns.system = ns.system + text(message.content) | trim + '\\n\\n' -%}\n"
    "{%- else -%}\n"
    "{%- set role = 'model' if message.role == 'assistant' else 'user' -%}\n"
    "{%- set prefix = ns.system if role == 'user' else '' -%}\n"
    "{{- '<start_of_turn>' + role + '\\n' + prefix + text(message.content) | trim + '<end_of_turn>\\n' -}}\n"
    "{%- if role == 'user' -%}{%- set ns.system = '' -%}{%- endif -%}\n"
    "{%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}\n";

// Phi-3: <|role|>\ncontent<|end|>\n; without a generation prompt the text ends with EOS.
constexpr const char kPhi3[] = OX_TEXT_MACRO
    "{%- for message in messages -%}\n"
    "{{- '<|' + message.role + '|>\\n' + text(message.content) + '<|end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|assistant|>\\n' -}}{%- else -%}{{- eos_token -}}{%- endif -%}\n";

struct Builtin {
  std::string_view name;
  std::string_view source;
};

constexpr Builtin kBuiltins[] = {
    {"chatml", kChatml}, {"llama-2", kLlama2}, {"llama-3", kLlama3},
    {"mistral", kMistral}, {"gemma", kGemma}, {"phi-3", kPhi3},
};

bool has_token(const std::vector<std::string>& tokens, std::string_view t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

}  // namespace

std::string_view builtin_template(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (b.name == name) return b.source;
  }
  return {};
}

std::vector<std::string_view> builtin_template_names() {
  std::vector<std::string_view> names;
  for (const Builtin& b : kBuiltins) names.push_back(b.name);
  return names;
}

std::string_view guess_template_name(std::string_view arch, const std::vector<std::string>& tokens) {
  return guess_template_name_by(arch, [&](std::string_view t) { return has_token(tokens, t); });
}

std::string_view guess_template_name_by(std::string_view arch, const std::function<bool(std::string_view)>& has) {
  // Special tokens are the strongest signal: they exist only if the model was trained on them.
  if (has("<|im_start|>")) return "chatml";
  if (has("<|start_header_id|>") || has("<|eot_id|>")) return "llama-3";
  if (has("<start_of_turn>")) return "gemma";
  if (has("<|assistant|>") && has("<|end|>")) return "phi-3";
  if (has("[INST]")) return "mistral";
  if (arch.rfind("gemma", 0) == 0) return "gemma";
  if (arch == "phi3") return "phi-3";
  if (arch == "llama") return "llama-2";
  return "chatml";
}

}  // namespace ox::chat
