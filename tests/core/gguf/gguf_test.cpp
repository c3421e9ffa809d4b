// GgufFile on the real shared models: header, metadata getters and tensor table.
#include "core/gguf/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/base/mapped_file.h"
#include "core/gguf/writer.h"
#include "core/quant/interleave.h"

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
  // From the hyperparameters: embeddings and output 2 * 512 * 64; per layer q 64x64, k and v
  // 64x32, o 64x64, three FFN matrices 64x172, two norms of 64; plus the output norm.
  const uint64_t per_layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 172 + 2 * 64;
  EXPECT_EQ(params, 2u * 512 * 64 + 5 * per_layer + 64);
  // The data section starts at the first multiple of 32 after the tensor infos, and the last
  // tensor ends exactly at the end of the file.
  uint64_t end = 0;
  for (const TensorInfo& t : f->tensors()) end = std::max(end, t.offset + t.n_bytes);
  EXPECT_EQ(f->data_offset() + end, f->bytes().size());
}

TEST(GgufFile, LlamaTinyRandomF16AndBigVocab) {
  auto f = open_shared("models/llama-2-tiny-random.gguf");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  auto tokens = f->get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  ASSERT_EQ((*tokens)->size(), 32000u);
  EXPECT_EQ((**tokens)[1], "<s>");
  EXPECT_EQ((**tokens)[2], "</s>");
  auto scores = f->get_array("tokenizer.ggml.scores");
  ASSERT_TRUE(scores.ok());
  EXPECT_EQ((*scores)->elem_type, ValueType::FLOAT32);
  EXPECT_EQ((*scores)->count, 32000u);
  auto types = f->get_array("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)->count, 32000u);
  EXPECT_EQ((*types)->integer_at(0), 2);  // <unk> is UNKNOWN (2) in llama.cpp's token types
  EXPECT_EQ((*types)->integer_at(1), 3);  // <s> is CONTROL (3)
  EXPECT_EQ(f->get_u32("llama.embedding_length").value(), 8u);
  size_t n_f16 = 0;
  for (const TensorInfo& t : f->tensors()) {
    if (t.type == DType::F16) {
      ++n_f16;
      EXPECT_EQ(t.n_bytes, t.n_elements * 2) << t.name;
    }
  }
  EXPECT_GT(n_f16, 0u);
  const TensorInfo* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, DType::F16);
  EXPECT_EQ(emb->dims, (std::vector<uint64_t>{8, 32000}));
}

TEST(GgufFile, OpenErrorsNameThePath) {
  auto missing = GgufFile::open("/nonexistent/dir/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/model.gguf"), std::string::npos);
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos) << missing.status().message();

  const std::string empty = testing::TempDir() + "oxidize_gguf_empty.gguf";
  FILE* out = std::fopen(empty.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  std::fclose(out);
  auto r = GgufFile::open(empty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(r.status().message().rfind(empty + ": offset 0: ", 0), 0u) << r.status().message();
  std::remove(empty.c_str());
}

TEST(MappedFile, MapsWholeFile) {
  const std::string path = ox::test::shared_path("models/stories260K.gguf");
  auto m = MappedFile::open(path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::vector<uint8_t> expected = ox::test::read_file_bytes(path);
  ASSERT_EQ((*m)->size(), expected.size());
  EXPECT_EQ(std::memcmp((*m)->bytes().data(), expected.data(), expected.size()), 0);
  EXPECT_EQ((*m)->path(), path);
}

// relayout() rewrites every tensor of the type asked for, in place, and records the new type, but
// only in bytes handed over as writable; a read-only file is left as it was.
TEST(GgufFile, RelayoutOnlyRewritesWritableBytes) {
  std::vector<uint8_t> q4k(2 * 144), f32(4 * 4, 0);
  for (size_t i = 0; i < q4k.size(); ++i) q4k[i] = static_cast<uint8_t>(i * 37 + 11);
  GgufWriter w;
  const uint64_t dims_q[] = {256, 2}, dims_f[] = {4};
  ASSERT_TRUE(w.add_tensor("w", dims_q, DType::Q4_K, q4k).is_ok());
  ASSERT_TRUE(w.add_tensor("v", dims_f, DType::F32, f32).is_ok());
  auto bytes = w.to_bytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  std::vector<uint8_t> expected = q4k;
  quant::q4_k_to_il(expected.data(), 2);
  for (const bool writable : {false, true}) {
    std::vector<uint8_t> buf = bytes.value();
    auto f = GgufFile::parse(buf, "relayout.gguf", nullptr, writable);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ((*f)->writable(), writable);
    EXPECT_EQ((*f)->relayout(DType::Q4_K, DType::Q4_K_IL, quant::q4_k_to_il), writable ? 1 : 0);
    const TensorInfo* t = (*f)->find_tensor("w");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->type, writable ? DType::Q4_K_IL : DType::Q4_K);
    const std::vector<uint8_t>& want = writable ? expected : q4k;
    EXPECT_EQ(std::memcmp(t->data, want.data(), want.size()), 0) << (writable ? "writable" : "read-only");
    EXPECT_EQ((*f)->find_tensor("v")->type, DType::F32);
  }
}

}  // namespace
}  // namespace ox::gguf
