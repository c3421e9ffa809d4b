// The architecture registry: names unique and spelled as llama.cpp spells them, plan invariants,
// and the load errors of issue #20 item 6 (an architecture llama.cpp runs but we do not, a missing
// tensor, a tensor of the wrong shape) naming what is wrong.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/gguf/writer.h"
#include "core/model/arch_registry.h"
#include "core/model/model.h"
#include "core/model/tensor_plan.h"

namespace ox {
namespace {

TEST(ArchRegistry, NamesAreUniqueAndLlamaCppSpellings) {
  std::set<std::string> seen;
  for (const ArchDef* a : all_archs()) {
    EXPECT_TRUE(seen.insert(a->name).second) << a->name << " registered twice";
    EXPECT_TRUE(known_to_llama_cpp(a->name)) << a->name << " is not a llama.cpp architecture name";
    EXPECT_EQ(find_arch(a->name), a);
  }
  EXPECT_GE(seen.size(), 11u);
  EXPECT_EQ(find_arch("no-such-arch"), nullptr);
}

TEST(ArchRegistry, PlansNameEveryTensorOnce) {
  for (const ArchDef* a : all_archs()) {
    HParams hp;
    hp.arch = a->name;
    hp.n_vocab = 32;
    hp.n_ctx_train = 16;
    hp.n_embd = 16;
    hp.n_layer = 2;
    hp.n_ff = 32;
    hp.n_head = 2;
    hp.n_head_kv = 1;
    hp.head_dim_k = hp.head_dim_v = hp.n_rot = 8;
    hp.n_expert = 2;
    hp.n_expert_used = 1;
    hp.n_ff_exp = hp.n_ff_shexp = 16;  // expert and shared-expert widths (moe.h)
    hp.n_expert_shared = 1;
    // Recurrent sizes (state-space, short convolution, RWKV-7); attention-only specs ignore them.
    hp.ssm_d_conv = 4;
    hp.ssm_d_inner = 32;
    hp.ssm_d_state = 8;
    hp.ssm_dt_rank = 4;
    hp.ssm_n_group = 1;
    hp.shortconv_l_cache = 3;
    hp.wkv_head_size = 8;
    hp.n_lora_decay = hp.n_lora_iclr = hp.n_lora_value_res_mix = hp.n_lora_gate = 4;
    hp.full_attention_interval = 2;
    hp.n_lora_q = hp.n_lora_kv = 4;  // latent attention (deepseek2): its ranks, and rotary dimensions
    hp.n_rot = 4;                    // below the head size (the rest of each head is not rotated)
    hp.kv_free_layer.assign(2, false);
    std::set<std::string> names;
    for (const PlannedTensor& t : plan_tensors(a->spec, hp)) {
      EXPECT_TRUE(names.insert(t.name()).second) << a->name << ": " << t.name() << " planned twice";
      for (int64_t d : t.dims) EXPECT_GT(d, 0) << a->name << ": " << t.name();
    }
    EXPECT_TRUE(names.count("token_embd.weight")) << a->name;
  }
}

// A header of `arch` with tiny llama shapes and the given tensors (all F32 zeros).
Result<std::shared_ptr<const Model>> load(const std::string& arch,
                                          const std::vector<std::pair<std::string, std::vector<uint64_t>>>& tensors) {
  gguf::GgufWriter w;
  const std::string p = arch + ".";
  EXPECT_TRUE(w.add_string("general.architecture", arch).is_ok());
  EXPECT_TRUE(w.add_u32(p + "context_length", 16).is_ok());
  EXPECT_TRUE(w.add_u32(p + "embedding_length", 8).is_ok());
  EXPECT_TRUE(w.add_u32(p + "block_count", 1).is_ok());
  EXPECT_TRUE(w.add_u32(p + "feed_forward_length", 16).is_ok());
  EXPECT_TRUE(w.add_u32(p + "attention.head_count", 2).is_ok());
  EXPECT_TRUE(w.add_u32(p + "vocab_size", 4).is_ok());
  for (const auto& [name, dims] : tensors) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    EXPECT_TRUE(w.add_tensor(name, dims, DType::F32, std::vector<uint8_t>(n * sizeof(float), 0)).is_ok());
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "test.gguf", owned);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
}

TEST(ArchRegistry, ArchitectureLlamaCppRunsButWeDoNotIsNamed) {
  // "t5" is in llama.cpp's table; an encoder-decoder is outside this engine's decoder registry.
  Result<std::shared_ptr<const Model>> m = load("t5", {{"token_embd.weight", {8, 4}}});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(m.status().message().find("'t5' is not supported by oxidize yet (llama.cpp runs it)"), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("llama"), std::string::npos) << "lists what is supported";
  // Its decoder is out of scope, and the message says where its encoder runs.
  EXPECT_NE(m.status().message().find("T5's decoder (text generation with an encoder-decoder) is out of scope"),
            std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("t5encoder"), std::string::npos) << m.status().message();
}

TEST(ArchRegistry, ArchitectureLlamaCppOnlyNamesIsNotClaimedToRun) {
  // llama.cpp v0.5.0 lists "gptj" but refuses the file ("unsupported model architecture: 'gptj'").
  Result<std::shared_ptr<const Model>> m = load("gptj", {{"token_embd.weight", {8, 4}}});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(m.status().message().find("'gptj' is not supported (llama.cpp v0.5.0 knows the name but does not run it"),
            std::string::npos)
      << m.status().message();
}

TEST(ArchRegistry, UnknownArchitectureIsNamed) {
  Result<std::shared_ptr<const Model>> m = load("not-a-model", {{"token_embd.weight", {8, 4}}});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("unknown model architecture 'not-a-model'"), std::string::npos)
      << m.status().message();
}

TEST(ArchRegistry, MissingTensorIsNamed) {
  Result<std::shared_ptr<const Model>> m = load("llama", {{"token_embd.weight", {8, 4}}});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("missing tensor 'blk.0.attn_norm.weight'"), std::string::npos)
      << m.status().message();
}

TEST(ArchRegistry, WrongShapeNamesTensorExpectedAndActual) {
  Result<std::shared_ptr<const Model>> m = load("llama", {{"token_embd.weight", {8, 5}}});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("tensor 'token_embd.weight' has shape [8, 5], expected [8, 4]"),
            std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace ox
