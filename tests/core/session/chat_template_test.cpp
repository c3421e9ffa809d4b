// LoadedModel's chat template: the file's, else a built-in guessed as llama.cpp would (stories260K:
// a llama model with no chat markers, so Llama 2's "[INST]" format), or an override; built-ins are
// preceded by BOS when the vocabulary adds one, as llama.cpp's tokenizer does for them.
#include <gtest/gtest.h>

#include "core/chat/builtin_templates.h"
#include "core/gguf/writer.h"
#include "core/session/session.h"
#include "tests/support/shared_data.h"
#include "tests/core/session/open_model.h"

namespace ox {
namespace {

constexpr const char* kStory = R"([{"role":"user","content":"Tell me a story"}])";

TEST(ChatTemplate, ModelWithoutTemplateGetsTheGuessedBuiltin) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_NE(model, nullptr);
  const ChatTemplateInfo& info = model->chat_template();
  EXPECT_EQ(info.name, "llama2");
  EXPECT_EQ(info.origin, ChatTemplateOrigin::kGuessed);
  EXPECT_TRUE(info.builtin);
  EXPECT_EQ(describe_chat_template(info),
            "llama2 (guessed from general.architecture = llama; the file has no tokenizer.chat_template)");
  Result<std::string> text = model->apply_chat_template(kStory, true);
  ASSERT_TRUE(text.ok()) << text.status().message();
  // llama.cpp's llama2 format, after the BOS its tokenizer would add.
  EXPECT_EQ(text.value(), "<s>[INST] Tell me a story [/INST]");
}

// stories260K's metadata (its vocabulary, no tensors) with `chat_template` added.
std::unique_ptr<gguf::GgufFile> vocab_with_template(std::string_view chat_template, std::vector<uint8_t>* bytes) {
  Result<std::unique_ptr<gguf::GgufFile>> base = gguf::GgufFile::open(test::shared_path("models/stories260K.gguf"));
  EXPECT_TRUE(base.ok()) << base.status().message();
  if (!base.ok()) return nullptr;
  gguf::GgufWriter w;
  for (const auto& [key, value] : base.value()->metadata()) {
    if (key == "general.alignment") continue;
    EXPECT_TRUE(w.add(key, gguf::encode_value(value)).is_ok()) << key;
  }
  EXPECT_TRUE(w.add_string("tokenizer.chat_template", chat_template).is_ok());
  Result<std::vector<uint8_t>> out = w.to_bytes();
  EXPECT_TRUE(out.ok());
  if (!out.ok()) return nullptr;
  *bytes = std::move(out.value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*bytes, "vocab.gguf");
  EXPECT_TRUE(file.ok()) << file.status().message();
  return file.ok() ? std::move(file.value()) : nullptr;
}

TEST(ChatTemplate, TheFilesTemplateIsUsedAndRecognised) {
  const std::string llama31 = [] {
    const std::vector<uint8_t> b =
        test::read_file_bytes(test::shared_path("templates/meta-llama-Llama-3.1-8B-Instruct.jinja"));
    return std::string(b.begin(), b.end());
  }();
  ASSERT_FALSE(llama31.empty());
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file = vocab_with_template(llama31, &bytes);
  ASSERT_NE(file, nullptr);
  Result<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ChatTemplateInfo info = model_chat_template(*file, *t.value());
  EXPECT_EQ(info.name, "llama3");
  EXPECT_EQ(info.origin, ChatTemplateOrigin::kFile);
  EXPECT_FALSE(info.builtin);
  EXPECT_EQ(info.source, llama31);
  EXPECT_EQ(describe_chat_template(info), "llama3 (from the file)");
  EXPECT_EQ(chat_template_origin_name(info.origin), "file");

  // A template of no known format: "custom"; rendered as written, BOS only where it writes one.
  file = vocab_with_template("{{ messages[0].content }}", &bytes);
  ASSERT_NE(file, nullptr);
  t = tok::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(t.ok());
  info = model_chat_template(*file, *t.value());
  EXPECT_EQ(info.name, "custom");
  EXPECT_EQ(describe_chat_template(info), "custom (from the file; not a built-in format)");
  Result<std::string> text =
      render_chat_template(info, nlohmann::ordered_json::parse(kStory), true, "<s>", "</s>", /*add_bos=*/true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "Tell me a story");
}

TEST(ChatTemplate, OverrideByNameOrJinja) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_NE(model, nullptr);
  Result<std::shared_ptr<const LoadedModel>> chatml = model->with_chat_template("chatml");
  ASSERT_TRUE(chatml.ok()) << chatml.status().message();
  EXPECT_EQ(chatml.value()->chat_template().name, "chatml");
  EXPECT_EQ(chatml.value()->chat_template().origin, ChatTemplateOrigin::kOverride);
  EXPECT_EQ(&chatml.value()->tokenizer(), &model->tokenizer());  // the same model, shared
  Result<std::string> text = chatml.value()->apply_chat_template(kStory, true);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text.value(), "<s><|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(model->chat_template().name, "llama2");  // the original is unchanged

  // An old oxidize name still works, under the registry's name.
  Result<std::shared_ptr<const LoadedModel>> alias = model->with_chat_template("llama-3");
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias.value()->chat_template().name, "llama3");

  // Jinja source: rendered as it is (no BOS added), named by what it is recognised as.
  Result<std::shared_ptr<const LoadedModel>> custom =
      model->with_chat_template("{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}");
  ASSERT_TRUE(custom.ok()) << custom.status().message();
  EXPECT_EQ(custom.value()->chat_template().name, "custom");
  EXPECT_FALSE(custom.value()->chat_template().builtin);
  text = custom.value()->apply_chat_template(kStory, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "[user] Tell me a story");
  Result<std::shared_ptr<const LoadedModel>> zephyr = model->with_chat_template(
      "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}<|endoftext|>\n{% endfor %}<|user|>");
  ASSERT_TRUE(zephyr.ok());
  EXPECT_EQ(zephyr.value()->chat_template().name, "zephyr");
}

TEST(ChatTemplate, BadOverridesAreErrors) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_NE(model, nullptr);
  Result<std::shared_ptr<const LoadedModel>> r = model->with_chat_template("nosuch");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown chat template 'nosuch'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("chatml, llama2,"), std::string::npos) << r.status().message();
  EXPECT_FALSE(model->with_chat_template("").ok());
  EXPECT_FALSE(model->with_chat_template("{% if %}").ok());  // a parse error, before any render
}

TEST(ChatTemplate, EveryBuiltinRendersThroughTheModel) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_NE(model, nullptr);
  for (const chat::BuiltinTemplate& b : chat::builtin_templates()) {
    Result<std::shared_ptr<const LoadedModel>> m = model->with_chat_template(b.name);
    ASSERT_TRUE(m.ok()) << b.name;
    Result<std::vector<int32_t>> ids = m.value()->chat_prompt_from_json(kStory, true);
    EXPECT_TRUE(ids.ok()) << b.name << ": " << ids.status().message();
  }
}

TEST(ChatTemplate, BadMessagesAreAnError) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->apply_chat_template("{not json", true).ok());
  EXPECT_FALSE(model->apply_chat_template(R"({"role":"user"})", true).ok());
}

}  // namespace
}  // namespace ox
