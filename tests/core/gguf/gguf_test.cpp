// GgufFile on the real shared models: header, metadata getters and tensor table.
#include "core/gguf/gguf.h"

#include <gtest/gtest.h>

#include "tests/support/shared_data.h"

namespace ox::gguf {
namespace {

std::unique_ptr<GgufFile> open_shared(const std::string& rel) {
  const std::string path = ox::test::shared_path(rel);
  auto r = GgufFile::open(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return nullptr;
  return std::move(r).value();
}

TEST(GgufFile, Stories260KHeaderAndMetadata) {
  auto f = open_shared("models/stories260K.gguf");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(f->bytes().size(), 1185376u);
  auto arch = f->get_string("general.architecture");
  ASSERT_TRUE(arch.ok()) << arch.status().message();
  EXPECT_EQ(*arch, "llama");
  auto emb = f->get_u32("llama.embedding_length");
  ASSERT_TRUE(emb.ok()) << emb.status().message();
  EXPECT_EQ(*emb, 64u);
  auto blocks = f->get_u64("llama.block_count");
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(*blocks, 5u);
  auto tokens = f->get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  EXPECT_EQ((*tokens)->size(), 512u);
  auto model = f->get_string("tokenizer.ggml.model");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(*model, "llama");
}

TEST(GgufFile, Stories260KTensors) {
  auto f = open_shared("models/stories260K.gguf");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->tensors().size(), 48u);
  uint64_t params = 0;
  for (const TensorInfo& t : f->tensors()) {
    EXPECT_EQ(t.type, DType::F32) << t.name;
    EXPECT_EQ(t.n_bytes, t.n_elements * 4) << t.name;
    EXPECT_NE(t.data, nullptr);
    params += t.n_elements;
  }
  const TensorInfo* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  ASSERT_EQ(emb->dims.size(), 2u);
  EXPECT_EQ(emb->dims[0], 64u);
  EXPECT_EQ(emb->dims[1], 512u);
  EXPECT_EQ(emb->rows(), 512u);
  EXPECT_EQ(f->find_tensor("no.such.tensor"), nullptr);
  // Karpathy's 260K model: 260K parameters give or take the norms.
  EXPECT_GT(params, 250000u);
  EXPECT_LT(params, 300000u);
}

}  // namespace
}  // namespace ox::gguf
