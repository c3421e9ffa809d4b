// The built-in chat templates: one table of the prompt formats llama.cpp knows by name (its
// LLM_CHAT_TEMPLATES), each written as a Jinja template for this engine, plus recognising which
// of them a model's own template is and guessing one for a model that has none.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ox::chat {

struct BuiltinTemplate {
  std::string_view name;    // llama.cpp's name ("chatml", "llama3", "mistral-v7", ...)
  std::string_view source;  // Jinja; renders like llama.cpp's llm_chat_apply_template
  std::string_view family;  // models that use it, for --help texts and docs
};

// Old oxidize names kept working: "llama-2" -> "llama2", "llama-3" -> "llama3", "phi-3" -> "phi3",
// "mistral" -> "mistral-v1".
struct BuiltinAlias {
  std::string_view alias;
  std::string_view name;
};

// The whole registry, in table order; everything else iterates it.
std::span<const BuiltinTemplate> builtin_templates();
std::span<const BuiltinAlias> builtin_template_aliases();
// A built-in by name or alias; nullptr if there is none.
const BuiltinTemplate* find_builtin_template(std::string_view name);
// Its Jinja source (empty view if unknown) and the registry's names (aliases not included).
std::string_view builtin_template(std::string_view name);
std::vector<std::string_view> builtin_template_names();
// "chatml, llama2, ..." for error messages.
std::string builtin_template_list();

// Which built-in format a model's Jinja template is, by llama.cpp's llm_chat_detect_template
// heuristics (marker strings the published templates contain); "" when none matches (a custom
// template, or one llama.cpp knows only without a name).
std::string_view detect_template_name(std::string_view source);

// What a model without tokenizer.chat_template tells about its format.
struct ModelFacts {
  std::string_view arch;       // general.architecture
  std::string_view name;       // general.name
  std::string_view pre;        // tokenizer.ggml.pre
  int64_t n_layer = 0;         // <arch>.block_count
  std::function<bool(std::string_view)> has_token;  // is this text one special token of the vocabulary
};

struct TemplateGuess {
  std::string_view name;  // a registry name, never empty (chatml when nothing matched, as llama.cpp)
  std::string reason;     // "the vocabulary's <|im_start|> token", "general.architecture = gemma2", ...;
                          // empty for the default
};

// llama.cpp's own rule first (a tekken vocabulary with 40 layers is Mistral Small 3: mistral-v7-tekken),
// then the vocabulary's marker tokens, then general.name and general.architecture, then chatml.
TemplateGuess guess_template(const ModelFacts& facts);

// Shorthands: the guessed name from an architecture and a list (or predicate) of special tokens.
std::string_view guess_template_name(std::string_view model_arch, const std::vector<std::string>& special_tokens);
std::string_view guess_template_name_by(std::string_view model_arch, const std::function<bool(std::string_view)>& has_token);

}  // namespace ox::chat
