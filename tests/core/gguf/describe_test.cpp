// describe_gguf: the inspect summary names what matters and shortens what is long.
#include "core/gguf/describe.h"

#include <gtest/gtest.h>

#include "core/gguf/writer.h"
#include "tests/support/shared_data.h"

namespace ox::gguf {
namespace {

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(DescribeGguf, Stories260K) {
  auto f = GgufFile::open(ox::test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  const std::string text = describe_gguf(**f);
  EXPECT_TRUE(has(text, "version:     3\n")) << text;
  EXPECT_TRUE(has(text, "alignment:   32\n"));
  EXPECT_TRUE(has(text, "[STRING x 512] [\"<unk>\", \"<s>\", \"</s>\""));
  EXPECT_TRUE(has(text, "[FLOAT32 x 512]"));
  EXPECT_TRUE(has(text, "llama.block_count"));
  EXPECT_TRUE(has(text, "token_embd.weight"));
  EXPECT_TRUE(has(text, "64 x 512"));
  EXPECT_TRUE(has(text, "48 tensors, 292800 parameters, 1171200 bytes"));
  EXPECT_TRUE(has(text, "F32      48 tensors"));
  // Metadata in file order: the tokens come before the architecture in this file.
  EXPECT_LT(text.find("tokenizer.ggml.tokens"), text.find("general.architecture"));
}

TEST(DescribeGguf, ShortensLongValues) {
  GgufWriter w;
  ASSERT_TRUE(w.add_string("tokenizer.chat_template", std::string(5000, 'x') + "END").is_ok());
  std::vector<int32_t> many(1000, 7);
  ASSERT_TRUE(w.add_array<int32_t>("many", many).is_ok());
  ASSERT_TRUE(w.add_string("ctl", "a\nb").is_ok());
  auto bytes = w.to_bytes();
  ASSERT_TRUE(bytes.ok());
  auto f = GgufFile::parse(*bytes, "long.gguf");
  ASSERT_TRUE(f.ok());
  const std::string text = describe_gguf(**f);
  EXPECT_FALSE(has(text, "END"));
  EXPECT_TRUE(has(text, "(5003 bytes)"));
  EXPECT_TRUE(has(text, "[INT32 x 1000] [7, 7, 7, 7, 7, 7, 7, 7, ...]"));
  EXPECT_TRUE(has(text, "\"a\\x0ab\""));
  EXPECT_LT(text.size(), 2000u);
  EXPECT_TRUE(has(text, "0 tensors, 0 parameters"));
}

}  // namespace
}  // namespace ox::gguf
