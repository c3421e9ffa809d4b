// qwen35moe files as llama.cpp's converter writes them, beyond the parity model (arch_parity_test):
// without feed_forward_length (Qwen3.5-MoE's config has no dense width) the model loads and runs
// as with it; attention.recurrent_layers is held to the full attention interval; a file fusing the
// experts' gate/up (convert_hf_to_gguf.py --fuse-gate-up-exps) in one layer only is refused by name
// (fused files: fused_layout_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/model/model.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"
#include "tests/arch/tiny_models.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::shared_ptr<const gguf::GgufFile> parity_file() {
  static std::shared_ptr<const gguf::GgufFile> file = [] {
    SynthOptions o;
    o.arch = "qwen35moe";
    o.shape = "tiny-arch";
    o.seed = 5;
    o.weight_std = 0.08f;
    o.vocab_path = test::shared_path("models/stories260K.gguf");
    o.out_path = testing::TempDir() + "oxidize_qwen35moe_test.gguf";
    const Status st = synth_gguf(o);
    EXPECT_TRUE(st.is_ok()) << st.message();
    Result<std::unique_ptr<gguf::GgufFile>> f = gguf::GgufFile::open(o.out_path);
    EXPECT_TRUE(f.ok()) << f.status().message();
    std::remove(o.out_path.c_str());  // mapped (or read) already
    return f.ok() ? std::shared_ptr<const gguf::GgufFile>(std::move(f).value()) : nullptr;
  }();
  return file;
}

// The parity file rewritten: metadata keys for which `drop` holds left out, `extra_key` added, and
// every tensor copied (a tensor named `fused` added, zero-filled, with the given dims).
Result<std::shared_ptr<const Model>> rewritten(const std::function<bool(const std::string&)>& drop,
                                               const std::string& extra_key, gguf::EncodedValue extra_value,
                                               const std::string& fused = "", std::vector<uint64_t> fused_dims = {}) {
  const std::shared_ptr<const gguf::GgufFile> src = parity_file();
  gguf::GgufWriter w;
  for (const auto& [key, value] : src->metadata()) {
    if (key == "general.alignment" || drop(key)) continue;
    EXPECT_TRUE(w.add(key, gguf::encode_value(value)).is_ok()) << key;
  }
  if (!extra_key.empty()) {
    EXPECT_TRUE(w.add(extra_key, std::move(extra_value)).is_ok());
  }
  for (const gguf::TensorInfo& t : src->tensors()) {
    EXPECT_TRUE(w.add_tensor(t.name, t.dims, t.type, std::span<const uint8_t>(t.data, t.n_bytes)).is_ok()) << t.name;
  }
  if (!fused.empty()) {
    uint64_t n = 1;
    for (uint64_t d : fused_dims) n *= d;
    EXPECT_TRUE(w.add_tensor(fused, fused_dims, DType::F32, std::vector<uint8_t>(n * sizeof(float), 0)).is_ok());
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  if (!bytes.ok()) return bytes.status();
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::parse(*owned, "rewritten.gguf", owned));
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

bool keep(const std::string&) { return false; }

TEST(Qwen35Moe, LoadsWithoutFeedForwardLengthAsWith) {
  ASSERT_NE(parity_file(), nullptr);
  Result<std::shared_ptr<const Model>> with = rewritten(keep, "", {});
  ASSERT_TRUE(with.ok()) << with.status().message();
  Result<std::shared_ptr<const Model>> without =
      rewritten([](const std::string& k) { return k == "qwen35moe.feed_forward_length"; }, "", {});
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_EQ(without.value()->hparams().n_ff, 0);
  EXPECT_EQ(test::prompt_logits(*without.value()), test::prompt_logits(*with.value()));
}

TEST(Qwen35Moe, NeitherExpertWidthNorFeedForwardLengthIsNamed) {
  // Neither width key: the experts would be feed_forward_length / expert_used_count wide, and
  // there is no feed_forward_length either.
  Result<std::shared_ptr<const Model>> m = rewritten(
      [](const std::string& k) {
        return k == "qwen35moe.feed_forward_length" || k == "qwen35moe.expert_feed_forward_length";
      },
      "", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'qwen35moe.feed_forward_length'"), std::string::npos) << m.status().message();
}

TEST(Qwen35Moe, RecurrentLayersMustFollowTheInterval) {
  // The parity model: interval 2 over 2 layers, layer 0 recurrent, layer 1 attending.
  Result<std::shared_ptr<const Model>> same =
      rewritten(keep, "qwen35moe.attention.recurrent_layers", gguf::encode_bool_array({true, false}));
  EXPECT_TRUE(same.ok()) << same.status().message();
  Result<std::shared_ptr<const Model>> other =
      rewritten(keep, "qwen35moe.attention.recurrent_layers", gguf::encode_bool_array({false, false}));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(other.status().message().find("'qwen35moe.attention.recurrent_layers' makes layer 0 attend"),
            std::string::npos)
      << other.status().message();
}

TEST(Qwen35Moe, GateUpExpertsFusedInOneLayerOnlyAreRefusedByName) {
  const HParams hp = [] {
    Result<std::shared_ptr<const Model>> m = rewritten(keep, "", {});
    return m.ok() ? m.value()->hparams() : HParams{};
  }();
  ASSERT_GT(hp.n_expert, 0);
  Result<std::shared_ptr<const Model>> m =
      rewritten(keep, "", {}, "blk.1.ffn_gate_up_exps.weight",
                {static_cast<uint64_t>(hp.n_embd), 2u * static_cast<uint64_t>(hp.n_ff_exp), static_cast<uint64_t>(hp.n_expert)});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(m.status().message().find("tensor 'blk.1.ffn_gate_up_exps.weight'"), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("layer 0 has them apart"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace ox
