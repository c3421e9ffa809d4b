// The built-in chat templates, one row per format llama.cpp names in LLM_CHAT_TEMPLATES, each
// written as Jinja for this engine so that it renders what llama.cpp's llm_chat_apply_template
// writes for the same messages (tests/core/chat/builtin_templates_test.cpp holds llama.cpp's
// expected renders). Like llama.cpp's formats they write no BOS: LoadedModel adds it when the
// vocabulary asks for one (tokenizer.ggml.add_bos_token).
#include "core/chat/builtin_templates.h"

namespace ox::chat {
namespace {

// Message content may be a string or a list of typed parts; only text parts are rendered.
// Every template below starts with it and reads `content` through text().
#define OX_TEXT_MACRO                                                                        \
  "{%- macro text(content) -%}"                                                              \
  "{%- if content is string -%}{{- content -}}"                                              \
  "{%- elif content is iterable and content is not mapping -%}"                              \
  "{%- for part in content if part is mapping and part.type == 'text' -%}{{- part.text -}}" \
  "{%- endfor -%}"                                                                           \
  "{%- elif content is not none -%}{{- content -}}{%- endif -%}"                             \
  "{%- endmacro -%}\n"

// Opens the message loop with `role` and `content` (the text) set.
#define OX_FOR_MESSAGES \
  "{%- for message in messages -%}{%- set role = message.role -%}{%- set content = text(message.content) -%}\n"

constexpr const char kChatml[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|im_start|>' + role + '\n' + content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%})";

// Llama 2 and its variants share one body: ox_sys (a system message in <<SYS>>), ox_bos (BOS
// before every later [INST]), ox_strip (trimmed messages). No generation prompt: [/INST] asks.
#define OX_LLAMA2_BODY OX_TEXT_MACRO \
  "{%- set ns = namespace(inside=true) -%}\n" \
  "{{- '[INST] ' -}}\n" \
  "{%- for message in messages -%}\n" \
  "{%- set content = text(message.content) | trim if ox_strip else text(message.content) -%}\n" \
  "{%- if not ns.inside -%}{%- set ns.inside = true -%}{{- '<s>[INST] ' if ox_bos else '[INST] ' -}}{%- endif -%}\n" \
  "{%- if message.role == 'system' -%}\n" \
  "{{- '<<SYS>>\\n' + content + '\\n<</SYS>>\\n\\n' if ox_sys else content + '\\n' -}}\n" \
  "{%- elif message.role == 'user' -%}{{- content + ' [/INST]' -}}\n" \
  "{%- else -%}{{- content + '</s>' -}}{%- set ns.inside = false -%}\n" \
  "{%- endif -%}\n" \
  "{%- endfor -%}\n"

constexpr const char kLlama2[] =
    "{%- set ox_sys = false -%}{%- set ox_bos = false -%}{%- set ox_strip = false -%}" OX_LLAMA2_BODY;
constexpr const char kLlama2Sys[] =
    "{%- set ox_sys = true -%}{%- set ox_bos = false -%}{%- set ox_strip = false -%}" OX_LLAMA2_BODY;
constexpr const char kLlama2SysBos[] =
    "{%- set ox_sys = true -%}{%- set ox_bos = true -%}{%- set ox_strip = false -%}" OX_LLAMA2_BODY;
constexpr const char kLlama2SysStrip[] =
    "{%- set ox_sys = true -%}{%- set ox_bos = false -%}{%- set ox_strip = true -%}" OX_LLAMA2_BODY;

// Mistral's v1/v3/v3-tekken: the system text opens the next [INST]; ox_lead is v1's space before
// [INST] and [/INST], ox_trail the space after [INST] (none in tekken), v3 trims replies.
#define OX_MISTRAL_BODY OX_TEXT_MACRO \
  "{%- set ns = namespace(inside=false) -%}\n" \
  "{%- for message in messages -%}{%- set content = text(message.content) -%}\n" \
  "{%- if not ns.inside -%}{{- ox_lead + '[INST]' + ox_trail -}}{%- set ns.inside = true -%}{%- endif -%}\n" \
  "{%- if message.role == 'system' -%}{{- content + '\\n\\n' -}}\n" \
  "{%- elif message.role == 'user' -%}{{- content + ox_lead + '[/INST]' -}}\n" \
  "{%- else -%}{{- ox_trail + (content | trim if ox_trim else content) + '</s>' -}}{%- set ns.inside = false -%}\n" \
  "{%- endif -%}\n" \
  "{%- endfor -%}\n"

constexpr const char kMistralV1[] =
    "{%- set ox_lead = ' ' -%}{%- set ox_trail = ' ' -%}{%- set ox_trim = false -%}" OX_MISTRAL_BODY;
constexpr const char kMistralV3[] =
    "{%- set ox_lead = '' -%}{%- set ox_trail = ' ' -%}{%- set ox_trim = true -%}" OX_MISTRAL_BODY;
constexpr const char kMistralV3Tekken[] =
    "{%- set ox_lead = '' -%}{%- set ox_trail = '' -%}{%- set ox_trim = false -%}" OX_MISTRAL_BODY;

// Mistral v7: [SYSTEM_PROMPT] blocks; ox_sp is the space v7 writes after each opening (not tekken).
#define OX_MISTRAL_V7_BODY OX_TEXT_MACRO OX_FOR_MESSAGES \
  "{%- if role == 'system' -%}{{- '[SYSTEM_PROMPT]' + ox_sp + content + '[/SYSTEM_PROMPT]' -}}\n" \
  "{%- elif role == 'user' -%}{{- '[INST]' + ox_sp + content + '[/INST]' -}}\n" \
  "{%- else -%}{{- ox_sp + content + '</s>' -}}\n" \
  "{%- endif -%}\n" \
  "{%- endfor -%}\n"

constexpr const char kMistralV7[] = "{%- set ox_sp = ' ' -%}" OX_MISTRAL_V7_BODY;
constexpr const char kMistralV7Tekken[] = "{%- set ox_sp = '' -%}" OX_MISTRAL_V7_BODY;

constexpr const char kPhi3[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n' + content + '<|end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%})";

constexpr const char kPhi4[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|im_start|>' + role + '<|im_sep|>' + content + '<|im_end|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant<|im_sep|>' -}}{%- endif -%})";

constexpr const char kFalcon3[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n' + content + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%})";

constexpr const char kZephyr[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n' + content + '<|endoftext|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%})";

// AlphaMonarch: <s> opens every message but the first.
constexpr const char kMonarch[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- ('' if loop.first else '<s>') + role + '\n' + content + '</s>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<s>assistant\n' -}}{%- endif -%})";

// Gemma has no system role: system text (trimmed) opens the next user turn.
constexpr const char kGemma[] = OX_TEXT_MACRO R"(
{%- set ns = namespace(system='') -%}
)" OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{%- set ns.system = ns.system + content | trim -%}
{%- else -%}
{%- set role = 'model' if role == 'assistant' else role -%}
{{- '<start_of_turn>' + role + '\n' -}}
{%- if ns.system and role != 'model' -%}{{- ns.system + '\n\n' -}}{%- set ns.system = '' -%}{%- endif -%}
{{- content | trim + '<end_of_turn>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%})";

// Orion: system text opens the next user turn; the reply prompt is part of every user turn.
constexpr const char kOrion[] = OX_TEXT_MACRO R"(
{%- set ns = namespace(system='') -%}
)" OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{%- set ns.system = ns.system + content -%}
{%- elif role == 'user' -%}
{{- 'Human: ' -}}
{%- if ns.system -%}{{- ns.system + '\n\n' -}}{%- set ns.system = '' -%}{%- endif -%}
{{- content + '\n\nAssistant: </s>' -}}
{%- else -%}{{- content + '</s>' -}}
{%- endif -%}
{%- endfor -%})";

constexpr const char kOpenchat[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- content + '<|end_of_turn|>' -}}
{%- else -%}{{- 'GPT4 Correct ' + role[:1] | upper + role[1:] + ': ' + content + '<|end_of_turn|>' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'GPT4 Correct Assistant:' -}}{%- endif -%})";

// Vicuna 1.1 and the Orca variant (ox_orca: a "SYSTEM: " line).
#define OX_VICUNA_BODY OX_TEXT_MACRO OX_FOR_MESSAGES \
  "{%- if role == 'system' -%}{{- 'SYSTEM: ' + content + '\\n' if ox_orca else content + '\\n\\n' -}}\n" \
  "{%- elif role == 'user' -%}{{- 'USER: ' + content + '\\n' -}}\n" \
  "{%- elif role == 'assistant' -%}{{- 'ASSISTANT: ' + content + '</s>\\n' -}}\n" \
  "{%- endif -%}\n" \
  "{%- endfor -%}\n" \
  "{%- if add_generation_prompt -%}{{- 'ASSISTANT:' -}}{%- endif -%}\n"

constexpr const char kVicuna[] = "{%- set ox_orca = false -%}" OX_VICUNA_BODY;
constexpr const char kVicunaOrca[] = "{%- set ox_orca = true -%}" OX_VICUNA_BODY;

// deepseek-coder instruct.
constexpr const char kDeepseek[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- content -}}
{%- elif role == 'user' -%}{{- '### Instruction:\n' + content + '\n' -}}
{%- elif role == 'assistant' -%}{{- '### Response:\n' + content + '\n<|EOT|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '### Response:\n' -}}{%- endif -%})";

constexpr const char kDeepseek2[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- content + '\n\n' -}}
{%- elif role == 'user' -%}{{- 'User: ' + content + '\n\n' -}}
{%- elif role == 'assistant' -%}{{- 'Assistant: ' + content + '<｜end▁of▁sentence｜>' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'Assistant:' -}}{%- endif -%})";

constexpr const char kDeepseek3[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- content + '\n\n' -}}
{%- elif role == 'user' -%}{{- '<｜User｜>' + content -}}
{%- elif role == 'assistant' -%}{{- '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<｜Assistant｜>' -}}{%- endif -%})";

// DeepSeek-OCR: no markup at all.
constexpr const char kDeepseekOcr[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- content -}}
{%- endfor -%})";

constexpr const char kCommandR[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- set tag = {'system': 'SYSTEM', 'user': 'USER', 'assistant': 'CHATBOT'}.get(role) -%}
{%- if tag -%}{{- '<|START_OF_TURN_TOKEN|><|' + tag + '_TOKEN|>' + content | trim + '<|END_OF_TURN_TOKEN|>' -}}{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' -}}{%- endif -%})";

constexpr const char kLlama3[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|start_header_id|>' + role + '<|end_header_id|>\n\n' + content | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{%- endif -%})";

constexpr const char kChatglm3[] = OX_TEXT_MACRO "{{- '[gMASK]sop' -}}" OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n ' + content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>' -}}{%- endif -%})";

constexpr const char kChatglm4[] = OX_TEXT_MACRO "{{- '[gMASK]<sop>' -}}" OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n' + content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%})";

constexpr const char kGlmedge[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|' + role + '|>\n' + content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>' -}}{%- endif -%})";

// MiniCPM: <AI> after each user turn asks for the reply; other roles are bare text.
constexpr const char kMinicpm[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'user' -%}{{- '<用户>' + content | trim + '<AI>' -}}
{%- else -%}{{- content | trim -}}
{%- endif -%}
{%- endfor -%})";

// EXAONE 3 (system, user, assistant) and 4 (a tool role too); a user turn ends in a bare newline.
#define OX_EXAONE_BODY OX_TEXT_MACRO OX_FOR_MESSAGES \
  "{%- if role == 'user' -%}{{- '[|user|]' + content | trim + '\\n' -}}\n" \
  "{%- elif role in ox_roles -%}{{- '[|' + role + '|]' + content | trim + '[|endofturn|]\\n' -}}\n" \
  "{%- endif -%}\n" \
  "{%- endfor -%}\n" \
  "{%- if add_generation_prompt -%}{{- '[|assistant|]' -}}{%- endif -%}\n"

constexpr const char kExaone3[] = "{%- set ox_roles = ['system', 'assistant'] -%}" OX_EXAONE_BODY;
constexpr const char kExaone4[] = "{%- set ox_roles = ['system', 'assistant', 'tool'] -%}" OX_EXAONE_BODY;

constexpr const char kExaoneMoe[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role in ['system', 'user', 'assistant', 'tool'] -%}{{- '<|' + role + '|>\n' + content | trim + '<|endofturn|>\n' -}}{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%})";

// RWKV World: "\n\n" ends a turn; a last user turn asks for the reply itself.
constexpr const char kRwkvWorld[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- 'System: ' + content | trim + '\n\n' -}}
{%- elif role == 'user' -%}{{- 'User: ' + content | trim + '\n\n' -}}{%- if loop.last -%}{{- 'Assistant:' -}}{%- endif -%}
{%- elif role == 'assistant' -%}{{- 'Assistant: ' + content | trim + '\n\n' -}}
{%- endif -%}
{%- endfor -%})";

// Granite 3.x writes the assistant_tool_call role as it is; 4.0 and 4.1 as assistant.
constexpr const char kGranite3[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|start_of_role|>' + role + '<|end_of_role|>' -}}
{%- if role == 'assistant_tool_call' -%}{{- '<|tool_call|>' -}}{%- endif -%}
{{- content + '<|end_of_text|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_of_role|>assistant<|end_of_role|>' -}}{%- endif -%})";

constexpr const char kGranite4[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'assistant_tool_call' -%}{{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' -}}
{%- else -%}{{- '<|start_of_role|>' + role + '<|end_of_role|>' -}}
{%- endif -%}
{{- content + '<|end_of_text|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_of_role|>assistant<|end_of_role|>' -}}{%- endif -%})";

// GigaChat: a leading system message follows <s> directly; user turns list (no) functions.
constexpr const char kGigachat[] = OX_TEXT_MACRO R"(
{%- set has_system = messages | length > 0 and messages[0].role == 'system' -%}
{{- '<s>' + (text(messages[0].content) + '<|message_sep|>' if has_system else '') -}}
{%- for message in (messages[1:] if has_system else messages) -%}{%- set content = text(message.content) -%}
{%- if message.role == 'user' -%}
{{- 'user<|role_sep|>' + content + '<|message_sep|>available functions<|role_sep|>[]<|message_sep|>' -}}
{%- elif message.role == 'assistant' -%}{{- 'assistant<|role_sep|>' + content + '<|message_sep|>' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'assistant<|role_sep|>' -}}{%- endif -%})";

constexpr const char kMegrez[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|role_start|>' + role + '<|role_end|>' + content + '<|turn_end|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|role_start|>assistant<|role_end|>' -}}{%- endif -%})";

// YandexGPT: "\n\n" ends a turn; system messages are dropped.
constexpr const char kYandex[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'user' -%}{{- ' Пользователь: ' + content + '\n\n' -}}
{%- elif role == 'assistant' -%}{{- ' Ассистент: ' + content + '\n\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- ' Ассистент:[SEP]' -}}{%- endif -%})";

// Ling (Bailing): <role>HUMAN</role> for user, the role in capitals otherwise; bailing-think
// opens the reply with <think>, bailing2 ends turns with <|role_end|> and defaults a system turn.
#define OX_BAILING_ROLE "{%- set role = 'HUMAN' if role == 'user' else role | upper -%}"
constexpr const char kBailing[] = OX_TEXT_MACRO OX_FOR_MESSAGES OX_BAILING_ROLE R"(
{{- '<role>' + role + '</role>' + content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<role>ASSISTANT</role>' -}}{%- endif -%})";

constexpr const char kBailingThink[] = OX_TEXT_MACRO OX_FOR_MESSAGES OX_BAILING_ROLE R"(
{{- '<role>' + role + '</role>' + content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<role>ASSISTANT</role><think>' -}}{%- endif -%})";

constexpr const char kBailing2[] = OX_TEXT_MACRO R"(
{%- if not (messages | length > 0 and messages[0].role == 'system') -%}
{{- '<role>SYSTEM</role>detailed thinking off<|role_end|>' -}}
{%- endif -%}
)" OX_FOR_MESSAGES OX_BAILING_ROLE R"(
{{- '<role>' + role + '</role>' + content + '<|role_end|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<role>ASSISTANT</role>' -}}{%- endif -%})";

constexpr const char kLlama4[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|header_start|>' + role + '<|header_end|>\n\n' + content | trim + '<|eot|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|header_start|>assistant<|header_end|>\n\n' -}}{%- endif -%})";

// SmolVLM: <|im_start|> is its BOS, written once; the turns are not chatml.
constexpr const char kSmolvlm[] = OX_TEXT_MACRO "{{- '<|im_start|>' -}}" OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- content + '\n\n' -}}
{%- elif role == 'user' -%}{{- 'User: ' + content + '<end_of_utterance>\n' -}}
{%- else -%}{{- 'Assistant: ' + content + '<end_of_utterance>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'Assistant:' -}}{%- endif -%})";

// Hunyuan-A13B: the reply follows a user turn's <|extra_0|> directly.
constexpr const char kHunyuanMoe[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- '<|startoftext|>' + content + '<|extra_4|>' -}}
{%- elif role == 'assistant' -%}{{- content + '<|eos|>' -}}
{%- else -%}{{- '<|startoftext|>' + content + '<|extra_0|>' -}}
{%- endif -%}
{%- endfor -%})";

// gpt-oss (Harmony, without channels): replies end in <|return|>, other turns in <|end|>.
constexpr const char kGptOss[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|start|>' + role + '<|message|>' + content + ('<|return|>' if role == 'assistant' else '<|end|>') -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start|>assistant' -}}{%- endif -%})";

// Hunyuan dense: only a first system message is written; a user turn asks for the reply.
constexpr const char kHunyuanDense[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if loop.first and role == 'system' -%}{{- content + '<｜hy_place▁holder▁no▁3｜>' -}}{%- endif -%}
{%- if role == 'assistant' -%}{{- '<｜hy_Assistant｜>' + content + '<｜hy_place▁holder▁no▁2｜>' -}}
{%- elif role == 'user' -%}{{- '<｜hy_User｜>' + content + '<｜hy_Assistant｜>' -}}
{%- endif -%}
{%- endfor -%})";

constexpr const char kHunyuanVl[] = OX_TEXT_MACRO "{{- '<｜hy_begin▁of▁sentence｜>' -}}" OX_FOR_MESSAGES R"(
{%- if loop.first and role == 'system' -%}{{- content + '<｜hy_place▁holder▁no▁3｜>' -}}
{%- elif role == 'user' -%}{{- content + '<｜hy_User｜>' -}}
{%- elif role == 'assistant' -%}{{- content + '<｜hy_Assistant｜>' -}}
{%- endif -%}
{%- endfor -%})";

constexpr const char kKimiK2[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- '<|im_system|>system<|im_middle|>' -}}
{%- elif role == 'user' -%}{{- '<|im_user|>user<|im_middle|>' -}}
{%- elif role == 'assistant' -%}{{- '<|im_assistant|>assistant<|im_middle|>' -}}
{%- elif role == 'tool' -%}{{- '<|im_system|>tool<|im_middle|>' -}}
{%- endif -%}
{{- content + '<|im_end|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_assistant|>assistant<|im_middle|>' -}}{%- endif -%})";

constexpr const char kSeedOss[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<seed:bos>' + role + '\n' + (content | trim if role == 'assistant' else content) + '<seed:eos>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<seed:bos>assistant\n' -}}{%- endif -%})";

constexpr const char kGrok2[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if role == 'system' -%}{{- 'System: ' + content | trim + '<|separator|>\n\n' -}}
{%- elif role == 'user' -%}{{- 'Human: ' + content | trim + '<|separator|>\n\n' -}}
{%- elif role == 'assistant' -%}{{- 'Assistant: ' + content + '<|separator|>\n\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'Assistant:' -}}{%- endif -%})";

// openPangu-Embedded: an empty system turn when the conversation starts without one.
constexpr const char kPanguEmbedded[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{%- if loop.first and role != 'system' -%}{{- '[unused9]系统：[unused10]' -}}{%- endif -%}
{%- set label = {'system': '系统', 'user': '用户', 'assistant': '助手', 'tool': '工具', 'function': '方法'}.get(role) -%}
{%- if label -%}{{- '[unused9]' + label + '：' + content + '[unused10]' -}}{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '[unused9]助手：' -}}{%- endif -%})";

constexpr const char kSolarOpen[] = OX_TEXT_MACRO OX_FOR_MESSAGES R"(
{{- '<|begin|>' + role + '<|content|>' + content + '<|end|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|begin|>assistant' -}}{%- endif -%})";

// In llama.cpp's LLM_CHAT_TEMPLATES order.
constexpr BuiltinTemplate kBuiltins[] = {
    {"chatml", kChatml, "ChatML: Qwen, Yi, SmolLM, OLMo 2, OpenHermes and most fine-tunes"},
    {"llama2", kLlama2, "Llama 2 chat without a system role, Mistral 7B Instruct v0.1/v0.2's own template"},
    {"llama2-sys", kLlama2Sys, "Llama 2 chat with <<SYS>>"},
    {"llama2-sys-bos", kLlama2SysBos, "Llama 2 chat with <<SYS>> and <s> before each later [INST]"},
    {"llama2-sys-strip", kLlama2SysStrip, "Llama 2 chat with <<SYS>>, messages trimmed"},
    {"mistral-v1", kMistralV1, "Mistral 7B Instruct v0.1/v0.2, Mixtral 8x7B"},
    {"mistral-v3", kMistralV3, "Mistral 7B v0.3, Mixtral 8x22B, Mistral Large 2407"},
    {"mistral-v3-tekken", kMistralV3Tekken, "Mistral Nemo, Pixtral 12B"},
    {"mistral-v7", kMistralV7, "Mistral Large 2411"},
    {"mistral-v7-tekken", kMistralV7Tekken, "Mistral Small 3.x"},
    {"phi3", kPhi3, "Phi-3, Phi-3.5"},
    {"phi4", kPhi4, "Phi-4"},
    {"falcon3", kFalcon3, "Falcon 3"},
    {"zephyr", kZephyr, "Zephyr"},
    {"monarch", kMonarch, "AlphaMonarch"},
    {"gemma", kGemma, "Gemma 1/2/3"},
    {"orion", kOrion, "Orion"},
    {"openchat", kOpenchat, "OpenChat 3.5"},
    {"vicuna", kVicuna, "Vicuna 1.1"},
    {"vicuna-orca", kVicunaOrca, "Orca-Vicuna"},
    {"deepseek", kDeepseek, "DeepSeek Coder instruct"},
    {"deepseek2", kDeepseek2, "DeepSeek LLM chat, DeepSeek V2"},
    {"deepseek3", kDeepseek3, "DeepSeek V3, R1"},
    {"deepseek-ocr", kDeepseekOcr, "DeepSeek-OCR (no markup)"},
    {"command-r", kCommandR, "Command R, Command R+, Command A"},
    {"llama3", kLlama3, "Llama 3, 3.1, 3.2, 3.3"},
    {"chatglm3", kChatglm3, "ChatGLM3"},
    {"chatglm4", kChatglm4, "GLM-4, ChatGLM4"},
    {"glmedge", kGlmedge, "GLM-Edge"},
    {"minicpm", kMinicpm, "MiniCPM"},
    {"exaone3", kExaone3, "EXAONE 3.0, 3.5"},
    {"exaone4", kExaone4, "EXAONE 4.0"},
    {"exaone-moe", kExaoneMoe, "EXAONE MoE"},
    {"rwkv-world", kRwkvWorld, "RWKV World"},
    {"granite", kGranite3, "Granite 3.x"},
    {"granite-4.0", kGranite4, "Granite 4.0"},
    {"granite-4.1", kGranite4, "Granite 4.1"},
    {"gigachat", kGigachat, "GigaChat"},
    {"megrez", kMegrez, "Megrez"},
    {"yandex", kYandex, "YandexGPT"},
    {"bailing", kBailing, "Ling (Bailing)"},
    {"bailing-think", kBailingThink, "Ring (Bailing, thinking)"},
    {"bailing2", kBailing2, "Ling 2.0"},
    {"llama4", kLlama4, "Llama 4"},
    {"smolvlm", kSmolvlm, "SmolVLM"},
    {"hunyuan-moe", kHunyuanMoe, "Hunyuan-A13B"},
    {"gpt-oss", kGptOss, "gpt-oss (Harmony)"},
    {"hunyuan-dense", kHunyuanDense, "Hunyuan dense (0.5B-7B)"},
    {"hunyuan-vl", kHunyuanVl, "HunyuanOCR, Hunyuan-VL"},
    {"kimi-k2", kKimiK2, "Kimi K2"},
    {"seed_oss", kSeedOss, "Seed-OSS"},
    {"grok-2", kGrok2, "Grok 2"},
    {"pangu-embedded", kPanguEmbedded, "openPangu-Embedded"},
    {"solar-open", kSolarOpen, "Solar Open"},
};

constexpr BuiltinAlias kAliases[] = {
    {"llama-2", "llama2"}, {"llama-3", "llama3"}, {"phi-3", "phi3"}, {"mistral", "mistral-v1"},
};

}  // namespace

std::span<const BuiltinTemplate> builtin_templates() { return kBuiltins; }
std::span<const BuiltinAlias> builtin_template_aliases() { return kAliases; }

const BuiltinTemplate* find_builtin_template(std::string_view name) {
  for (const BuiltinAlias& a : kAliases) {
    if (a.alias == name) name = a.name;
  }
  for (const BuiltinTemplate& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string_view builtin_template(std::string_view name) {
  const BuiltinTemplate* b = find_builtin_template(name);
  return b != nullptr ? b->source : std::string_view();
}

std::vector<std::string_view> builtin_template_names() {
  std::vector<std::string_view> names;
  for (const BuiltinTemplate& b : kBuiltins) names.push_back(b.name);
  return names;
}

std::string builtin_template_list() {
  std::string out;
  for (const BuiltinTemplate& b : kBuiltins) {
    if (!out.empty()) out += ", ";
    out += b.name;
  }
  return out;
}

}  // namespace ox::chat
