// Which built-in format a template or a model is: detect_template_name follows llama.cpp's
// llm_chat_detect_template (the same marker strings, in the same order); guess_template covers
// GGUF files without tokenizer.chat_template.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "core/chat/builtin_templates.h"

namespace ox::chat {
namespace {

// One llama.cpp detection rule: every string of `all` is in the template. Rules are tried in
// order; the first that holds names the format.
struct DetectRule {
  std::string_view all[4];  // unused entries empty
  std::string_view name;
};

// After "<|im_start|>" and the [INST] family, which need more than a list (see below).
const DetectRule kDetectRules[] = {
    {{"<|assistant|>", "<|end|>"}, "phi3"},
    {{"[gMASK]<sop>"}, "chatglm4"},
    {{"<|assistant|>", "<|user|>", "<|tool_declare|>"}, "exaone-moe"},
    {{"<|assistant|>", "<|user|>", "</s>"}, "falcon3"},
    {{"<|assistant|>", "<|user|>"}, "glmedge"},
    {{"<|{{ item['role'] }}|>", "<|begin_of_image|>"}, "glmedge"},
    {{"<|user|>", "<|endoftext|>"}, "zephyr"},
    {{"bos_token + message['role']"}, "monarch"},
    {{"<start_of_turn>"}, "gemma"},
    {{"'\\n\\nAssistant: ' + eos_token"}, "orion"},
    {{"GPT4 Correct "}, "openchat"},
    {{"USER: ", "ASSISTANT: ", "SYSTEM: "}, "vicuna-orca"},
    {{"USER: ", "ASSISTANT: "}, "vicuna"},
    {{"### Instruction:", "<|EOT|>"}, "deepseek"},
    {{"<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"}, "command-r"},
    {{"<|start_header_id|>", "<|end_header_id|>"}, "llama3"},
    {{"[gMASK]sop"}, "chatglm3"},
    {{"<用户>"}, "minicpm"},
    {{"'Assistant: ' + message['content'] + eos_token"}, "deepseek2"},
    {{"<｜Assistant｜>", "<｜User｜>", "<｜end▁of▁sentence｜>"}, "deepseek3"},
    {{"[|system|]", "[|assistant|]", "[|endofturn|]", "[|tool|]"}, "exaone4"},
    {{"[|system|]", "[|assistant|]", "[|endofturn|]"}, "exaone3"},
    {{"rwkv-world"}, "rwkv-world"},
    {{"{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"}, "rwkv-world"},
    {{"<|start_of_role|>", "<tool_call>", "g4_default_system_message"}, "granite-4.0"},
    {{"<|start_of_role|>", "<tools>", "g4_default_system_message"}, "granite-4.0"},
    {{"<|start_of_role|>", "<tool_call>"}, "granite-4.1"},
    {{"<|start_of_role|>", "<tools>"}, "granite-4.1"},
    {{"<|start_of_role|>"}, "granite"},
    {{"message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"},
     "gigachat"},
    {{"<|role_start|>"}, "megrez"},
    {{" Ассистент:"}, "yandex"},
    {{"<role>ASSISTANT</role>", "'HUMAN'"}, "bailing"},
    {{"<role>ASSISTANT</role>", "\"HUMAN\"", "<think>"}, "bailing-think"},
    {{"<role>ASSISTANT</role>", "<role>HUMAN</role>", "<|role_end|>"}, "bailing2"},
    {{"<|header_start|>", "<|header_end|>"}, "llama4"},
    {{"<|endofuserprompt|>"}, ""},  // dots.llm1: llama.cpp formats it but gives it no name
    {{"<|extra_0|>", "<|extra_4|>"}, "hunyuan-moe"},
    {{"<|start|>", "<|channel|>"}, "gpt-oss"},
    {{"<｜hy_Assistant｜>", "<｜hy_begin▁of▁sentence｜>"}, "hunyuan-vl"},
    {{"<｜hy_Assistant｜>", "<｜hy_place▁holder▁no▁3｜>"}, "hunyuan-dense"},
    {{"<|im_assistant|>assistant<|im_middle|>"}, "kimi-k2"},
    {{"<seed:bos>"}, "seed_oss"},
    {{"'Assistant: '  + message['content'] + '<|separator|>"}, "grok-2"},
    {{"[unused9]系统：[unused10]"}, "pangu-embedded"},
    {{"<|begin|>", "<|end|>", "<|content|>"}, "solar-open"},
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Mistral's official templates and Llama 2's variants, all of which hold "[INST]".
std::string_view detect_inst(std::string_view t) {
  if (contains(t, "[SYSTEM_PROMPT]")) return "mistral-v7";
  if (contains(t, "' [INST] ' + system_message") || contains(t, "[AVAILABLE_TOOLS]")) {
    if (contains(t, " [INST]")) return "mistral-v1";
    if (contains(t, "\"[INST]\"")) return "mistral-v3-tekken";
    return "mistral-v3";
  }
  if (contains(t, "content.strip()")) return "llama2-sys-strip";
  if (contains(t, "bos_token + '[INST]")) return "llama2-sys-bos";
  if (contains(t, "<<SYS>>")) return "llama2-sys";
  return "llama2";
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A special token whose presence names the format (tried in order: the more specific first).
struct TokenRule {
  std::string_view tokens[2];  // each (the non-empty ones) a special token of the vocabulary
  std::string_view name;
};
const TokenRule kTokenRules[] = {
    {{"<|im_start|>", "<|im_sep|>"}, "phi4"},
    {{"<|im_start|>", "<end_of_utterance>"}, "smolvlm"},
    {{"<|im_assistant|>", "<|im_middle|>"}, "kimi-k2"},
    {{"<|im_start|>"}, "chatml"},
    {{"<|header_start|>", "<|header_end|>"}, "llama4"},
    {{"<|start_header_id|>"}, "llama3"},
    {{"<|eot_id|>"}, "llama3"},
    {{"<start_of_turn>"}, "gemma"},
    {{"<|start_of_role|>"}, "granite"},
    {{"<|START_OF_TURN_TOKEN|>"}, "command-r"},
    {{"<|start|>", "<|channel|>"}, "gpt-oss"},
    {{"<seed:bos>"}, "seed_oss"},
    {{"<｜User｜>", "<｜Assistant｜>"}, "deepseek3"},
    {{"<｜hy_User｜>", "<｜hy_Assistant｜>"}, "hunyuan-dense"},
    {{"[SYSTEM_PROMPT]"}, "mistral-v7"},
    {{"<|assistant|>", "<|end|>"}, "phi3"},
    {{"[gMASK]", "<sop>"}, "chatglm4"},
    {{"<|role_start|>"}, "megrez"},
    {{"<|message_sep|>", "<|role_sep|>"}, "gigachat"},
    {{"<|EOT|>"}, "deepseek"},
};

// general.name substrings (lower case) for formats whose architecture is shared with others.
struct NameRule {
  std::string_view part;
  std::string_view name;
};
const NameRule kNameRules[] = {
    {"kimi-k2", "kimi-k2"},      {"kimi k2", "kimi-k2"},     {"deepseek-v3", "deepseek3"},
    {"deepseek v3", "deepseek3"}, {"deepseek-r1", "deepseek3"}, {"deepseek r1", "deepseek3"},
    {"phi-4", "phi4"},           {"phi4", "phi4"},           {"falcon3", "falcon3"},
    {"falcon-3", "falcon3"},     {"zephyr", "zephyr"},       {"openchat", "openchat"},
    {"vicuna", "vicuna"},        {"yandexgpt", "yandex"},    {"gigachat", "gigachat"},
    {"megrez", "megrez"},        {"smolvlm", "smolvlm"},     {"deepseek-coder", "deepseek"},
    {"mistral", "mistral-v1"},   {"mixtral", "mistral-v1"},
};

// general.architecture (exact, or a prefix ending in '*') to format.
struct ArchRule {
  std::string_view arch;
  std::string_view name;
};
const ArchRule kArchRules[] = {
    {"llama4", "llama4"},         {"command-r", "command-r"},   {"cohere2", "command-r"},
    {"exaone", "exaone3"},        {"exaone4", "exaone4"},       {"exaone-moe", "exaone-moe"},
    {"granite*", "granite"},      {"glm4*", "chatglm4"},        {"chatglm", "chatglm4"},
    {"minicpm*", "minicpm"},      {"orion", "orion"},           {"deepseek2", "deepseek2"},
    {"deepseek", "deepseek2"},    {"gpt-oss", "gpt-oss"},       {"hunyuan-moe", "hunyuan-moe"},
    {"hunyuan-dense", "hunyuan-dense"}, {"seed_oss", "seed_oss"}, {"phi3", "phi3"},
    {"phimoe", "phi3"},           {"gemma*", "gemma"},          {"bailingmoe2", "bailing2"},
    {"bailingmoe", "bailing"},    {"grok", "grok-2"},           {"pangu-embedded", "pangu-embedded"},
    {"rwkv*", "rwkv-world"},      {"smollm3", "chatml"},        {"qwen*", "chatml"},
    {"olmo2", "chatml"},          {"llama", "llama2"},
};

bool arch_matches(std::string_view pattern, std::string_view arch) {
  if (pattern.empty() || pattern.back() != '*') return pattern == arch;
  pattern.remove_suffix(1);
  return arch.substr(0, pattern.size()) == pattern;
}

}  // namespace

std::string_view detect_template_name(std::string_view t) {
  if (find_builtin_template(t) != nullptr) return find_builtin_template(t)->name;  // llama.cpp takes a name too
  if (contains(t, "<|im_start|>")) {
    if (contains(t, "<|im_sep|>")) return "phi4";
    return contains(t, "<end_of_utterance>") ? "smolvlm" : "chatml";
  }
  if (t.substr(0, 7) == "mistral" || contains(t, "[INST]")) return detect_inst(t);
  for (const DetectRule& r : kDetectRules) {
    if (std::all_of(std::begin(r.all), std::end(r.all), [&](std::string_view s) { return contains(t, s); })) {
      return r.name;
    }
  }
  return {};
}

TemplateGuess guess_template(const ModelFacts& f) {
  // llama.cpp's one fallback rule (llama_model_chat_template): Mistral Small 2503 ships without a template.
  if (f.pre == "tekken" && f.n_layer == 40) {
    return {"mistral-v7-tekken", "a tekken vocabulary with 40 layers (Mistral Small 3)"};
  }
  if (f.has_token) {
    for (const TokenRule& r : kTokenRules) {
      auto has = [&](std::string_view s) { return s.empty() || f.has_token(s); };
      if (std::all_of(std::begin(r.tokens), std::end(r.tokens), has)) {
        return {r.name, "the vocabulary's " + std::string(r.tokens[0]) + " token"};
      }
    }
    if (f.has_token("[INST]")) {
      if (f.pre == "tekken") return {"mistral-v3-tekken", "the vocabulary's [INST] token (tekken)"};
      return {"mistral-v3", "the vocabulary's [INST] token"};
    }
  }
  const std::string name = lower(f.name);
  for (const NameRule& r : kNameRules) {
    if (contains(name, r.part)) return {r.name, "general.name = " + std::string(f.name)};
  }
  for (const ArchRule& r : kArchRules) {
    if (arch_matches(r.arch, f.arch)) return {r.name, "general.architecture = " + std::string(f.arch)};
  }
  return {"chatml", ""};  // llama.cpp's default
}

std::string_view guess_template_name_by(std::string_view arch, const std::function<bool(std::string_view)>& has) {
  ModelFacts facts;
  facts.arch = arch;
  facts.has_token = has;
  return guess_template(facts).name;
}

std::string_view guess_template_name(std::string_view arch, const std::vector<std::string>& tokens) {
  return guess_template_name_by(arch, [&](std::string_view t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  });
}

}  // namespace ox::chat
