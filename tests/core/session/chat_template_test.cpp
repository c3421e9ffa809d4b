// LoadedModel::apply_chat_template for a GGUF without tokenizer.chat_template: the built-in
// template is chosen from the architecture and vocabulary markers (stories260K: a llama model with
// no chat markers, so Llama 2's "[INST]" format, as llama.cpp picks for it).
#include <gtest/gtest.h>

#include "core/session/session.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

TEST(ChatTemplate, ModelWithoutTemplateGetsTheGuessedBuiltin) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  Result<std::string> text =
      model.value()->apply_chat_template(R"([{"role":"user","content":"Tell me a story"}])", true);
  ASSERT_TRUE(text.ok()) << text.status().message();
  // Llama 2's published format: BOS, then "[INST] {user} [/INST]".
  EXPECT_EQ(text.value(), "<s>[INST] Tell me a story [/INST]");
}

TEST(ChatTemplate, BadMessagesAreAnError) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_FALSE(model.value()->apply_chat_template("{not json", true).ok());
  EXPECT_FALSE(model.value()->apply_chat_template(R"({"role":"user"})", true).ok());
}

}  // namespace
}  // namespace ox
