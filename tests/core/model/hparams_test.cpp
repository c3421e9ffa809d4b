// read_hparams on hostile metadata (through Model::load): counts that would size per-layer tables
// beyond what the file can hold are errors before anything is allocated.
#include <gtest/gtest.h>

#include "core/gguf/writer.h"
#include "core/model/model.h"

namespace ox {
namespace {

// A llama header with `n_layer` blocks and a single tensor.
Result<std::shared_ptr<const Model>> load_with_layers(uint32_t n_layer) {
  gguf::GgufWriter w;
  EXPECT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  EXPECT_TRUE(w.add_u32("llama.context_length", 16).is_ok());
  EXPECT_TRUE(w.add_u32("llama.embedding_length", 8).is_ok());
  EXPECT_TRUE(w.add_u32("llama.block_count", n_layer).is_ok());
  EXPECT_TRUE(w.add_u32("llama.feed_forward_length", 16).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count", 2).is_ok());
  EXPECT_TRUE(w.add_u32("llama.vocab_size", 4).is_ok());
  const uint64_t dims[] = {8, 4};
  const std::vector<uint8_t> embd(8 * 4 * sizeof(float), 0);
  EXPECT_TRUE(w.add_tensor("token_embd.weight", dims, DType::F32, embd).is_ok());
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "layers.gguf", owned);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
}

// Found by tests/fuzz/gguf_fuzz: block_count 50331649 in a 3 KB phi3 file made the loader allocate
// per-layer tables of 1.6 GB, then 73 GB (out of memory) before looking for a single layer tensor.
TEST(HParams, BlockCountBeyondTheTensorCountIsAnError) {
  for (uint32_t n_layer : {2u, 50331649u, 1u << 30}) {
    Result<std::shared_ptr<const Model>> model = load_with_layers(n_layer);
    ASSERT_FALSE(model.ok()) << n_layer;
    EXPECT_NE(model.status().message().find("block_count"), std::string::npos) << model.status().message();
  }
}

// One layer and one tensor passes the count check; the loader then reports the missing tensors.
TEST(HParams, BlockCountWithinTheTensorCountReachesTheTensorChecks) {
  Result<std::shared_ptr<const Model>> model = load_with_layers(1);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("missing tensor"), std::string::npos) << model.status().message();
}

}  // namespace
}  // namespace ox
