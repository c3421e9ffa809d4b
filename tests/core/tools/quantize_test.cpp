// quantize_gguf and its type rules. The expected types are worked out by hand here from llama.cpp's
// rules (src/llama-quant.cpp) for the model shapes used, not computed by the code under test.
// (Also checked once outside CI: for 16 presets on stories260K, a synthetic tiny-15M and the 15
// zoo models, every tensor type matched llama.cpp's own llama_model_quantize from the npm
// package @node-llama-cpp/linux-x64 3.22.1.)
#include "core/tools/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/quant/traits.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

DType type_of(const char* preset, const QuantModelFacts& f, const std::string& name, std::vector<uint64_t> dims) {
  const QuantPreset* p = find_quant_preset(preset);
  EXPECT_NE(p, nullptr) << preset;
  return quant_tensor_type(*p, f, name, dims, DType::F16);
}

// A Llama-3-8B-like model: 32 layers, 32 heads, 8 KV heads (n_gqa = 4), rows of 4096 / 14336.
QuantModelFacts llama8b() {
  QuantModelFacts f;
  f.arch = "llama";
  f.n_layer = 32;
  f.n_head = 32;
  f.n_head_kv = 8;
  f.has_output = true;
  f.n_attention_wv = 32;
  return f;
}

std::string blk(int i, const char* what) { return "blk." + std::to_string(i) + "." + what; }

TEST(QuantRules, Presets) {
  const std::pair<const char*, uint32_t> ftypes[] = {
      {"Q4_0", 2},    {"Q4_1", 3},    {"Q5_0", 8},    {"Q5_1", 9},  {"Q8_0", 7},    {"Q2_K", 10},
      {"Q3_K_M", 12}, {"Q4_K_M", 15}, {"Q5_K_M", 17}, {"Q6_K", 18}, {"IQ4_NL", 25}, {"q4_k", 15},
      {"IQ2_XXS", 19}, {"IQ2_XS", 20}, {"IQ2_S", 28},  {"IQ2_M", 29},
      {"IQ3_XS", 22}, {"IQ3_XXS", 23}, {"IQ1_S", 24}, {"IQ3_S", 26}, {"IQ3_M", 27}, {"IQ1_M", 31},
      {"TQ1_0", 36},  {"TQ2_0", 37},  {"MXFP4_MOE", 38}};
  for (const auto& [name, ftype] : ftypes) {
    const QuantPreset* p = find_quant_preset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->llama_ftype, ftype) << name;
  }
  EXPECT_EQ(find_quant_preset("Q4_K_M")->default_type, DType::Q4_K);
  // llama_ftype_get_default_type: the IQ2_S mix is mostly IQ2_XS, the IQ2_M mix mostly IQ2_S.
  EXPECT_EQ(find_quant_preset("IQ2_XXS")->default_type, DType::IQ2_XXS);
  EXPECT_EQ(find_quant_preset("IQ2_XS")->default_type, DType::IQ2_XS);
  EXPECT_EQ(find_quant_preset("IQ2_S")->default_type, DType::IQ2_XS);
  EXPECT_EQ(find_quant_preset("IQ2_M")->default_type, DType::IQ2_S);
  // llama_ftype_get_default_type: IQ3_XS and IQ3_M are IQ3_S mixes.
  EXPECT_EQ(find_quant_preset("IQ3_XXS")->default_type, DType::IQ3_XXS);
  EXPECT_EQ(find_quant_preset("IQ3_XS")->default_type, DType::IQ3_S);
  EXPECT_EQ(find_quant_preset("IQ3_S")->default_type, DType::IQ3_S);
  EXPECT_EQ(find_quant_preset("IQ3_M")->default_type, DType::IQ3_S);
  EXPECT_EQ(find_quant_preset("IQ1_S")->default_type, DType::IQ1_S);
  EXPECT_EQ(find_quant_preset("IQ1_M")->default_type, DType::IQ1_M);
  EXPECT_EQ(find_quant_preset("Q7_X"), nullptr);
}

TEST(QuantRules, UseMoreBitsLayersOfQ4_K_M) {
  // use_more_bits(i, 32): i < 4, i >= 28, or (i - 4) % 3 == 2.
  const std::set<int> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  const QuantModelFacts f = llama8b();
  for (int i = 0; i < 32; ++i) {
    const DType want = more.count(i) ? DType::Q6_K : DType::Q4_K;
    EXPECT_EQ(type_of("Q4_K_M", f, blk(i, "attn_v.weight"), {4096, 1024}), want) << i;
    EXPECT_EQ(type_of("Q4_K_M", f, blk(i, "ffn_down.weight"), {14336, 4096}), want) << i;
    EXPECT_EQ(type_of("Q4_K_M", f, blk(i, "attn_q.weight"), {4096, 4096}), DType::Q4_K) << i;
    EXPECT_EQ(type_of("Q5_K_M", f, blk(i, "attn_v.weight"), {4096, 1024}), more.count(i) ? DType::Q6_K : DType::Q5_K);
  }
  EXPECT_EQ(type_of("Q4_K_M", f, "output.weight", {4096, 128256}), DType::Q6_K);
  EXPECT_EQ(type_of("Q4_K_M", f, "token_embd.weight", {4096, 128256}), DType::Q4_K);
  EXPECT_EQ(type_of("Q4_K_M", f, "blk.0.attn_norm.weight", {4096}), DType::F16);  // 1-D: unchanged
  EXPECT_EQ(type_of("Q4_K_M", f, "rope_freqs.weight", {64}), DType::F16);
}

TEST(QuantRules, OtherPresetsOnLlama8B) {
  const QuantModelFacts f = llama8b();
  // Q2_K: attn_v Q4_K (n_gqa >= 4), ffn_down and attn_output Q3_K.
  EXPECT_EQ(type_of("Q2_K", f, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q4_K);
  EXPECT_EQ(type_of("Q2_K", f, blk(5, "ffn_down.weight"), {14336, 4096}), DType::Q3_K);
  EXPECT_EQ(type_of("Q2_K", f, blk(5, "attn_output.weight"), {4096, 4096}), DType::Q3_K);
  EXPECT_EQ(type_of("Q2_K", f, blk(5, "ffn_up.weight"), {4096, 14336}), DType::Q2_K);
  // Q3_K_M: attn_v Q5_K for the first two, then Q4_K; ffn_down Q5_K below n/16 = 2, else Q4_K.
  EXPECT_EQ(type_of("Q3_K_M", f, blk(1, "attn_v.weight"), {4096, 1024}), DType::Q5_K);
  EXPECT_EQ(type_of("Q3_K_M", f, blk(2, "attn_v.weight"), {4096, 1024}), DType::Q4_K);
  EXPECT_EQ(type_of("Q3_K_M", f, blk(1, "ffn_down.weight"), {14336, 4096}), DType::Q5_K);
  EXPECT_EQ(type_of("Q3_K_M", f, blk(2, "ffn_down.weight"), {14336, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("Q3_K_M", f, blk(2, "attn_output.weight"), {4096, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("Q3_K_M", f, blk(2, "attn_k.weight"), {4096, 1024}), DType::Q3_K);
  // IQ4_NL: attn_v Q5_K (n_gqa >= 4), ffn_down Q5_K below n/8 = 4.
  EXPECT_EQ(type_of("IQ4_NL", f, blk(9, "attn_v.weight"), {4096, 1024}), DType::Q5_K);
  EXPECT_EQ(type_of("IQ4_NL", f, blk(3, "ffn_down.weight"), {14336, 4096}), DType::Q5_K);
  EXPECT_EQ(type_of("IQ4_NL", f, blk(4, "ffn_down.weight"), {14336, 4096}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ4_NL", f, "output.weight", {4096, 128256}), DType::Q6_K);
  // Legacy presets: only output.weight is singled out (Q6_K, or Q8_0 kept for Q8_0).
  EXPECT_EQ(type_of("Q4_0", f, "output.weight", {4096, 128256}), DType::Q6_K);
  EXPECT_EQ(type_of("Q8_0", f, "output.weight", {4096, 128256}), DType::Q8_0);
  EXPECT_EQ(type_of("Q4_0", f, blk(0, "ffn_down.weight"), {14336, 4096}), DType::Q4_0);
  EXPECT_EQ(type_of("Q6_K", f, blk(0, "ffn_down.weight"), {14336, 4096}), DType::Q6_K);
  // Tied embeddings: token_embd is the output, so it gets the output's type.
  QuantModelFacts tied = f;
  tied.has_output = false;
  EXPECT_EQ(type_of("Q4_K_M", tied, "token_embd.weight", {4096, 128256}), DType::Q6_K);
  // n_gqa < 4: Q2_K's attn_v is Q3_K.
  QuantModelFacts mha = f;
  mha.n_head_kv = 32;
  EXPECT_EQ(type_of("Q2_K", mha, blk(5, "attn_v.weight"), {4096, 4096}), DType::Q3_K);
}

// The 2-bit i-quant mixes have a branch of their own in llama_tensor_get_type_impl. (These types,
// and every tensor's type on 16-layer models with n_gqa 1, 2 (tied embeddings) and 4, matched
// llama-quantize --dry-run of llama.cpp 0.5.0 when written.)
TEST(QuantRules, IQ2PresetsOnLlama8B) {
  const QuantModelFacts f = llama8b();
  for (const char* p : {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M"}) {
    SCOPED_TRACE(p);
    const DType base = find_quant_preset(p)->default_type;
    const bool s_or_m = std::string(p) == "IQ2_S" || std::string(p) == "IQ2_M";
    const DType more = s_or_m ? DType::IQ3_S : DType::Q2_K;  // the "more bits" type of the mix
    EXPECT_EQ(type_of(p, f, "output.weight", {4096, 128256}), DType::Q5_K);
    EXPECT_EQ(type_of(p, f, "token_embd.weight", {4096, 128256}), more);
    EXPECT_EQ(type_of(p, f, blk(9, "attn_v.weight"), {4096, 1024}), DType::Q4_K);  // n_gqa >= 4
    EXPECT_EQ(type_of(p, f, blk(3, "ffn_down.weight"), {14336, 4096}), more);      // below n/8 = 4
    EXPECT_EQ(type_of(p, f, blk(4, "ffn_down.weight"), {14336, 4096}), base);
    EXPECT_EQ(type_of(p, f, blk(4, "attn_output.weight"), {4096, 4096}), s_or_m ? DType::IQ3_S : base);
    EXPECT_EQ(type_of(p, f, blk(4, "attn_q.weight"), {4096, 4096}), base);
    EXPECT_EQ(type_of(p, f, blk(4, "attn_k.weight"), {4096, 1024}), base);
    EXPECT_EQ(type_of(p, f, blk(4, "ffn_gate.weight"), {4096, 14336}), base);
    QuantModelFacts mha = f;  // n_gqa 1: attn_v gets the mix's "more" type
    mha.n_head_kv = 32;
    EXPECT_EQ(type_of(p, mha, blk(9, "attn_v.weight"), {4096, 4096}), more);
    QuantModelFacts moe = mha;  // 8 experts: attn_v by expert count, attn_k Q4_K, attn_output Q5_K
    moe.n_expert = 8;
    EXPECT_EQ(type_of(p, moe, blk(9, "attn_v.weight"), {4096, 4096}), DType::Q4_K);
    EXPECT_EQ(type_of(p, moe, blk(9, "attn_k.weight"), {4096, 4096}), DType::Q4_K);
    EXPECT_EQ(type_of(p, moe, blk(9, "attn_output.weight"), {4096, 4096}), DType::Q5_K);
    QuantModelFacts tied = f;  // token_embd is the output: Q5_K
    tied.has_output = false;
    EXPECT_EQ(type_of(p, tied, "token_embd.weight", {4096, 128256}), DType::Q5_K);
  }
  // The 70B rule of the other mixes (attn_v Q3_K/Q4_K -> Q5_K) is not reached from this branch.
  QuantModelFacts b70 = f;
  b70.n_layer = 80;
  b70.n_head = 64;
  EXPECT_EQ(type_of("IQ2_XXS", b70, blk(9, "attn_v.weight"), {8192, 1024}), DType::Q4_K);
}

// The IQ3 and IQ1 presets (llama.cpp v0.5.0 src/llama-quant.cpp), worked out for llama8b():
// n_gqa = 4, 32 layers, so n/8 = 4 and 7n/8 = 28.
TEST(QuantRules, IQ3PresetsOnLlama8B) {
  QuantModelFacts f = llama8b();
  // IQ3_XXS without an importance matrix: attn_v Q4_K (n_gqa >= 4), attn_q/attn_k IQ2_S, ffn_down
  // Q4_K below n/8 else Q3_K, attn_output IQ3_S; output Q5_K, token_embd IQ3_S.
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(5, "attn_q.weight"), {4096, 4096}), DType::IQ2_S);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(5, "attn_k.weight"), {4096, 1024}), DType::IQ2_S);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(3, "ffn_down.weight"), {14336, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(4, "ffn_down.weight"), {14336, 4096}), DType::Q3_K);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(5, "attn_output.weight"), {4096, 4096}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(5, "ffn_up.weight"), {4096, 14336}), DType::IQ3_XXS);
  EXPECT_EQ(type_of("IQ3_XXS", f, "output.weight", {4096, 128256}), DType::Q5_K);
  EXPECT_EQ(type_of("IQ3_XXS", f, "token_embd.weight", {4096, 128256}), DType::IQ3_S);
  QuantModelFacts mha = f;
  mha.n_head_kv = 32;
  EXPECT_EQ(type_of("IQ3_XXS", mha, blk(5, "attn_v.weight"), {4096, 4096}), DType::IQ3_S);
  // With an importance matrix: attn_v (n_gqa < 4) and ffn_down stay IQ3_XXS.
  QuantTypeOptions with_imatrix;
  with_imatrix.has_imatrix = true;
  const QuantPreset& iq3_xxs = *find_quant_preset("IQ3_XXS");
  EXPECT_EQ(quant_tensor_type(iq3_xxs, mha, blk(5, "attn_v.weight"), std::vector<uint64_t>{4096, 4096}, DType::F16,
                              with_imatrix),
            DType::IQ3_XXS);
  EXPECT_EQ(quant_tensor_type(iq3_xxs, mha, blk(3, "ffn_down.weight"), std::vector<uint64_t>{14336, 4096},
                              DType::F16, with_imatrix),
            DType::IQ3_XXS);
  // IQ3_XS: IQ3_S base; attn_q/attn_k IQ3_XXS; ffn_up/ffn_gate IQ3_XXS for layers 4..27.
  EXPECT_EQ(type_of("IQ3_XS", f, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(5, "attn_q.weight"), {4096, 4096}), DType::IQ3_XXS);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(5, "attn_k.weight"), {4096, 1024}), DType::IQ3_XXS);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(3, "ffn_up.weight"), {4096, 14336}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(4, "ffn_up.weight"), {4096, 14336}), DType::IQ3_XXS);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(27, "ffn_gate.weight"), {4096, 14336}), DType::IQ3_XXS);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(28, "ffn_gate.weight"), {4096, 14336}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(4, "ffn_down.weight"), {14336, 4096}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_XS", f, "output.weight", {4096, 128256}), DType::Q6_K);
  EXPECT_EQ(type_of("IQ3_XS", f, "token_embd.weight", {4096, 128256}), DType::IQ3_S);
  // IQ3_S: attn_v Q4_K only for n_gqa >= 4.
  EXPECT_EQ(type_of("IQ3_S", f, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_S", mha, blk(5, "attn_v.weight"), {4096, 4096}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_S", f, blk(5, "attn_q.weight"), {4096, 4096}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_S", f, blk(0, "ffn_down.weight"), {14336, 4096}), DType::IQ3_S);
  // IQ3_M: attn_v and attn_output Q4_K, ffn_down Q4_K below n/8.
  EXPECT_EQ(type_of("IQ3_M", mha, blk(5, "attn_v.weight"), {4096, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_M", f, blk(5, "attn_output.weight"), {4096, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_M", f, blk(3, "ffn_down.weight"), {14336, 4096}), DType::Q4_K);
  EXPECT_EQ(type_of("IQ3_M", f, blk(4, "ffn_down.weight"), {14336, 4096}), DType::IQ3_S);
  EXPECT_EQ(type_of("IQ3_M", f, blk(5, "ffn_up.weight"), {4096, 14336}), DType::IQ3_S);
  // 8 experts: attn_output Q5_K, attn_v Q8_0 for every IQ3 mix.
  QuantModelFacts moe = f;
  moe.n_expert = 8;
  for (const char* p : {"IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M"}) {
    EXPECT_EQ(type_of(p, moe, blk(5, "attn_output.weight"), {4096, 4096}), DType::Q5_K) << p;
    EXPECT_EQ(type_of(p, moe, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q8_0) << p;
  }
}

TEST(QuantRules, IQ1PresetsOnLlama8B) {
  const QuantModelFacts f = llama8b();
  for (const auto& [p, t] : {std::pair{"IQ1_S", DType::IQ1_S}, std::pair{"IQ1_M", DType::IQ1_M}}) {
    // attn_v Q4_K (n_gqa >= 4), ffn_down Q2_K below n/8, attn_output IQ2_XXS; output Q5_K, token_embd Q2_K.
    EXPECT_EQ(type_of(p, f, blk(5, "attn_v.weight"), {4096, 1024}), DType::Q4_K) << p;
    EXPECT_EQ(type_of(p, f, blk(3, "ffn_down.weight"), {14336, 4096}), DType::Q2_K) << p;
    EXPECT_EQ(type_of(p, f, blk(4, "ffn_down.weight"), {14336, 4096}), t) << p;
    EXPECT_EQ(type_of(p, f, blk(5, "attn_output.weight"), {4096, 4096}), DType::IQ2_XXS) << p;
    EXPECT_EQ(type_of(p, f, blk(5, "attn_q.weight"), {4096, 4096}), t) << p;
    EXPECT_EQ(type_of(p, f, blk(5, "ffn_up.weight"), {4096, 14336}), t) << p;
    EXPECT_EQ(type_of(p, f, "output.weight", {4096, 128256}), DType::Q5_K) << p;
    EXPECT_EQ(type_of(p, f, "token_embd.weight", {4096, 128256}), DType::Q2_K) << p;
    QuantModelFacts mha = f;
    mha.n_head_kv = 32;
    EXPECT_EQ(type_of(p, mha, blk(5, "attn_v.weight"), {4096, 4096}), DType::Q2_K) << p;
    QuantModelFacts moe = mha;
    moe.n_expert = 8;  // n_expert >= 4: attn_v Q4_K; == 8: attn_k Q4_K, attn_output Q5_K
    EXPECT_EQ(type_of(p, moe, blk(5, "attn_v.weight"), {4096, 4096}), DType::Q4_K) << p;
    EXPECT_EQ(type_of(p, moe, blk(5, "attn_k.weight"), {4096, 4096}), DType::Q4_K) << p;
    EXPECT_EQ(type_of(p, moe, blk(5, "attn_output.weight"), {4096, 4096}), DType::Q5_K) << p;
    QuantModelFacts tied = f;
    tied.has_output = false;
    EXPECT_EQ(type_of(p, tied, "token_embd.weight", {4096, 128256}), DType::Q5_K) << p;
  }
}

TEST(QuantRules, ImportanceRequirement) {
  // tensor_requires_imatrix: the very-low-bit types, except for token_embd and output.
  for (DType t : {DType::IQ3_XXS, DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ1_S, DType::IQ1_M}) {
    EXPECT_TRUE(quant_needs_importance("blk.0.ffn_up.weight", t)) << dtype_name(t);
    EXPECT_FALSE(quant_needs_importance("token_embd.weight", t)) << dtype_name(t);
    EXPECT_FALSE(quant_needs_importance("output.weight", t)) << dtype_name(t);
  }
  for (DType t : {DType::IQ3_S, DType::Q2_K, DType::IQ4_XS, DType::Q4_K}) {
    EXPECT_FALSE(quant_needs_importance("blk.0.ffn_up.weight", t)) << dtype_name(t);
  }
}

// LLAMA_FTYPE_MOSTLY_TQ1_0 / TQ2_0: ternary everywhere but the output (Q6_K, or Q8_0 where its
// rows do not fit 256) and the token embeddings (Q4_K); rows that do not fit 256 fall back to Q4_0.
TEST(QuantRules, TernaryPresets) {
  const QuantModelFacts f = llama8b();
  const std::pair<const char*, DType> presets[] = {{"TQ1_0", DType::TQ1_0}, {"TQ2_0", DType::TQ2_0}};
  for (const auto& [preset, tq] : presets) {
    EXPECT_EQ(find_quant_preset(preset)->default_type, tq) << preset;
    EXPECT_EQ(type_of(preset, f, "output.weight", {4096, 128256}), DType::Q6_K) << preset;
    EXPECT_EQ(type_of(preset, f, "token_embd.weight", {4096, 128256}), DType::Q4_K) << preset;
    for (int i : {0, 5, 31}) {
      EXPECT_EQ(type_of(preset, f, blk(i, "attn_v.weight"), {4096, 1024}), tq) << preset << " " << i;
      EXPECT_EQ(type_of(preset, f, blk(i, "attn_output.weight"), {4096, 4096}), tq) << preset << " " << i;
      EXPECT_EQ(type_of(preset, f, blk(i, "ffn_down.weight"), {14336, 4096}), tq) << preset << " " << i;
    }
    EXPECT_EQ(type_of(preset, f, blk(3, "attn_q.weight"), {288, 288}), DType::Q4_0) << preset;
    EXPECT_EQ(type_of(preset, f, "output.weight", {288, 32000}), DType::Q8_0) << preset;
    EXPECT_EQ(type_of(preset, f, "blk.0.attn_norm.weight", {4096}), DType::F16) << preset;
    QuantModelFacts tied = f;
    tied.has_output = false;
    EXPECT_EQ(type_of(preset, tied, "token_embd.weight", {4096, 128256}), DType::Q6_K) << preset;
    QuantModelFacts moe8 = f;  // the 8-expert rule still bumps attn_v and attn_k
    moe8.n_expert = 8;
    EXPECT_EQ(type_of(preset, moe8, blk(2, "attn_v.weight"), {4096, 1024}), DType::Q8_0) << preset;
    EXPECT_EQ(type_of(preset, moe8, blk(2, "attn_k.weight"), {4096, 1024}), DType::Q8_0) << preset;
  }
}

// LLAMA_FTYPE_MOSTLY_MXFP4_MOE: the experts' 3-D tensors in MXFP4, every other quantized tensor
// (output and token embeddings included) in Q8_0.
TEST(QuantRules, Mxfp4MoePreset) {
  QuantModelFacts f = llama8b();
  f.n_expert = 8;
  EXPECT_EQ(find_quant_preset("mxfp4_moe")->default_type, DType::MXFP4);
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "ffn_up_exps.weight"), {4096, 14336, 8}), DType::MXFP4);
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "ffn_down_exps.weight"), {14336, 4096, 8}), DType::MXFP4);
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "ffn_up_exps.weight"), {4100, 14336, 8}), DType::F16);  // 32 misfit
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "ffn_up.weight"), {4096, 14336}), DType::Q8_0);
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "attn_v.weight"), {4096, 1024}), DType::Q8_0);
  EXPECT_EQ(type_of("MXFP4_MOE", f, "output.weight", {4096, 128256}), DType::Q8_0);
  EXPECT_EQ(type_of("MXFP4_MOE", f, "token_embd.weight", {4096, 128256}), DType::Q8_0);
  EXPECT_EQ(type_of("MXFP4_MOE", f, blk(1, "ffn_gate_inp.weight"), {4096, 8}), DType::F16);  // router: never
  QuantModelFacts bailing = f;  // its MLA projections are 3-D as well, but not experts
  bailing.arch = "bailingmoe3";
  EXPECT_EQ(type_of("MXFP4_MOE", bailing, blk(1, "attn_kv_b.weight"), {512, 128, 16}), DType::Q8_0);
  EXPECT_EQ(type_of("MXFP4_MOE", bailing, blk(1, "ffn_gate_exps.weight"), {4096, 1408, 64}), DType::MXFP4);
}

TEST(QuantRules, RowLengthFallbacks) {
  const QuantModelFacts f = llama8b();
  EXPECT_EQ(type_of("Q4_K_M", f, blk(8, "attn_q.weight"), {288, 288}), DType::Q5_0);   // Q4_K -> Q5_0
  EXPECT_EQ(type_of("Q5_K_M", f, blk(8, "attn_q.weight"), {288, 288}), DType::Q5_1);   // Q5_K -> Q5_1
  EXPECT_EQ(type_of("Q6_K", f, blk(8, "attn_q.weight"), {288, 288}), DType::Q8_0);     // Q6_K -> Q8_0
  EXPECT_EQ(type_of("Q2_K", f, blk(8, "attn_q.weight"), {288, 288}), DType::Q4_0);     // Q2_K -> Q4_0
  EXPECT_EQ(type_of("Q6_K", f, blk(8, "attn_q.weight"), {100, 288}), DType::F16);      // Q8_0 does not fit either
  EXPECT_EQ(type_of("Q4_0", f, "output.weight", {288, 32000}), DType::Q8_0);           // Q6_K -> Q8_0
  EXPECT_EQ(type_of("Q4_0", f, blk(8, "ffn_down.weight"), {172, 64}), DType::F16);     // no 32-multiple: F16
  // The i-quants fall back to IQ4_NL, the mixes' Q2_K to Q4_0, IQ3_S to IQ4_NL.
  EXPECT_EQ(type_of("IQ2_XXS", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ2_XS", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ2_M", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);   // IQ2_S
  EXPECT_EQ(type_of("IQ2_M", f, blk(8, "attn_output.weight"), {288, 288}), DType::IQ4_NL);  // IQ3_S
  EXPECT_EQ(type_of("IQ2_XXS", f, blk(0, "ffn_down.weight"), {288, 288}), DType::Q4_0);  // Q2_K
  EXPECT_EQ(type_of("IQ2_XXS", f, "output.weight", {288, 32000}), DType::Q8_0);
  EXPECT_EQ(type_of("IQ2_S", f, blk(8, "attn_q.weight"), {100, 288}), DType::F16);
  // The grid i-quants fall back to IQ4_NL.
  EXPECT_EQ(type_of("IQ3_S", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ3_XS", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);   // IQ3_XXS
  EXPECT_EQ(type_of("IQ1_S", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ1_M", f, blk(8, "ffn_up.weight"), {288, 768}), DType::IQ4_NL);
  EXPECT_EQ(type_of("IQ3_XXS", f, blk(8, "attn_q.weight"), {288, 288}), DType::IQ4_NL);  // IQ2_S
  EXPECT_EQ(type_of("IQ1_S", f, blk(8, "attn_output.weight"), {288, 288}), DType::IQ4_NL);  // IQ2_XXS
  EXPECT_EQ(type_of("IQ3_S", f, blk(8, "attn_q.weight"), {100, 288}), DType::F16);
}

// ---- whole files: stories260K (dim 64, ffn 172, 5 layers, 8 heads / 4 KV heads, vocab 512)

struct Expect {
  DType rows64;     // 2-D tensors with rows of 64 not otherwise singled out
  DType token_embd;
  DType output;     // output.weight
  DType attn_v;     // attn_v of layers without extra bits
  DType attn_v_more;  // attn_v of use_more_bits(i, 5) layers: 2 and 4
  DType attn_v_first; // attn_v of layers 0 and 1 (Q3_K_M's first two)
  DType attn_output;
  DType ffn_down;   // rows of 172: nothing with 32-blocks fits, so F16
};

std::map<std::string, Expect> expected_stories260k() {
  using D = DType;
  // K-quants fall back for rows of 64: Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0.
  // n_gqa = 2, so no n_gqa >= 4 rule applies.
  return {
      {"Q4_0", {D::Q4_0, D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::Q4_0, D::F16}},
      {"Q4_1", {D::Q4_1, D::Q4_1, D::Q8_0, D::Q4_1, D::Q4_1, D::Q4_1, D::Q4_1, D::F16}},
      {"Q5_0", {D::Q5_0, D::Q5_0, D::Q8_0, D::Q5_0, D::Q5_0, D::Q5_0, D::Q5_0, D::F16}},
      {"Q5_1", {D::Q5_1, D::Q5_1, D::Q8_0, D::Q5_1, D::Q5_1, D::Q5_1, D::Q5_1, D::F16}},
      {"Q8_0", {D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::F16}},
      {"Q2_K", {D::Q4_0, D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::Q4_0, D::F16}},  // attn_v/out Q3_K -> Q4_0
      {"Q3_K_M", {D::Q4_0, D::Q4_0, D::Q8_0, D::Q5_0, D::Q5_0, D::Q5_1, D::Q5_0, D::F16}},
      {"Q4_K_M", {D::Q5_0, D::Q5_0, D::Q8_0, D::Q5_0, D::Q8_0, D::Q5_0, D::Q5_0, D::F16}},
      {"Q5_K_M", {D::Q5_1, D::Q5_1, D::Q8_0, D::Q5_1, D::Q8_0, D::Q5_1, D::Q5_1, D::F16}},
      {"Q6_K", {D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::F16}},
      {"IQ4_NL", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      // IQ2 mixes: IQ2_* fall back to IQ4_NL, the Q2_K of token_embd / attn_v to Q4_0, IQ3_S to IQ4_NL;
      // output Q5_K needs rows of 256, so Q8_0. Nothing is left needing an importance matrix.
      {"IQ2_XXS", {D::IQ4_NL, D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::IQ4_NL, D::F16}},
      {"IQ2_XS", {D::IQ4_NL, D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::IQ4_NL, D::F16}},
      {"IQ2_S", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      {"IQ2_M", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      // The IQ3 mixes' 256-blocks fall back to IQ4_NL (IQ2_S of IQ3_XXS's attn_q/attn_k, and the
      // IQ3_S of every token_embd, too);
      // IQ3_M's attn_v and attn_output Q4_K -> Q5_0.
      {"IQ3_XXS", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      {"IQ3_XS", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      {"IQ3_S", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
      {"IQ3_M", {D::IQ4_NL, D::IQ4_NL, D::Q8_0, D::Q5_0, D::Q5_0, D::Q5_0, D::Q5_0, D::F16}},
  };
}

DType expected_type(const Expect& e, const std::string& name) {
  if (name.find("_norm.weight") != std::string::npos) return DType::F32;
  if (name == "output.weight") return e.output;
  if (name == "token_embd.weight") return e.token_embd;
  if (name.find("ffn_down") != std::string::npos) return e.ffn_down;
  if (name.find("attn_output") != std::string::npos) return e.attn_output;
  if (name.find("attn_v.weight") != std::string::npos) {
    const int layer = name[4] - '0';
    if (layer == 2 || layer == 4) return e.attn_v_more;  // use_more_bits(i, 5): (i % 3 == 2) or i >= 4
    if (layer < 2) return e.attn_v_first;
    return e.attn_v;
  }
  return e.rows64;
}

// Relative RMSE allowed per stored type: about three times its error on Gaussian data.
double tolerance(DType t) {
  switch (t) {
    case DType::F32: return 0.0;
    case DType::F16: return 1e-3;
    case DType::Q8_0: return 0.02;
    case DType::Q5_0: case DType::Q5_1: return 0.13;
    case DType::Q4_0: case DType::Q4_1: case DType::IQ4_NL: return 0.26;
    default: return 0.0;
  }
}

std::vector<float> to_floats(const gguf::TensorInfo& t) {
  std::vector<float> v(t.n_elements);
  quant_traits(t.type).to_float(t.data, v.data(), static_cast<int64_t>(t.n_elements));
  return v;
}

TEST(QuantizeGguf, Stories260KEveryPreset) {
  const std::string in_path = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(in_path)) GTEST_SKIP() << "missing " << in_path;
  auto in = gguf::GgufFile::open(in_path);
  ASSERT_TRUE(in.ok()) << in.status().message();
  const std::string out_path = testing::TempDir() + "oxidize_quantize_test.gguf";
  for (const auto& [preset, expect] : expected_stories260k()) {
    SCOPED_TRACE(preset);
    const Status st = quantize_gguf(in_path, out_path, preset, 2);
    ASSERT_TRUE(st.is_ok()) << st.message();
    auto out = gguf::GgufFile::open(out_path);
    ASSERT_TRUE(out.ok()) << out.status().message();
    // Metadata: every input key copied unchanged, plus the two quantization keys.
    for (const auto& [key, value] : (*in)->metadata()) {
      if (key == "general.file_type") continue;
      const gguf::Value* v = (*out)->find(key);
      ASSERT_NE(v, nullptr) << key;
      EXPECT_EQ(gguf::encode_value(*v).bytes, gguf::encode_value(value).bytes) << key;
    }
    EXPECT_EQ((*out)->get_u32("general.file_type").value(), find_quant_preset(preset)->llama_ftype);
    EXPECT_EQ((*out)->get_u32("general.quantization_version").value(), 2u);
    ASSERT_EQ((*out)->tensors().size(), (*in)->tensors().size());
    for (const gguf::TensorInfo& t : (*in)->tensors()) {
      const gguf::TensorInfo* q = (*out)->find_tensor(t.name);
      ASSERT_NE(q, nullptr) << t.name;
      EXPECT_EQ(q->dims, t.dims) << t.name;
      const DType want = expected_type(expect, t.name);
      EXPECT_EQ(q->type, want) << t.name << ": " << dtype_name(q->type) << " vs " << dtype_name(want);
      const std::vector<float> a = to_floats(t), b = to_floats(*q);
      double err = 0, ref = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        err += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        ref += static_cast<double>(a[i]) * a[i];
      }
      EXPECT_LE(std::sqrt(err / ref), tolerance(q->type)) << t.name << " " << dtype_name(q->type);
    }
  }
  std::remove(out_path.c_str());
}

// A small Llama-like file with rows of 256, so that the grid i-quants are used as such.
std::string write_rows256_model(const std::string& path) {
  gguf::GgufWriter w;
  EXPECT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  EXPECT_TRUE(w.add_u32("llama.block_count", 1).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count", 4).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count_kv", 4).is_ok());
  uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::vector<float> v(n);
    for (float& x : v) {  // sums of uniforms: roughly Gaussian, deterministic everywhere
      float sum = 0.0f;
      for (int k = 0; k < 4; ++k) {
        seed = seed * 1664525u + 1013904223u;
        sum += static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
      }
      x = 0.02f * sum;
    }
    EXPECT_TRUE(w.add_tensor(name, dims, DType::F32,
                             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), n * 4))
                    .is_ok());
  };
  add("token_embd.weight", {256, 32});
  add("blk.0.attn_norm.weight", {256});
  add("blk.0.attn_q.weight", {256, 256});
  add("blk.0.attn_output.weight", {256, 256});
  add("blk.0.ffn_up.weight", {256, 64});
  add("output.weight", {256, 32});
  EXPECT_TRUE(w.write_file(path).is_ok());
  return path;
}

TEST(QuantizeGguf, GridIQuantPresets) {
  const std::string in_path = write_rows256_model(testing::TempDir() + "oxidize_quantize_rows256.gguf");
  const std::string out_path = testing::TempDir() + "oxidize_quantize_rows256_out.gguf";
  auto in = gguf::GgufFile::open(in_path);
  ASSERT_TRUE(in.ok()) << in.status().message();
  // IQ3_S / IQ3_M quantize without an importance matrix. Relative RMSE: IQ3_S measures ~0.17 on
  // Gaussian data without importance (quantize_test.cpp's golden figures), so 0.25 passes it with
  // room and fails a broken format; Q4_K (IQ3_M's attn_output) ~0.07, Q6_K ~0.02.
  const std::map<std::string, std::map<std::string, DType>> want = {
      {"IQ3_S", {{"token_embd.weight", DType::IQ3_S}, {"blk.0.attn_q.weight", DType::IQ3_S},
                 {"blk.0.attn_output.weight", DType::IQ3_S}, {"blk.0.ffn_up.weight", DType::IQ3_S},
                 {"output.weight", DType::Q6_K}, {"blk.0.attn_norm.weight", DType::F32}}},
      {"IQ3_M", {{"token_embd.weight", DType::IQ3_S}, {"blk.0.attn_q.weight", DType::IQ3_S},
                 {"blk.0.attn_output.weight", DType::Q4_K}, {"blk.0.ffn_up.weight", DType::IQ3_S},
                 {"output.weight", DType::Q6_K}, {"blk.0.attn_norm.weight", DType::F32}}},
  };
  for (const auto& [preset, types] : want) {
    SCOPED_TRACE(preset);
    const Status st = quantize_gguf(in_path, out_path, preset, 2);
    ASSERT_TRUE(st.is_ok()) << st.message();
    auto out = gguf::GgufFile::open(out_path);
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (const gguf::TensorInfo& t : (*in)->tensors()) {
      const gguf::TensorInfo* q = (*out)->find_tensor(t.name);
      ASSERT_NE(q, nullptr) << t.name;
      EXPECT_EQ(q->type, types.at(t.name)) << t.name << ": " << dtype_name(q->type);
      const std::vector<float> a = to_floats(t), b = to_floats(*q);
      double err = 0, ref = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        err += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        ref += static_cast<double>(a[i]) * a[i];
      }
      const double limit = q->type == DType::IQ3_S ? 0.25 : q->type == DType::Q4_K ? 0.1 : q->type == DType::Q6_K ? 0.03 : 0.0;
      EXPECT_LE(std::sqrt(err / ref), limit) << t.name << " " << dtype_name(q->type);
    }
  }
  // IQ3_XXS (ffn_up stays IQ3_XXS without an imatrix) and IQ1_S / IQ1_M need an importance
  // matrix for some tensors: refused, as llama-quantize refuses, and nothing is written.
  std::remove(out_path.c_str());
  for (const char* preset : {"IQ3_XXS", "IQ3_XS", "IQ1_S", "IQ1_M"}) {
    const Status st = quantize_gguf(in_path, out_path, preset, 1);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << preset << ": " << st.message();
    EXPECT_NE(st.message().find("importance matrix"), std::string::npos) << st.message();
    EXPECT_FALSE(test::file_exists(out_path)) << preset;
  }
  std::remove(in_path.c_str());
}

// --dry-run: the same types and sizes as the real run, nothing written, and a preset that needs an
// importance matrix reported instead of refused. --override-kv: values set after the keys
// llama-quantize sets, replacing a key of the same name (general.file_type here), last one winning.
TEST(QuantizeGguf, DryRunAndMetadataOverrides) {
  const std::string in_path = write_rows256_model(testing::TempDir() + "oxidize_quantize_dry.gguf");
  const std::string out_path = testing::TempDir() + "oxidize_quantize_dry_out.gguf";
  std::remove(out_path.c_str());
  std::vector<std::pair<std::string, DType>> dry_types, real_types;
  QuantizeOptions dry;
  dry.dry_run = true;
  auto record_dry = [&](const QuantizeTensorEvent& e) { dry_types.emplace_back(std::string(e.name), e.to); };
  Result<QuantizeStats> d = quantize_gguf(in_path, out_path, "Q4_K_M", dry, record_dry);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_FALSE(test::file_exists(out_path));
  EXPECT_TRUE(d.value().needs_imatrix.empty());

  QuantizeOptions real;
  for (const char* text : {"general.name=str:renamed", "general.file_type=int:7", "test.scale=float:0.5",
                           "general.name=str:last wins", "test.flag=bool:true"}) {
    Result<gguf::KvOverride> kv = gguf::parse_kv_override(text, "--override-kv");
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    real.override_kv.push_back(kv.value());
  }
  auto record_real = [&](const QuantizeTensorEvent& e) { real_types.emplace_back(std::string(e.name), e.to); };
  Result<QuantizeStats> r = quantize_gguf(in_path, out_path, "Q4_K_M", real, record_real);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(dry_types, real_types);
  EXPECT_EQ(d.value().bytes_out, r.value().bytes_out);
  EXPECT_EQ(d.value().bytes_in, r.value().bytes_in);
  auto out = gguf::GgufFile::open(out_path);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const auto& md = (*out)->metadata();
  ASSERT_GE(md.size(), 5u);
  std::vector<std::string> tail;
  for (size_t i = md.size() - 5; i < md.size(); ++i) tail.push_back(md[i].first);
  EXPECT_EQ(tail, (std::vector<std::string>{"general.quantization_version", "general.file_type", "test.scale",
                                            "general.name", "test.flag"}));
  EXPECT_EQ((*out)->get_u32("general.file_type").value(), 7u);
  EXPECT_EQ((*out)->get_string("general.name").value(), "last wins");
  EXPECT_EQ(md[md.size() - 3].second.type, gguf::ValueType::FLOAT32);
  EXPECT_EQ(md[md.size() - 3].second.f, 0.5);
  EXPECT_EQ(md.back().second.type, gguf::ValueType::BOOL);
  EXPECT_EQ(md.back().second.u, 1u);
  std::remove(out_path.c_str());

  // IQ1_S needs an importance matrix: the dry run completes and names a tensor that needs one.
  auto ignore = [](const QuantizeTensorEvent&) {};
  Result<QuantizeStats> iq = quantize_gguf(in_path, "", "IQ1_S", dry, ignore);
  ASSERT_TRUE(iq.ok()) << iq.status().message();
  EXPECT_FALSE(iq.value().needs_imatrix.empty());
  std::remove(in_path.c_str());
}

// COPY (llama-quantize's only_copy): every tensor keeps its type and bytes, a quantized one without
// allow_requantize too; general.file_type is the input's, or without one llama.cpp's guess from the
// most common tensor type with its "guessed" flag (1024): the values llama-quantize COPY wrote for
// these layouts.
TEST(QuantizeGguf, CopyKeepsEveryTensorAndTheFileType) {
  const std::string f32_path = write_rows256_model(testing::TempDir() + "oxidize_quantize_copy_f32.gguf");
  const std::string q8_path = testing::TempDir() + "oxidize_quantize_copy_q8.gguf";
  const std::string out_path = testing::TempDir() + "oxidize_quantize_copy_out.gguf";
  auto ignore = [](const QuantizeTensorEvent&) {};
  ASSERT_TRUE(quantize_gguf(f32_path, q8_path, "Q8_0", QuantizeOptions{}, ignore).ok());
  Result<QuantizeStats> r = quantize_gguf(q8_path, out_path, "copy", QuantizeOptions{}, ignore);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->bytes_in, r->bytes_out);
  auto in = gguf::GgufFile::open(q8_path);
  auto out = gguf::GgufFile::open(out_path);
  ASSERT_TRUE(in.ok() && out.ok());
  EXPECT_EQ((*out)->get_u32("general.file_type").value(), 7u);
  ASSERT_EQ((*out)->tensors().size(), (*in)->tensors().size());
  size_t n_quantized = 0;
  for (const gguf::TensorInfo& t : (*in)->tensors()) {
    const gguf::TensorInfo* c = (*out)->find_tensor(t.name);
    ASSERT_NE(c, nullptr) << t.name;
    EXPECT_EQ(c->type, t.type) << t.name;
    EXPECT_EQ(c->dims, t.dims) << t.name;
    EXPECT_TRUE(std::equal(t.data, t.data + t.n_bytes, c->data, c->data + c->n_bytes)) << t.name;
    n_quantized += t.type == DType::Q8_0 ? 1 : 0;
  }
  EXPECT_GT(n_quantized, 0u);

  (*out).reset();  // (unmapped before it is rewritten)
  ASSERT_TRUE(quantize_gguf(f32_path, out_path, "COPY", QuantizeOptions{}, ignore).ok());
  out = gguf::GgufFile::open(out_path);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->get_u32("general.file_type").value(), 1024u);  // LLAMA_FTYPE_ALL_F32, guessed

  // Three F16 tensors of five: MOSTLY_F16 (1), guessed.
  gguf::GgufWriter w;
  ASSERT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  ASSERT_TRUE(w.add_u32("llama.block_count", 1).is_ok());
  const std::vector<uint8_t> zeros(256 * 256 * 4);
  auto add = [&](const char* name, std::vector<uint64_t> dims, DType type) {
    const uint64_t n = dims.size() == 1 ? dims[0] : dims[0] * dims[1];
    ASSERT_TRUE(w.add_tensor(name, dims, type, std::span<const uint8_t>(zeros.data(), n * (type == DType::F16 ? 2 : 4)))
                    .is_ok());
  };
  add("token_embd.weight", {256, 32}, DType::F16);
  add("blk.0.attn_norm.weight", {256}, DType::F32);
  add("blk.0.attn_q.weight", {256, 256}, DType::F16);
  add("blk.0.ffn_up.weight", {256, 64}, DType::F32);
  add("output.weight", {256, 32}, DType::F16);
  ASSERT_TRUE(w.write_file(f32_path).is_ok());
  (*out).reset();
  ASSERT_TRUE(quantize_gguf(f32_path, out_path, "COPY", QuantizeOptions{}, ignore).ok());
  out = gguf::GgufFile::open(out_path);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->get_u32("general.file_type").value(), 1025u);
  std::remove(f32_path.c_str());
  std::remove(q8_path.c_str());
  std::remove(out_path.c_str());
}

TEST(KvOverride, ParsedStrictly) {
  auto message = [](const char* text) {
    Result<gguf::KvOverride> r = gguf::parse_kv_override(text, "--override-kv");
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message("a.b=int:4294967295"), "ok");
  EXPECT_EQ(message("a.b=float:-1.5e3"), "ok");
  EXPECT_EQ(message("a.b=str:"), "ok");
  EXPECT_NE(message("a.b").find("expected KEY=TYPE:VALUE"), std::string::npos);
  EXPECT_NE(message("=int:1").find("expected KEY=TYPE:VALUE"), std::string::npos);
  EXPECT_NE(message("a.b=u8:1").find("the type must be int:, float:, bool: or str:"), std::string::npos);
  EXPECT_NE(message("a.b=int:-3").find("int: takes a whole number in 0..4294967295"), std::string::npos);
  EXPECT_NE(message("a.b=int:12x").find("int: takes a whole number"), std::string::npos);
  EXPECT_NE(message("a.b=int:4294967296").find("int: takes a whole number"), std::string::npos);
  EXPECT_NE(message("a.b=float:1e99").find("float: takes a finite number"), std::string::npos);
  EXPECT_NE(message("a.b=float:").find("float: takes a finite number"), std::string::npos);
  EXPECT_NE(message("a.b=bool:yes").find("bool: takes true or false"), std::string::npos);
  EXPECT_NE(message(("a.b=str:" + std::string(128, 'x')).c_str()).find("at most 127 bytes"), std::string::npos);
  EXPECT_NE(message((std::string(128, 'k') + "=int:1").c_str()).find("longer than 127 bytes"), std::string::npos);
}

TEST(QuantizeGguf, Errors) {
  const std::string in_path = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(in_path)) GTEST_SKIP() << "missing " << in_path;
  const std::string out_path = testing::TempDir() + "oxidize_quantize_err.gguf";
  Status st = quantize_gguf(in_path, out_path, "Q9_9", 1);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Q4_K_M"), std::string::npos);  // lists the known presets
  st = quantize_gguf(testing::TempDir() + "does_not_exist.gguf", out_path, "Q8_0", 1);
  EXPECT_FALSE(st.is_ok());
  EXPECT_FALSE(test::file_exists(out_path));
  // A quantized input is not requantized to another type unless allowed (llama-quantize's
  // "requantizing from type q8_0 is disabled").
  ASSERT_TRUE(quantize_gguf(in_path, out_path, "Q8_0", 1).is_ok());
  const std::string out2 = testing::TempDir() + "oxidize_quantize_err2.gguf";
  st = quantize_gguf(out_path, out2, "Q4_0", 1);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("tensor 'token_embd.weight' is already Q8_0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--allow-requantize"), std::string::npos) << st.message();
  EXPECT_FALSE(test::file_exists(out2));
  QuantizeOptions allow;
  allow.allow_requantize = true;
  auto ignore = [](const QuantizeTensorEvent&) {};
  const Result<QuantizeStats> r = quantize_gguf(out_path, out2, "Q4_0", allow, ignore);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto requantized = gguf::GgufFile::open(out2);
  ASSERT_TRUE(requantized.ok());
  EXPECT_EQ((*requantized)->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_0);
  EXPECT_EQ((*requantized)->find_tensor("output.weight")->type, DType::Q8_0);  // already the rules' type: copied
  // An explicit type whose block does not divide the rows is refused by name, not crashed on.
  QuantizeOptions k;
  k.types.output_type = DType::Q4_K;
  st = quantize_gguf(in_path, out2, "Q4_0", k, ignore).status();
  EXPECT_NE(st.message().find("tensor 'output.weight': its rows of 64 are not a multiple of Q4_K's block of 256"),
            std::string::npos) << st.message();
  std::remove(out_path.c_str());
  std::remove(out2.c_str());
}

// ---- llama-quantize's flags. Checked against llama-quantize (llama.cpp de3ff81) on stories260K:
// --pure Q4_K_M, --output-tensor-type q4_1 --token-embedding-type q5_0 Q4_K_M and
// --leave-output-tensor Q4_K_M gave these types for all 48 tensors.

TEST(QuantRules, PureSkipsTheMixesButNotTheFallbacks) {
  const QuantModelFacts f = llama8b();
  QuantTypeOptions pure;
  pure.pure = true;
  const QuantPreset& q4km = *find_quant_preset("Q4_K_M");
  auto type = [&](const std::string& name, std::vector<uint64_t> dims, const QuantTypeOptions& o) {
    return quant_tensor_type(q4km, f, name, dims, DType::F16, o);
  };
  EXPECT_EQ(type(blk(0, "attn_v.weight"), {4096, 1024}, pure), DType::Q4_K);  // Q6_K without --pure
  EXPECT_EQ(type(blk(0, "ffn_down.weight"), {14336, 4096}, pure), DType::Q4_K);
  EXPECT_EQ(type("output.weight", {4096, 128256}, pure), DType::Q4_K);         // Q6_K without --pure
  EXPECT_EQ(type(blk(0, "attn_q.weight"), {288, 288}, pure), DType::Q5_0);     // the fallback still applies
  EXPECT_EQ(type("blk.0.attn_norm.weight", {4096}, pure), DType::F16);
}

TEST(QuantRules, ExplicitOutputAndEmbeddingTypes) {
  const QuantModelFacts f = llama8b();
  const QuantPreset& q4km = *find_quant_preset("Q4_K_M");
  QuantTypeOptions o;
  o.output_type = DType::Q4_1;
  o.token_embd_type = DType::Q5_0;
  EXPECT_EQ(quant_tensor_type(q4km, f, "output.weight", std::vector<uint64_t>{4096, 128256}, DType::F16, o), DType::Q4_1);
  EXPECT_EQ(quant_tensor_type(q4km, f, "token_embd.weight", std::vector<uint64_t>{4096, 128256}, DType::F16, o),
            DType::Q5_0);
  o.pure = true;  // taken before --pure is looked at
  EXPECT_EQ(quant_tensor_type(q4km, f, "output.weight", std::vector<uint64_t>{4096, 128256}, DType::F16, o), DType::Q4_1);
  // Tied embeddings: token_embd is the output, so --output-tensor-type gives its type.
  QuantModelFacts tied = f;
  tied.has_output = false;
  QuantTypeOptions out_only;
  out_only.output_type = DType::Q8_0;
  EXPECT_EQ(quant_tensor_type(q4km, tied, "token_embd.weight", std::vector<uint64_t>{4096, 128256}, DType::F16, out_only),
            DType::Q8_0);
  // --leave-output-tensor: output.weight keeps its type.
  QuantTypeOptions leave;
  leave.quantize_output = false;
  EXPECT_EQ(quant_tensor_type(q4km, f, "output.weight", std::vector<uint64_t>{4096, 128256}, DType::F16, leave), DType::F16);
}

// --tensor-type. The layer shift is llama.cpp's: its attn_v counter (i_attention_wv) is only
// advanced by tensors its rules typed, so after a named blk.0.attn_v the attn_v of layer L is
// typed as layer L - 1. Q4_K_M, 8 layers: use_more_bits(i, 8) holds for i = 0, 3, 6, 7.
TEST(QuantRules, TensorTypePatternsAndTheCountersThatSkipThem) {
  QuantModelFacts f = llama8b();
  f.n_layer = 8;
  f.n_attention_wv = 8;
  const QuantPreset& q4km = *find_quant_preset("Q4_K_M");
  QuantTypeOptions o;
  o.tensor_types.push_back(parse_tensor_type_override("BLK\\.0\\.attn_v=q8_0").value());  // lower-cased
  o.tensor_types.push_back(parse_tensor_type_override("ffn_(up|gate)=Q5_0").value());
  o.tensor_types.push_back(parse_tensor_type_override("ffn=iq4_nl").value());  // never reached for up/gate
  Result<QuantTypePlan> plan = QuantTypePlan::create(q4km, f, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::vector<DType> attn_v;
  for (int layer = 0; layer < 8; ++layer) {
    const QuantTypePlan::Choice v = plan.value().next(blk(layer, "attn_v.weight"), std::vector<uint64_t>{4096, 1024},
                                                      DType::F16);
    EXPECT_EQ(v.manual, layer == 0) << layer;
    attn_v.push_back(v.type);
    EXPECT_EQ(plan.value().next(blk(layer, "ffn_up.weight"), std::vector<uint64_t>{4096, 14336}, DType::F16).type,
              DType::Q5_0);
    EXPECT_EQ(plan.value().next(blk(layer, "ffn_down.weight"), std::vector<uint64_t>{14336, 4096}, DType::F16).type,
              DType::IQ4_NL);
  }
  const std::vector<DType> want = {DType::Q8_0, DType::Q6_K, DType::Q4_K, DType::Q4_K,
                                   DType::Q6_K, DType::Q4_K, DType::Q4_K, DType::Q6_K};
  EXPECT_EQ(attn_v, want);
  // A pattern's type still meets the row-length fallback; norms are never quantized.
  EXPECT_EQ(plan.value().next(blk(0, "ffn_up.weight"), std::vector<uint64_t>{100, 768}, DType::F16).type, DType::F16);
  EXPECT_EQ(plan.value().next("blk.0.ffn_norm.weight", std::vector<uint64_t>{4096}, DType::F32).type, DType::F32);
}

TEST(QuantRules, TensorTypeTextsAreCheckedByName) {
  auto message = [](const char* text) {
    Result<TensorTypeOverride> r = parse_tensor_type_override(text);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message("attn_q=q8_0"), "ok");
  EXPECT_NE(message("attn_q").find("expected PATTERN=TYPE"), std::string::npos);
  EXPECT_NE(message("=q8_0").find("the pattern is empty"), std::string::npos);
  EXPECT_NE(message("attn_q=").find("the type is missing"), std::string::npos);
  EXPECT_NE(message("attn_q=q9_9").find("'q9_9' is not a GGUF type name"), std::string::npos);
  EXPECT_NE(message("blk\\.\\d+\\.attn_q=q8_0").find("'\\d' is not supported"), std::string::npos);
  EXPECT_NE(message("blk\\.\\d+\\.attn_q=q8_0").find("write [0-9]"), std::string::npos);
  EXPECT_NE(message("(?:attn)_q=q8_0").find("'(?' groups"), std::string::npos);
  EXPECT_NE(message("attn_(q=q8_0").find("--tensor-type pattern 'attn_(q': "), std::string::npos);
  EXPECT_EQ(message("a\\\\d=q8_0"), "ok");  // an escaped backslash, then a plain d
  // The pattern is searched anywhere in the name, as std::regex_search.
  const TensorPattern p = TensorPattern::compile("blk\\.(0|1)\\.ffn_down").value();
  EXPECT_TRUE(p.matches("blk.1.ffn_down.weight"));
  EXPECT_FALSE(p.matches("blk.10.ffn_down.weight"));
  EXPECT_TRUE(TensorPattern::compile("^output").value().matches("output.weight"));
  EXPECT_FALSE(TensorPattern::compile("^output").value().matches("blk.0.output.weight"));
}

TEST(QuantRules, WithAnImatrixTheFirstEighthOfFfnDown) {
  // llama_tensor_get_type_impl: with an imatrix, Q4_0/Q5_0 give the ffn_down of layers below
  // n_layer / 8 (= 4 here) Q4_1/Q5_1, and IQ4_NL/IQ4_XS keep their type there instead of Q5_K.
  const QuantModelFacts f = llama8b();
  QuantTypeOptions im;
  im.has_imatrix = true;
  auto type = [&](const char* preset, int layer, const QuantTypeOptions& o) {
    return quant_tensor_type(*find_quant_preset(preset), f, blk(layer, "ffn_down.weight"),
                             std::vector<uint64_t>{14336, 4096}, DType::F16, o);
  };
  EXPECT_EQ(type("Q4_0", 3, im), DType::Q4_1);
  EXPECT_EQ(type("Q4_0", 4, im), DType::Q4_0);
  EXPECT_EQ(type("Q4_0", 3, {}), DType::Q4_0);
  EXPECT_EQ(type("Q5_0", 0, im), DType::Q5_1);
  EXPECT_EQ(type("IQ4_NL", 3, im), DType::IQ4_NL);
  EXPECT_EQ(type("IQ4_NL", 3, {}), DType::Q5_K);
  EXPECT_EQ(type("IQ4_XS", 2, im), DType::IQ4_XS);
}

// A tensor whose rows fit IQ2_XXS needs an importance matrix, which quantize_gguf does not take
// (yet): refused before any output is written, as llama-quantize without --imatrix refuses.
TEST(QuantizeGguf, IQ2NeedsImportance) {
  gguf::GgufWriter w;
  ASSERT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  ASSERT_TRUE(w.add_u32("llama.block_count", 1).is_ok());
  ASSERT_TRUE(w.add_u32("llama.attention.head_count", 4).is_ok());
  const std::vector<float> values(256 * 4, 0.5f);
  const uint64_t dims[2] = {256, 4};
  ASSERT_TRUE(w.add_tensor("blk.0.attn_q.weight", dims, DType::F32,
                           std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4))
                  .is_ok());
  const std::string in_path = testing::TempDir() + "oxidize_quantize_iq2_in.gguf";
  const std::string out_path = testing::TempDir() + "oxidize_quantize_iq2_out.gguf";
  ASSERT_TRUE(w.write_file(in_path).is_ok());
  for (const char* preset : {"IQ2_XXS", "IQ2_XS", "IQ2_S"}) {
    const Status st = quantize_gguf(in_path, out_path, preset, 1);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << preset << ": " << st.message();
    EXPECT_NE(st.message().find("importance"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("blk.0.attn_q.weight"), std::string::npos) << st.message();
    EXPECT_FALSE(test::file_exists(out_path)) << preset;
  }
  std::remove(in_path.c_str());
}

}  // namespace
}  // namespace ox
