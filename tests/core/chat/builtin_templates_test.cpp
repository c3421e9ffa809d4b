// The built-in templates render what llama.cpp's formatter writes (its own test's expected
// strings, llama_cpp_chat_cases.h), detect_template_name recognises the templates llama.cpp's test
// and the real ones in shared/templates hold, and the guess picks a family from a model's facts.
#include <gtest/gtest.h>

#include <set>

#include "core/chat/template.h"
#include "tests/core/chat/llama_cpp_chat_cases.h"
#include "tests/support/shared_data.h"

namespace ox::chat {
namespace {

using test::LlamaCppMessage;

template <size_t N>
void append(nlohmann::json* messages, const LlamaCppMessage (&list)[N]) {
  for (const LlamaCppMessage& m : list) messages->push_back({{"role", m.role}, {"content", m.content}});
}

nlohmann::json conversation(const test::LlamaCppCase& c) {
  nlohmann::json messages = nlohmann::json::array();
  append(&messages, test::kLlamaCppConversation);
  if (c.tool_call) {
    const bool g4 = std::string_view(c.name).starts_with("granite-4");
    if (g4) append(&messages, test::kLlamaCppToolCallG4);
    else append(&messages, test::kLlamaCppToolCall);
  }
  return messages;
}

std::string render(std::string_view name, const nlohmann::json& messages, bool add_generation_prompt = true) {
  const std::string_view source = builtin_template(name);
  if (source.empty()) return "NO SUCH BUILTIN";
  // llama.cpp's formatter writes no BOS and literal end-of-turn texts; bos/eos are never used.
  Result<std::string> r = apply_chat_template(source, messages, add_generation_prompt, "<BOS>", "<EOS>");
  return r.ok() ? *r : "ERROR: " + r.status().message();
}

TEST(BuiltinTemplates, RenderWhatLlamaCppWrites) {
  static_assert(std::size(test::kLlamaCppCases) == 36, "every case of llama.cpp's test");
  for (const test::LlamaCppCase& c : test::kLlamaCppCases) {
    EXPECT_EQ(render(c.name, conversation(c)), c.expected) << c.name << " (llama.cpp case " << c.label << ")";
  }
}

TEST(BuiltinTemplates, DetectLlamaCppTestTemplates) {
  for (const test::LlamaCppCase& c : test::kLlamaCppCases) {
    EXPECT_EQ(detect_template_name(c.template_str), c.name) << c.label;
  }
  EXPECT_EQ(detect_template_name("{{ messages }}"), "");
  EXPECT_EQ(detect_template_name(""), "");
  EXPECT_EQ(detect_template_name("llama3"), "llama3");  // a name is itself, as in llama.cpp
}

// Real Hugging Face templates (shared/templates) and the format llama.cpp's heuristics give each;
// "" where llama.cpp has no rule (Gemma 4's new markup).
TEST(BuiltinTemplates, DetectRealTemplates) {
  const std::pair<const char*, const char*> cases[] = {
      {"CohereForAI-c4ai-command-r-plus-tool_use.jinja", "command-r"},
      {"GLM-4.6.jinja", "chatglm4"},
      {"HuggingFaceTB-SmolLM3-3B.jinja", "chatml"},
      {"LFM2.5-Instruct.jinja", "chatml"},
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "chatml"},
      {"Qwen-Qwen2.5-7B-Instruct.jinja", "chatml"},
      {"Qwen-Qwen3-0.6B.jinja", "chatml"},
      {"Qwen3-Coder.jinja", "chatml"},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek3"},
      {"google-gemma-2-2b-it.jinja", "gemma"},
      {"google-gemma-4-31B-it.jinja", ""},
      {"ibm-granite-granite-3.3-2B-Instruct.jinja", "granite"},
      {"meetkai-functionary-medium-v3.2.jinja", "llama3"},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3"},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3"},
      {"microsoft-Phi-3.5-mini-instruct.jinja", "phi3"},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken"},
      {"moonshotai-Kimi-K2.jinja", "kimi-k2"},
      {"openai-gpt-oss-120b.jinja", "gpt-oss"},
      {"openbmb-MiniCPM5-1B.jinja", "chatml"},
  };
  for (const auto& [file, name] : cases) {
    const std::string path = ox::test::shared_path(std::string("templates/") + file);
    if (!ox::test::file_exists(path)) GTEST_SKIP() << path << " is missing (set OXIDIZE_SHARED)";
    const std::vector<uint8_t> bytes = ox::test::read_file_bytes(path);
    const std::string source(bytes.begin(), bytes.end());
    EXPECT_EQ(detect_template_name(source), name) << file;
  }
}

// Hand-derived from llama.cpp's llm_chat_apply_template for the formats its test has no case for
// (same conversation, generation prompt on). Not an independent reference: it checks the Jinja
// against a reading of that C++, line by line.
struct Derived {
  const char* name;
  const char* expected;
};
const Derived kDerived[] = {
    {"llama2-sys",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am "
     "an assistant   </s>[INST] Another question [/INST]"},
    {"mistral-v7-tekken",
     "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello[/INST]Hi there</s>[INST]Who are you[/INST]   I "
     "am an assistant   </s>[INST]Another question[/INST]"},
    {"falcon3",
     "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nWho are "
     "you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother question\n<|assistant|>\n"},
    {"zephyr",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi "
     "there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   "
     "<|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n"},
    {"deepseek3",
     "You are a helpful assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence｜><｜User｜>Who are "
     "you<｜Assistant｜>   I am an assistant   <｜end▁of▁sentence｜><｜User｜>Another question<｜Assistant｜>"},
    {"exaone3",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who "
     "are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"llama4",
     "<|header_start|>system<|header_end|>\n\nYou are a helpful assistant<|eot|><|header_start|>user<|header_end|>\n\nHello"
     "<|eot|><|header_start|>assistant<|header_end|>\n\nHi there<|eot|><|header_start|>user<|header_end|>\n\nWho are "
     "you<|eot|><|header_start|>assistant<|header_end|>\n\nI am an assistant<|eot|><|header_start|>user<|header_end|>\n\n"
     "Another question<|eot|><|header_start|>assistant<|header_end|>\n\n"},
    {"smolvlm",
     "<|im_start|>You are a helpful assistant\n\nUser: Hello<end_of_utterance>\nAssistant: Hi "
     "there<end_of_utterance>\nUser: Who are you<end_of_utterance>\nAssistant:    I am an assistant   "
     "<end_of_utterance>\nUser: Another question<end_of_utterance>\nAssistant:"},
    {"gpt-oss",
     "<|start|>system<|message|>You are a helpful assistant<|end|><|start|>user<|message|>Hello<|end|><|start|>assistant"
     "<|message|>Hi there<|return|><|start|>user<|message|>Who are you<|end|><|start|>assistant<|message|>   I am an "
     "assistant   <|return|><|start|>user<|message|>Another question<|end|><|start|>assistant"},
    {"kimi-k2",
     "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>user<|im_middle|>Hello<|im_end|>"
     "<|im_assistant|>assistant<|im_middle|>Hi there<|im_end|><|im_user|>user<|im_middle|>Who are you<|im_end|>"
     "<|im_assistant|>assistant<|im_middle|>   I am an assistant   <|im_end|><|im_user|>user<|im_middle|>Another "
     "question<|im_end|><|im_assistant|>assistant<|im_middle|>"},
    {"hunyuan-moe",
     "<|startoftext|>You are a helpful assistant<|extra_4|><|startoftext|>Hello<|extra_0|>Hi there<|eos|><|startoftext|>"
     "Who are you<|extra_0|>   I am an assistant   <|eos|><|startoftext|>Another question<|extra_0|>"},
    {"hunyuan-dense",
     "You are a helpful assistant<｜hy_place▁holder▁no▁3｜><｜hy_User｜>Hello<｜hy_Assistant｜><｜hy_Assistant｜>Hi "
     "there<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Who are you<｜hy_Assistant｜><｜hy_Assistant｜>   I am an assistant   "
     "<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Another question<｜hy_Assistant｜>"},
    {"bailing2",
     "<role>SYSTEM</role>You are a helpful assistant<|role_end|><role>HUMAN</role>Hello<|role_end|><role>ASSISTANT</role>Hi "
     "there<|role_end|><role>HUMAN</role>Who are you<|role_end|><role>ASSISTANT</role>   I am an assistant   "
     "<|role_end|><role>HUMAN</role>Another question<|role_end|><role>ASSISTANT</role>"},
    {"rwkv-world",
     "System: You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there\n\nUser: Who are you\n\nAssistant: I am an "
     "assistant\n\nUser: Another question\n\nAssistant:"},
    {"grok-2",
     "System: You are a helpful assistant<|separator|>\n\nHuman: Hello<|separator|>\n\nAssistant: Hi "
     "there<|separator|>\n\nHuman: Who are you<|separator|>\n\nAssistant:    I am an assistant   <|separator|>\n\nHuman: "
     "Another question<|separator|>\n\nAssistant:"},
    {"solar-open",
     "<|begin|>system<|content|>You are a helpful assistant<|end|><|begin|>user<|content|>Hello<|end|><|begin|>assistant"
     "<|content|>Hi there<|end|><|begin|>user<|content|>Who are you<|end|><|begin|>assistant<|content|>   I am an "
     "assistant   <|end|><|begin|>user<|content|>Another question<|end|><|begin|>assistant"},
};

TEST(BuiltinTemplates, RenderLlamaCppFormatsItsTestLacks) {
  nlohmann::json messages = nlohmann::json::array();
  append(&messages, test::kLlamaCppConversation);
  for (const Derived& d : kDerived) EXPECT_EQ(render(d.name, messages), d.expected) << d.name;
}

// llama-server logs the built-in format it chose as a chat_example of a fixed conversation; this one
// is deepseek3's, as logged by llama.cpp servers ("chat template | ... chat_example=... built_in=true").
TEST(BuiltinTemplates, Deepseek3AsLlamaServerLogsIt) {
  const nlohmann::json messages = nlohmann::json::parse(R"([
    {"role": "system", "content": "You are a helpful assistant"}, {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "How are you?"}])");
  EXPECT_EQ(render("deepseek3", messages),
            "You are a helpful assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi there<｜end▁of▁sentence｜><｜User｜>How are "
            "you?<｜Assistant｜>");
}

TEST(BuiltinTemplates, EveryBuiltinParsesRendersAndIsFoundByName) {
  std::set<std::string_view> names;
  nlohmann::json messages = nlohmann::json::array();
  append(&messages, test::kLlamaCppConversation);
  for (const BuiltinTemplate& b : builtin_templates()) {
    EXPECT_TRUE(names.insert(b.name).second) << "duplicate " << b.name;
    EXPECT_FALSE(b.family.empty()) << b.name;
    EXPECT_EQ(detect_template_name(b.name), b.name);
    const std::string out = render(b.name, messages);
    EXPECT_FALSE(out.starts_with("ERROR")) << b.name << ": " << out;
    EXPECT_NE(out.find("Another question"), std::string::npos) << b.name;
    EXPECT_EQ(render(b.name, nlohmann::json::array(), true).starts_with("ERROR"), false) << b.name << " (no messages)";
  }
  EXPECT_GE(names.size(), 50u);
  for (const BuiltinAlias& a : builtin_template_aliases()) {
    EXPECT_EQ(builtin_template(a.alias), builtin_template(a.name)) << a.alias;
    EXPECT_FALSE(builtin_template(a.name).empty()) << a.alias;
  }
  EXPECT_TRUE(builtin_template("nonexistent").empty());
  EXPECT_NE(builtin_template_list().find("chatml, llama2, llama2-sys"), std::string::npos);
}

TEST(BuiltinTemplates, ContentPartsAndGenerationPrompt) {
  const nlohmann::json parts = nlohmann::json::parse(
      R"([{"role": "user", "content": [{"type": "text", "text": "By"}, {"type": "image"}, {"type": "text", "text": "e"}]}])");
  EXPECT_EQ(render("chatml", parts), "<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("chatml", parts, false), "<|im_start|>user\nBye<|im_end|>\n");
  EXPECT_EQ(render("phi-3", parts, false), "<|user|>\nBye<|end|>\n");
  EXPECT_EQ(render("llama2", parts, false), render("llama2", parts, true));  // [/INST] already asks for a reply
}

TEST(BuiltinTemplates, GuessFromTokensThenNameThenArchitecture) {
  EXPECT_EQ(guess_template_name("qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}), "chatml");
  EXPECT_EQ(guess_template_name("phi3", {"<|im_start|>", "<|im_sep|>", "<|im_end|>"}), "phi4");
  EXPECT_EQ(guess_template_name("llama", {"<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>"}), "llama3");
  EXPECT_EQ(guess_template_name("llama4", {"<|header_start|>", "<|header_end|>", "<|eot|>"}), "llama4");
  EXPECT_EQ(guess_template_name("gemma2", {"<bos>", "<start_of_turn>", "<end_of_turn>"}), "gemma");
  EXPECT_EQ(guess_template_name("phi3", {"<|assistant|>", "<|end|>", "<|user|>"}), "phi3");
  EXPECT_EQ(guess_template_name("llama", {"<s>", "</s>", "[INST]", "[/INST]"}), "mistral-v3");
  EXPECT_EQ(guess_template_name("llama", {"<s>", "</s>"}), "llama2");
  EXPECT_EQ(guess_template_name("gpt2", {}), "chatml");
  const std::pair<const char*, const char*> arch_cases[] = {
      {"llama4", "llama4"},       {"command-r", "command-r"}, {"cohere2", "command-r"}, {"exaone", "exaone3"},
      {"exaone4", "exaone4"},     {"granitemoe", "granite"},  {"granite", "granite"},   {"glm4moe", "chatglm4"},
      {"chatglm", "chatglm4"},    {"minicpm3", "minicpm"},    {"orion", "orion"},       {"deepseek2", "deepseek2"},
      {"gpt-oss", "gpt-oss"},     {"hunyuan-moe", "hunyuan-moe"}, {"hunyuan-dense", "hunyuan-dense"},
      {"seed_oss", "seed_oss"},   {"phi3", "phi3"},           {"phimoe", "phi3"},       {"gemma3n", "gemma"},
      {"llama", "llama2"},        {"smollm3", "chatml"},      {"qwen3moe", "chatml"},   {"olmo2", "chatml"},
      {"bailingmoe", "bailing"},  {"rwkv7", "rwkv-world"},    {"mamba", "chatml"},
  };
  for (const auto& [arch, name] : arch_cases) EXPECT_EQ(guess_template_name(arch, {}), name) << arch;

  ModelFacts facts;
  facts.arch = "deepseek2";
  facts.name = "DeepSeek-V3-0324";
  TemplateGuess g = guess_template(facts);
  EXPECT_EQ(g.name, "deepseek3");
  EXPECT_EQ(g.reason, "general.name = DeepSeek-V3-0324");
  facts.name = "Kimi-K2-Instruct";
  EXPECT_EQ(guess_template(facts).name, "kimi-k2");
  facts.arch = "llama";
  facts.name = "Mistral-7B-Instruct-v0.2";
  EXPECT_EQ(guess_template(facts).name, "mistral-v1");
  // llama.cpp's rule for Mistral Small 2503 (no template in the file): tekken and 40 layers.
  facts.pre = "tekken";
  facts.n_layer = 40;
  EXPECT_EQ(guess_template(facts).name, "mistral-v7-tekken");
  facts = {};
  facts.arch = "qwen2";
  facts.has_token = [](std::string_view t) { return t == "<|im_start|>"; };
  g = guess_template(facts);
  EXPECT_EQ(g.name, "chatml");
  EXPECT_EQ(g.reason, "the vocabulary's <|im_start|> token");
  facts = {};
  EXPECT_EQ(guess_template(facts).name, "chatml");
  EXPECT_EQ(guess_template(facts).reason, "");
}

}  // namespace
}  // namespace ox::chat
