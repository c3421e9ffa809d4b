// read_hparams on hostile metadata (through Model::load): counts that would size per-layer tables
// beyond what the file can hold are errors before anything is allocated.
#include <gtest/gtest.h>

#include <cmath>

#include "core/gguf/writer.h"
#include "core/model/hparams.h"
#include "core/model/model.h"
#include "core/model/rope_scaling.h"

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

// The hyperparameters of a llama header with the rope.scaling keys `add` writes.
template <typename Add>
Result<HParams> hparams_with(Add add) {
  gguf::GgufWriter w;
  EXPECT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  EXPECT_TRUE(w.add_u32("llama.context_length", 4096).is_ok());
  EXPECT_TRUE(w.add_u32("llama.embedding_length", 8).is_ok());
  EXPECT_TRUE(w.add_u32("llama.block_count", 1).is_ok());
  EXPECT_TRUE(w.add_u32("llama.feed_forward_length", 16).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count", 2).is_ok());
  add(w);
  const uint64_t dims[] = {8, 4};
  const std::vector<uint8_t> embd(8 * 4 * sizeof(float), 0);
  EXPECT_TRUE(w.add_tensor("token_embd.weight", dims, DType::F32, embd).is_ok());
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "rope.gguf", owned);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return read_hparams(*file.value());
}

// llama.cpp's rules: a factor without a type is linear; "none" never scales; YaRN's original
// context defaults to context_length; an unknown type is an error naming the key.
TEST(HParams, RopeScalingTypes) {
  Result<HParams> linear = hparams_with([](gguf::GgufWriter& w) { ASSERT_TRUE(w.add_f32("llama.rope.scaling.factor", 4).is_ok()); });
  ASSERT_TRUE(linear.ok()) << linear.status().message();
  EXPECT_EQ(linear.value().rope_scaling, RopeScalingType::kLinear);
  EXPECT_FLOAT_EQ(linear.value().rope_freq_scale, 0.25f);
  EXPECT_EQ(linear.value().n_ctx_orig_yarn, 4096);

  Result<HParams> none = hparams_with([](gguf::GgufWriter& w) {
    ASSERT_TRUE(w.add_string("llama.rope.scaling.type", "none").is_ok());
    ASSERT_TRUE(w.add_f32("llama.rope.scaling.factor", 4).is_ok());
  });
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value().rope_freq_scale, 1.0f);

  Result<HParams> yarn = hparams_with([](gguf::GgufWriter& w) {
    ASSERT_TRUE(w.add_string("llama.rope.scaling.type", "yarn").is_ok());
    ASSERT_TRUE(w.add_f32("llama.rope.scaling.factor", 8).is_ok());
    ASSERT_TRUE(w.add_u32("llama.rope.scaling.original_context_length", 1024).is_ok());
    ASSERT_TRUE(w.add_f32("llama.rope.scaling.attn_factor", 0.5f).is_ok());
  });
  ASSERT_TRUE(yarn.ok());
  EXPECT_EQ(yarn.value().rope_scaling, RopeScalingType::kYarn);
  EXPECT_EQ(yarn.value().n_ctx_orig_yarn, 1024);
  // llama_context: attn_factor = mscale(8, 1) / (1 + 0.1 ln 8) * 0.5 = 0.5, and rope multiplies
  // 1 + 0.1 ln 8 back: YaRN's magnitude times the file's attn_factor.
  RopeParams r;
  r.freq_scale = yarn.value().rope_freq_scale;
  apply_rope_scaling(ArchSpec{}, yarn.value(), r);
  EXPECT_EQ(r.ext_factor, 1.0f);
  EXPECT_EQ(r.n_ctx_orig, 1024);
  EXPECT_NEAR(r.attn_factor, 0.5f, 1e-6);
  EXPECT_NEAR(rope_mscale(r), 0.5f * (1 + 0.1f * std::log(8.0f)), 1e-6);
  ArchSpec with_log_mul;
  with_log_mul.yarn_log_mul = 1.0f;  // mscale_all_dim = mscale: no magnitude left
  apply_rope_scaling(with_log_mul, yarn.value(), r);
  EXPECT_NEAR(rope_mscale(r), 0.5f, 1e-6);

  Result<HParams> unknown = hparams_with([](gguf::GgufWriter& w) { ASSERT_TRUE(w.add_string("llama.rope.scaling.type", "llama3").is_ok()); });
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("rope.scaling.type"), std::string::npos) << unknown.status().message();
}

}  // namespace
}  // namespace ox
