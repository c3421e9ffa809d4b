// Built-in templates render each model family's published prompt format, and the guess picks a
// family from architecture and special tokens.
#include <gtest/gtest.h>

#include "core/chat/template.h"

namespace ox::chat {
namespace {

const char* kConversation = R"([
  {"role": "system", "content": "SYS"},
  {"role": "user", "content": "Hi"},
  {"role": "assistant", "content": "Hello"},
  {"role": "user", "content": [{"type": "text", "text": "By"}, {"type": "image"}, {"type": "text", "text": "e"}]}
])";

struct Expected {
  const char* name;
  const char* with_prompt;  // add_generation_prompt = true, bos "<s>", eos "</s>"
};

// Written from each family's documented format (not from this engine's output).
const Expected kExpected[] = {
    {"chatml",
     "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n"
     "<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"},
    {"llama-2", "<s>[INST] <<SYS>>\nSYS\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Bye [/INST]"},
    {"llama-3",
     "<s><|start_header_id|>system<|end_header_id|>\n\nSYS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"mistral", "<s>[INST] SYS\n\nHi [/INST] Hello</s>[INST] Bye [/INST]"},
    {"gemma",
     "<s><start_of_turn>user\nSYS\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"
     "<start_of_turn>model\n"},
    {"phi-3", "<|system|>\nSYS<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello<|end|>\n<|user|>\nBye<|end|>\n<|assistant|>\n"},
};

TEST(BuiltinTemplates, RenderTheDocumentedFormats) {
  const nlohmann::json messages = nlohmann::json::parse(kConversation, nullptr, false);
  ASSERT_FALSE(messages.is_discarded());
  ASSERT_EQ(builtin_template_names().size(), std::size(kExpected));
  for (const Expected& e : kExpected) {
    const std::string_view src = builtin_template(e.name);
    ASSERT_FALSE(src.empty()) << e.name;
    Result<std::string> r = apply_chat_template(src, messages, true, "<s>", "</s>");
    ASSERT_TRUE(r.ok()) << e.name << ": " << r.status().message();
    EXPECT_EQ(*r, e.with_prompt) << e.name;
  }
  EXPECT_TRUE(builtin_template("nonexistent").empty());
}

TEST(BuiltinTemplates, GenerationPromptOnlyWhereTheFormatHasOne) {
  const nlohmann::json messages = nlohmann::json::parse(R"([{"role": "user", "content": "Q"}])", nullptr, false);
  auto render = [&](const char* name, bool prompt) {
    Result<std::string> r = apply_chat_template(builtin_template(name), messages, prompt, "<s>", "</s>");
    return r.ok() ? *r : "ERROR: " + r.status().message();
  };
  EXPECT_EQ(render("chatml", false), "<|im_start|>user\nQ<|im_end|>\n");
  EXPECT_EQ(render("phi-3", false), "<|user|>\nQ<|end|>\n</s>");
  EXPECT_EQ(render("gemma", false), "<s><start_of_turn>user\nQ<end_of_turn>\n");
  EXPECT_EQ(render("llama-2", false), render("llama-2", true));  // [/INST] already asks for a reply
  EXPECT_EQ(render("mistral", true), "<s>[INST] Q [/INST]");
}

TEST(BuiltinTemplates, GuessFromTokensThenArchitecture) {
  EXPECT_EQ(guess_template_name("qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}), "chatml");
  EXPECT_EQ(guess_template_name("llama", {"<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>"}), "llama-3");
  EXPECT_EQ(guess_template_name("gemma2", {"<bos>", "<start_of_turn>", "<end_of_turn>"}), "gemma");
  EXPECT_EQ(guess_template_name("phi3", {"<|assistant|>", "<|end|>", "<|user|>"}), "phi-3");
  EXPECT_EQ(guess_template_name("llama", {"<s>", "</s>", "[INST]", "[/INST]"}), "mistral");
  EXPECT_EQ(guess_template_name("llama", {"<s>", "</s>"}), "llama-2");
  EXPECT_EQ(guess_template_name("gemma", {}), "gemma");
  EXPECT_EQ(guess_template_name("gpt2", {}), "chatml");
}

}  // namespace
}  // namespace ox::chat
