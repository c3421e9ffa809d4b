// quantize_gguf and its type rules. The expected types are worked out by hand here from llama.cpp's
// rules (src/llama-quant.cpp) for the model shapes used, not computed by the code under test.
// (Also checked once outside CI: for 16 presets on stories260K, a synthetic tiny-15M and the 15
// zoo models, every tensor type matched llama.cpp's own llama_model_quantize from the npm
// package @node-llama-cpp/linux-x64 3.22.1.)
#include "core/tools/quantize.h"

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
      {"TQ1_0", 36},  {"TQ2_0", 37},  {"MXFP4_MOE", 38}};
  for (const auto& [name, ftype] : ftypes) {
    const QuantPreset* p = find_quant_preset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->llama_ftype, ftype) << name;
  }
  EXPECT_EQ(find_quant_preset("Q4_K_M")->default_type, DType::Q4_K);
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
}

// ---- whole files: stories260K (dim 64, ffn 172, 5 layers, 8 heads / 4 KV heads, vocab 512)

struct Expect {
  DType rows64;     // 2-D tensors with rows of 64 not otherwise singled out
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
      {"Q4_0", {D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::Q4_0, D::F16}},
      {"Q4_1", {D::Q4_1, D::Q8_0, D::Q4_1, D::Q4_1, D::Q4_1, D::Q4_1, D::F16}},
      {"Q5_0", {D::Q5_0, D::Q8_0, D::Q5_0, D::Q5_0, D::Q5_0, D::Q5_0, D::F16}},
      {"Q5_1", {D::Q5_1, D::Q8_0, D::Q5_1, D::Q5_1, D::Q5_1, D::Q5_1, D::F16}},
      {"Q8_0", {D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::F16}},
      {"Q2_K", {D::Q4_0, D::Q8_0, D::Q4_0, D::Q4_0, D::Q4_0, D::Q4_0, D::F16}},  // attn_v/out Q3_K -> Q4_0
      {"Q3_K_M", {D::Q4_0, D::Q8_0, D::Q5_0, D::Q5_0, D::Q5_1, D::Q5_0, D::F16}},
      {"Q4_K_M", {D::Q5_0, D::Q8_0, D::Q5_0, D::Q8_0, D::Q5_0, D::Q5_0, D::F16}},
      {"Q5_K_M", {D::Q5_1, D::Q8_0, D::Q5_1, D::Q8_0, D::Q5_1, D::Q5_1, D::F16}},
      {"Q6_K", {D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::Q8_0, D::F16}},
      {"IQ4_NL", {D::IQ4_NL, D::Q8_0, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::IQ4_NL, D::F16}},
  };
}

DType expected_type(const Expect& e, const std::string& name) {
  if (name.find("_norm.weight") != std::string::npos) return DType::F32;
  if (name == "output.weight") return e.output;
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
  // A quantized input cannot be requantized to another type.
  ASSERT_TRUE(quantize_gguf(in_path, out_path, "Q8_0", 1).is_ok());
  const std::string out2 = testing::TempDir() + "oxidize_quantize_err2.gguf";
  st = quantize_gguf(out_path, out2, "Q4_0", 1);
  EXPECT_EQ(st.code(), ErrorCode::kUnsupported) << st.message();
  EXPECT_FALSE(test::file_exists(out2));
  std::remove(out_path.c_str());
}

}  // namespace
}  // namespace ox
