// deepseek2 beyond the parity references (arch_parity_test.cpp): a context shift rotates only the
// rotary part of its cached keys (the last n_rot values of the latent row [c | k_rot], or of each
// head of the attn_kv_b layout), the latent cache has no value rows, a decoded token's weight bytes
// count every head's attn_k_b, and what llama.cpp runs but oxidize does not is refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/model/model.h"
#include "core/model/moe.h"
#include "core/tools/synth.h"
#include "tests/core/model/edited_gguf.h"
#include "tests/core/model/shift_check.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

// The parity model of deepseek2 (or of its variant), loaded from `path` after synth wrote it.
std::shared_ptr<const Model> synth_deepseek2(const std::string& variant) {
  SynthOptions o;
  o.arch = "deepseek2";
  o.shape = "tiny-arch";
  o.variant = variant;
  o.weight_std = 0.08f;
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.out_path = testing::TempDir() + "oxidize_deepseek2_" + variant + ".gguf";
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << st.message();
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::open(o.out_path);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  Result<std::shared_ptr<const Model>> model = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? model.value() : nullptr;
}

// The synth model's file with `extra` u32 / f32 keys added and `drop` left out, loaded.
Result<std::shared_ptr<const Model>> load_edited(const std::vector<std::pair<std::string, double>>& extra_u32,
                                                 const std::vector<std::pair<std::string, double>>& extra_f32,
                                                 const std::string& drop) {
  EXPECT_NE(synth_deepseek2(""), nullptr);
  return test::load_edited_gguf(
      testing::TempDir() + "oxidize_deepseek2_.gguf", [&](const std::string& key) { return key != drop; },
      [&](gguf::GgufWriter& w) {
        for (const auto& [key, v] : extra_u32) EXPECT_TRUE(w.add_u32(key, static_cast<uint32_t>(v)).is_ok());
        for (const auto& [key, v] : extra_f32) EXPECT_TRUE(w.add_f32(key, static_cast<float>(v)).is_ok());
      },
      [](const std::string&) { return true; });
}

// Both layouts, an f32 cache: rotation by theta(p) then theta(-d) against theta(p - d), in float.
// Rotating the wrong values (the first n_rot, as for other architectures) moves c, which does not
// depend on the position, by far more.
TEST(Deepseek2, ContextShiftRotatesOnlyTheRotaryPartOfTheKeys) {
  for (const std::string variant : {"", "kv_b"}) {
    std::shared_ptr<const Model> model = synth_deepseek2(variant);
    ASSERT_NE(model, nullptr);
    ASSERT_TRUE(model->can_shift());
    double v_err = 0;
    EXPECT_LT(test::shifted_key_error(*model, DType::F32, 40, 3, 17, &v_err), 2e-5) << variant;
    EXPECT_EQ(v_err, 0.0) << variant << ": values move unchanged";
  }
}

// The latent cache keeps no value rows: a position's value is the start of its key row.
TEST(Deepseek2, LatentCacheHasNoValueRows) {
  std::shared_ptr<const Model> model = synth_deepseek2("");
  ASSERT_NE(model, nullptr);
  const KvCacheShape s = model->kv_shape(64, 8, DType::F16, DType::Q8_0);
  EXPECT_EQ(s.k_dim, model->hparams().n_lora_kv + model->hparams().n_rot);
  EXPECT_EQ(s.v_dim, 0);
  std::shared_ptr<const Model> kv_b = synth_deepseek2("kv_b");
  ASSERT_NE(kv_b, nullptr);
  EXPECT_EQ(kv_b->kv_shape(64, 8, DType::F16, DType::F16).v_dim, kv_b->hparams().n_head * kv_b->hparams().head_dim_v);
}

// attn_k_b and attn_v_b are 3-D (one matrix per head) but no experts: a decoded token reads all of
// them (here n_head = n_expert = 4, which a shape test alone mistook for experts).
TEST(Deepseek2, WeightBytesPerTokenReadsEveryHeadOfAttnKB) {
  std::shared_ptr<const Model> model = synth_deepseek2("");
  ASSERT_NE(model, nullptr);
  uint64_t dense = 0, experts = 0;
  for (const gguf::TensorInfo& t : model->file().tensors()) {
    (t.name.find("_exps") != std::string::npos ? experts : dense) += t.n_bytes;
  }
  const Tensor& embd = model->weights().token_embd;
  if (model->weights().output.data != embd.data) dense -= embd.row_bytes * (embd.rows - 1);
  EXPECT_EQ(decode_weight_bytes(*model), dense + experts / 2);  // 2 of 4 experts
}

TEST(Deepseek2, UnsupportedFeaturesAreRefusedByName) {
  struct Case {
    std::vector<std::pair<std::string, double>> u32, f32;
    std::string drop, message;
  };
  const Case cases[] = {
      {{}, {}, "deepseek2.attention.temperature_length", "needs a positive 'deepseek2.attention.temperature_length'"},
      {{}, {}, "deepseek2.attention.q_lora_rank", "missing metadata key 'deepseek2.attention.q_lora_rank'"},
      {{}, {}, "deepseek2.attention.value_length_mla", "'deepseek2.attention.key_length_mla' and 'value_length_mla'"},
      {{}, {}, "deepseek2.expert_shared_count", "missing metadata key 'deepseek2.expert_shared_count'"},
  };
  for (const Case& c : cases) {
    Result<std::shared_ptr<const Model>> m = load_edited(c.u32, c.f32, c.drop);
    ASSERT_FALSE(m.ok()) << c.message;
    EXPECT_NE(m.status().message().find(c.message), std::string::npos) << m.status().message();
  }
  // A zero count of multi-token-prediction blocks is none (tests/arch/nextn_test.cpp: more than 0).
  EXPECT_TRUE(load_edited({{"deepseek2.nextn_predict_layers", 0}}, {}, "").ok());
}

}  // namespace
}  // namespace ox
