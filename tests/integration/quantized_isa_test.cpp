// The whole forward pass agrees across ISAs on quantized models: for every weight format, a small
// random llama-shaped model (dim 256 so the K-quants apply) generates the same 64 greedy tokens
// with every kernel table this machine runs, and the logits stay within a float-order tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/gguf/writer.h"
#include "core/model/model.h"
#include "core/quant/formats.h"
#include "core/quant/interleave.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

namespace ox {
namespace {

constexpr int kDim = 256, kFf = 512, kLayers = 2, kHeads = 4, kHeadsKv = 2, kVocab = 512;

// Deterministic normal samples (Box-Muller over a 64-bit LCG), independent of <random>'s
// platform-specific distributions.
class Normal {
 public:
  explicit Normal(uint64_t seed) : state_(seed) {}
  float next(float sd) {
    const double u1 = (static_cast<double>(step() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = static_cast<double>(step() >> 11) / 9007199254740992.0;
    return static_cast<float>(sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  uint64_t step() { return state_ = state_ * 6364136223846793005ull + 1442695040888963407ull; }
  uint64_t state_;
};

std::vector<uint8_t> build_model(DType type) {
  gguf::GgufWriter w;
  Normal rng(1234);
  EXPECT_TRUE(w.add_string("general.architecture", "llama").is_ok());
  EXPECT_TRUE(w.add_u32("llama.context_length", 256).is_ok());
  EXPECT_TRUE(w.add_u32("llama.embedding_length", kDim).is_ok());
  EXPECT_TRUE(w.add_u32("llama.block_count", kLayers).is_ok());
  EXPECT_TRUE(w.add_u32("llama.feed_forward_length", kFf).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count", kHeads).is_ok());
  EXPECT_TRUE(w.add_u32("llama.attention.head_count_kv", kHeadsKv).is_ok());
  EXPECT_TRUE(w.add_u32("llama.vocab_size", kVocab).is_ok());
  EXPECT_TRUE(w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f).is_ok());

  auto matrix = [&](const std::string& name, int cols, int rows, float sd) {
    std::vector<float> values(static_cast<size_t>(cols) * rows);
    for (float& v : values) v = rng.next(sd);
    std::vector<uint8_t> bytes(dtype_row_bytes(type, cols) * rows);
    quantize_rows_uniform(type, values.data(), bytes.data(), rows, cols);
    const uint64_t dims[2] = {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)};
    EXPECT_TRUE(w.add_tensor(name, dims, type, bytes).is_ok()) << name;
  };
  auto ones = [&](const std::string& name, int n) {
    std::vector<float> values(n);
    for (float& v : values) v = 1.0f + rng.next(0.1f);
    const uint64_t dims[1] = {static_cast<uint64_t>(n)};
    EXPECT_TRUE(w.add_tensor(name, dims, DType::F32,
                             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), n * 4))
                    .is_ok());
  };
  const int head_dim = kDim / kHeads;
  matrix("token_embd.weight", kDim, kVocab, 1.0f);
  ones("output_norm.weight", kDim);
  matrix("output.weight", kDim, kVocab, 0.2f);
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    ones(p + "attn_norm.weight", kDim);
    matrix(p + "attn_q.weight", kDim, kDim, 0.02f);
    matrix(p + "attn_k.weight", kDim, kHeadsKv * head_dim, 0.02f);
    matrix(p + "attn_v.weight", kDim, kHeadsKv * head_dim, 0.02f);
    matrix(p + "attn_output.weight", kDim, kDim, 0.02f);
    ones(p + "ffn_norm.weight", kDim);
    matrix(p + "ffn_gate.weight", kDim, kFf, 0.02f);
    matrix(p + "ffn_up.weight", kDim, kFf, 0.02f);
    matrix(p + "ffn_down.weight", kFf, kDim, 0.02f);
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

struct GreedyRun {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
};

GreedyRun greedy(const Model& model, const kernels::KernelTable* table, int steps) {
  ThreadPool pool(2);
  auto state = model.new_state(256, 8, table, &pool);
  EXPECT_TRUE(state.ok());
  GreedyRun run;
  std::vector<float> logits(kVocab);
  int32_t token = 1;
  for (int step = 0; step < steps; ++step) {
    model.forward(*state.value(), std::span<const int32_t>(&token, 1), step, false, logits.data());
    run.logits.push_back(logits);
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    run.tokens.push_back(token);
  }
  return run;
}

class QuantizedIsaParity : public ::testing::TestWithParam<DType> {};

TEST_P(QuantizedIsaParity, SameGreedyTokensFor64StepsOnEveryIsa) {
  const DType type = GetParam();
  const std::vector<uint8_t> bytes = build_model(type);
  ASSERT_FALSE(bytes.empty());
  auto file = gguf::GgufFile::parse(bytes, std::string("synthetic-") + dtype_name(type) + ".gguf");
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto model = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
  ASSERT_TRUE(model.ok()) << model.status().message();

  const GreedyRun reference = greedy(*model.value(), &kernels::scalar::table(), 64);
  // The generation must not be degenerate (a single repeated token would prove little).
  std::vector<int32_t> distinct = reference.tokens;
  std::sort(distinct.begin(), distinct.end());
  EXPECT_GT(std::unique(distinct.begin(), distinct.end()) - distinct.begin(), 2) << dtype_name(type);

  for (const kernels::KernelTable* table : kernels::all_kernels()) {
    const GreedyRun run = greedy(*model.value(), table, 64);
    EXPECT_EQ(run.tokens, reference.tokens) << table->isa << " " << dtype_name(type);
    // Integer block sums are exact on every ISA and only the float order of the per-block scale
    // products differs (step 0 agrees to ~1e-6). Later steps can differ more: a 1-ulp difference
    // can flip the rounding of one activation when it is re-quantized to 8 bits, a change of
    // about |x|/127 that propagates to the logits (~1e-2 here). Tokens must still agree.
    // Compared up to the first differing token (after it the inputs differ).
    size_t same = 0;
    while (same < run.tokens.size() && run.tokens[same] == reference.tokens[same]) ++same;
    float worst = 0;
    for (size_t s = 0; s < std::min(same + 1, run.logits.size()); ++s) {
      for (int v = 0; v < kVocab; ++v) worst = std::max(worst, std::fabs(run.logits[s][v] - reference.logits[s][v]));
    }
    float first = 0;
    for (int v = 0; v < kVocab; ++v) first = std::max(first, std::fabs(run.logits[0][v] - reference.logits[0][v]));
    std::printf("%s %s: step-0 max |diff| %g, worst %g over %zu agreeing steps\n", table->isa, dtype_name(type), first, worst, same);
    EXPECT_LT(worst, 5e-2f) << table->isa << " " << dtype_name(type) << " (tokens agree for " << same << " steps)";
  }
}

// Every quantized weight format of the registry, and the float formats other than F32 (the
// reference model's own).
std::vector<DType> parity_formats() {
  std::vector<DType> out;
  for (DType t : weight_formats()) {
    if (t != DType::F32) out.push_back(t);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedIsaParity, ::testing::ValuesIn(parity_formats()),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The interleaved layouts (core/quant/interleave.h) that some tables have Q4_K / Q6_K / Q2_K / Q3_K weights
// converted to at load: the converted model gives the natural one's logits bit for bit on the
// scalar table (its references only put each block back in order), and its greedy tokens on every
// table, whichever layout that table would ask for.
TEST(QuantizedIsaParityInterleaved, SameTokensAsTheNaturalLayout) {
  struct Case {
    DType natural, interleaved;
    RelayoutFn to_il;
  };
  for (const Case& c : {Case{DType::Q4_K, DType::Q4_K_IL, quant::q4_k_to_il},
                        Case{DType::Q6_K, DType::Q6_K_IL, quant::q6_k_to_il},
                        Case{DType::Q2_K, DType::Q2_K_IL, quant::q2_k_to_il},
                        Case{DType::Q3_K, DType::Q3_K_IL, quant::q3_k_to_il}}) {
    const std::vector<uint8_t> bytes = build_model(c.natural);
    ASSERT_FALSE(bytes.empty());
    auto natural_file = gguf::GgufFile::parse(bytes, "natural.gguf");
    ASSERT_TRUE(natural_file.ok()) << natural_file.status().message();
    auto natural = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(natural_file).value()));
    ASSERT_TRUE(natural.ok()) << natural.status().message();
    const GreedyRun reference = greedy(*natural.value(), &kernels::scalar::table(), 64);

    std::vector<uint8_t> copy = bytes;
    auto il_file = gguf::GgufFile::parse(copy, "interleaved.gguf", nullptr, /*writable=*/true);
    ASSERT_TRUE(il_file.ok()) << il_file.status().message();
    EXPECT_EQ((*il_file)->relayout(c.natural, c.interleaved, c.to_il), 7 * kLayers + 2) << dtype_name(c.natural);
    auto il = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(il_file).value()));
    ASSERT_TRUE(il.ok()) << il.status().message();
    EXPECT_EQ(il.value()->weights().layers[0].wq.type, c.interleaved);

    const GreedyRun scalar = greedy(*il.value(), &kernels::scalar::table(), 64);
    EXPECT_EQ(scalar.tokens, reference.tokens) << dtype_name(c.interleaved);
    EXPECT_EQ(scalar.logits, reference.logits) << dtype_name(c.interleaved) << ": the scalar table, bit for bit";
    for (const kernels::KernelTable* table : kernels::all_kernels()) {
      const GreedyRun run = greedy(*il.value(), table, 64);
      EXPECT_EQ(run.tokens, reference.tokens) << table->isa << " " << dtype_name(c.interleaved);
    }
  }
}

}  // namespace
}  // namespace ox
