// synth_gguf: metadata and tensor layout as llama.cpp writes a Llama model, weight statistics,
// tokenizer copied from the vocab file, and determinism across seeds and thread counts.
#include "core/tools/synth.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/model/arch_registry.h"
#include "core/model/model.h"
#include "core/model/tensor_plan.h"
#include "core/quant/traits.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::string temp(const char* name) { return testing::TempDir() + name; }

std::unique_ptr<gguf::GgufFile> open_or_die(const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? std::move(f).value() : nullptr;
}

// stories260K's 512-token vocabulary keeps these tests fast (the embeddings are 512 rows).
SynthOptions small_options(const std::string& out) {
  SynthOptions o;
  o.out_path = out;
  o.shape = "tiny-15M";
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.n_layer = 2;
  return o;
}

TEST(Synth, LlamaLayoutAndMetadata) {
  const SynthOptions o = small_options(temp("oxidize_synth_layout.gguf"));
  if (!test::file_exists(o.vocab_path)) GTEST_SKIP() << "missing " << o.vocab_path;
  const Status st = synth_gguf(o);
  ASSERT_TRUE(st.is_ok()) << st.message();
  auto f = open_or_die(o.out_path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_string("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_u32("llama.embedding_length").value(), 288u);
  EXPECT_EQ(f->get_u32("llama.feed_forward_length").value(), 768u);
  EXPECT_EQ(f->get_u32("llama.block_count").value(), 2u);
  EXPECT_EQ(f->get_u32("llama.attention.head_count").value(), 6u);
  EXPECT_EQ(f->get_u32("llama.attention.head_count_kv").value(), 6u);
  EXPECT_EQ(f->get_u32("llama.rope.dimension_count").value(), 48u);
  EXPECT_EQ(f->get_u32("llama.context_length").value(), 4096u);
  EXPECT_EQ(f->get_u32("llama.vocab_size").value(), 512u);
  EXPECT_FLOAT_EQ(f->get_f32("llama.attention.layer_norm_rms_epsilon").value(), 1e-5f);
  EXPECT_FLOAT_EQ(f->get_f32("llama.rope.freq_base").value(), 10000.0f);
  EXPECT_EQ(f->get_u32("general.file_type").value(), 0u);  // LLAMA_FTYPE_ALL_F32
  // Tokenizer copied from the vocab file.
  auto vocab = open_or_die(o.vocab_path);
  ASSERT_NE(vocab, nullptr);
  for (const auto& [key, value] : vocab->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const gguf::Value* v = f->find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(gguf::encode_value(*v).bytes, gguf::encode_value(value).bytes) << key;
  }
  // 1 + 9 per layer + 2 tensors, dims[0] the input dimension.
  ASSERT_EQ(f->tensors().size(), 1u + 9u * 2u + 2u);
  auto dims = [&](const char* name) { return f->find_tensor(name)->dims; };
  EXPECT_EQ(dims("token_embd.weight"), (std::vector<uint64_t>{288, 512}));
  EXPECT_EQ(dims("output.weight"), (std::vector<uint64_t>{288, 512}));
  EXPECT_EQ(dims("output_norm.weight"), (std::vector<uint64_t>{288}));
  EXPECT_EQ(dims("blk.1.attn_norm.weight"), (std::vector<uint64_t>{288}));
  EXPECT_EQ(dims("blk.1.attn_q.weight"), (std::vector<uint64_t>{288, 288}));
  EXPECT_EQ(dims("blk.1.attn_k.weight"), (std::vector<uint64_t>{288, 288}));
  EXPECT_EQ(dims("blk.1.attn_v.weight"), (std::vector<uint64_t>{288, 288}));
  EXPECT_EQ(dims("blk.1.attn_output.weight"), (std::vector<uint64_t>{288, 288}));
  EXPECT_EQ(dims("blk.1.ffn_norm.weight"), (std::vector<uint64_t>{288}));
  EXPECT_EQ(dims("blk.1.ffn_gate.weight"), (std::vector<uint64_t>{288, 768}));
  EXPECT_EQ(dims("blk.1.ffn_up.weight"), (std::vector<uint64_t>{288, 768}));
  EXPECT_EQ(dims("blk.1.ffn_down.weight"), (std::vector<uint64_t>{768, 288}));

  // Weights ~ N(0, 0.02), norms exactly 1.
  for (const gguf::TensorInfo& t : f->tensors()) {
    ASSERT_EQ(t.type, DType::F32) << t.name;
    const float* v = reinterpret_cast<const float*>(t.data);
    if (t.dims.size() == 1) {
      for (uint64_t i = 0; i < t.n_elements; ++i) ASSERT_EQ(v[i], 1.0f) << t.name;
      continue;
    }
    double sum = 0, sum2 = 0;
    for (uint64_t i = 0; i < t.n_elements; ++i) {
      sum += v[i];
      sum2 += static_cast<double>(v[i]) * v[i];
    }
    const double mean = sum / t.n_elements, sd = std::sqrt(sum2 / t.n_elements - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.002) << t.name;
    EXPECT_NEAR(sd, 0.02, 0.001) << t.name;
  }
  std::remove(o.out_path.c_str());
}

std::vector<uint8_t> synth_bytes(SynthOptions o) {
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << st.message();
  std::vector<uint8_t> bytes = test::read_file_bytes(o.out_path);
  std::remove(o.out_path.c_str());
  return bytes;
}

TEST(Synth, DeterministicAcrossThreadCounts) {
  SynthOptions o = small_options(temp("oxidize_synth_det.gguf"));
  if (!test::file_exists(o.vocab_path)) GTEST_SKIP() << "missing " << o.vocab_path;
  o.type = "Q4_0";
  o.n_threads = 1;
  const std::vector<uint8_t> a = synth_bytes(o);
  o.n_threads = 3;
  const std::vector<uint8_t> b = synth_bytes(o);
  o.seed = 2;
  const std::vector<uint8_t> c = synth_bytes(o);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(Synth, QuantizedTypesFollowThePreset) {
  SynthOptions o = small_options(temp("oxidize_synth_q4km.gguf"));
  if (!test::file_exists(o.vocab_path)) GTEST_SKIP() << "missing " << o.vocab_path;
  o.type = "Q4_K_M";
  o.n_threads = 2;
  ASSERT_TRUE(synth_gguf(o).is_ok());
  auto f = open_or_die(o.out_path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_u32("general.file_type").value(), 15u);
  // Rows of 288 do not fit Q4_K's 256-blocks: Q4_K -> Q5_0. use_more_bits(i, 2) holds for layer 1
  // only (i >= 7*2/8 = 1; layer 0 has (0 - 0) % 3 = 0): its attn_v takes Q6_K -> Q8_0 and its
  // ffn_down (rows of 768, which fit) Q6_K. output.weight: Q6_K -> Q8_0.
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, DType::Q5_0);
  EXPECT_EQ(f->find_tensor("blk.0.attn_v.weight")->type, DType::Q5_0);
  EXPECT_EQ(f->find_tensor("blk.1.attn_v.weight")->type, DType::Q8_0);
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down.weight")->type, DType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("output.weight")->type, DType::Q8_0);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, DType::Q5_0);
  EXPECT_EQ(f->find_tensor("output_norm.weight")->type, DType::F32);
  // Dequantized weights still look like N(0, 0.02).
  const gguf::TensorInfo* t = f->find_tensor("blk.0.ffn_down.weight");
  std::vector<float> v(t->n_elements);
  quant_traits(t->type).to_float(t->data, v.data(), static_cast<int64_t>(v.size()));
  double sum2 = 0;
  for (float x : v) sum2 += static_cast<double>(x) * x;
  EXPECT_NEAR(std::sqrt(sum2 / v.size()), 0.02, 0.002);
  std::remove(o.out_path.c_str());
}

TEST(Synth, DefaultVocabIsLlamaSpm) {
  const std::string path = default_synth_vocab_path();
  if (!test::file_exists(path)) GTEST_SKIP() << "missing " << path;
  SynthOptions o;
  o.out_path = temp("oxidize_synth_spm.gguf");
  o.n_layer = 1;
  o.type = "Q8_0";
  o.n_threads = 2;
  ASSERT_TRUE(synth_gguf(o).is_ok());
  auto f = open_or_die(o.out_path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_u32("llama.vocab_size").value(), 32000u);
  EXPECT_EQ(f->get_string("tokenizer.ggml.model").value(), "llama");
  EXPECT_EQ(f->find_tensor("token_embd.weight")->dims, (std::vector<uint64_t>{288, 32000}));
  std::remove(o.out_path.c_str());
}

TEST(Synth, Errors) {
  SynthOptions o;
  o.out_path = temp("oxidize_synth_err.gguf");
  o.shape = "7B";
  EXPECT_EQ(synth_gguf(o).code(), ErrorCode::kInvalidArgument);
  o.shape = "tiny-15M";
  o.type = "Q9";
  EXPECT_EQ(synth_gguf(o).code(), ErrorCode::kInvalidArgument);
  o.type = "F32";
  o.vocab_path = temp("no_such_vocab.gguf");
  EXPECT_FALSE(synth_gguf(o).is_ok());
  EXPECT_FALSE(test::file_exists(o.out_path));
}

}  // namespace
}  // namespace ox

namespace ox {
namespace {

// vocab_size: the first N tokens of a large Unigram vocabulary (XLM-R's 250k), scores and types
// cut alike, special ids past the cut left out; a BPE vocabulary (merges) is refused.
TEST(Synth, VocabularyCutToItsFirstTokens) {
  SynthOptions o = small_options(temp("oxidize_synth_vocab_cut.gguf"));
  o.vocab_path = test::shared_path("vocab/ggml-vocab-nomic-bert-moe.gguf");
  if (!test::file_exists(o.vocab_path)) GTEST_SKIP() << "missing " << o.vocab_path;
  o.vocab_size = 1000;
  const Status st = synth_gguf(o);
  ASSERT_TRUE(st.is_ok()) << st.message();
  auto f = open_or_die(o.out_path);
  ASSERT_NE(f, nullptr);
  auto source = open_or_die(o.vocab_path);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(f->get_u32("llama.vocab_size").value(), 1000u);
  const std::vector<std::string_view>& tokens = *f->get_string_array("tokenizer.ggml.tokens").value();
  const std::vector<std::string_view>& all = *source->get_string_array("tokenizer.ggml.tokens").value();
  ASSERT_EQ(tokens.size(), 1000u);
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i], all[i]) << i;
  EXPECT_EQ(f->get_array("tokenizer.ggml.scores").value()->count, 1000u);
  EXPECT_EQ(f->get_array("tokenizer.ggml.token_type").value()->count, 1000u);
  EXPECT_EQ(f->get_array("tokenizer.ggml.scores").value()->f32_at(999),
            source->get_array("tokenizer.ggml.scores").value()->f32_at(999));
  EXPECT_EQ(f->get_u32("tokenizer.ggml.eos_token_id").value(), 2u);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->dims[1], 1000u);
  EXPECT_NE(f->find("tokenizer.ggml.precompiled_charsmap"), nullptr);
  for (const auto& [key, value] : f->metadata()) {
    if (key.size() > 9 && key.substr(key.size() - 9) == "_token_id") {
      EXPECT_LT(value.u, 1000u) << key;
    }
  }
  Result<std::shared_ptr<const Model>> m = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(f)));
  EXPECT_TRUE(m.ok()) << m.status().message();
  std::remove(o.out_path.c_str());

  // stories260K's separator id is "none" (past its 512 tokens): kept as it was, not left out.
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.vocab_size = 100;
  ASSERT_TRUE(synth_gguf(o).is_ok());
  auto small = open_or_die(o.out_path);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->get_u32("tokenizer.ggml.seperator_token_id").value(), 4294967295u);
  EXPECT_EQ(small->get_u32("tokenizer.ggml.eos_token_id").value(), 2u);
  EXPECT_EQ(small->get_string_array("tokenizer.ggml.tokens").value()->size(), 100u);
  small.reset();
  std::remove(o.out_path.c_str());

  o.vocab_path = test::shared_path("vocab/ggml-vocab-gpt-2.gguf");
  if (!test::file_exists(o.vocab_path)) return;
  const Status bpe = synth_gguf(o);
  ASSERT_FALSE(bpe.is_ok());
  EXPECT_NE(bpe.message().find("merges"), std::string::npos) << bpe.message();
}

// `--arch A`: every registered architecture's parity model loads, and holds every tensor of its
// plan, optional ones included (so the parity tests exercise every optional feature).
TEST(Synth, EveryArchitectureWithEveryOptionalTensor) {
  for (const ArchDef* arch : all_archs()) {
    SynthOptions o;
    o.arch = arch->name;
    o.shape = "tiny-arch";
    // One layer, quick, unless the architecture's parity model names its own depth (a layer pattern
    // or layers that reuse earlier ones' K/V need more: gemma4's last two read layers 0 and 1).
    o.n_layer = 1;
    for (const SynthKey& k : arch->synth_keys) {
      if (k.key != nullptr && std::string_view(k.key) == "block_count") o.n_layer = 0;
    }
    o.vocab_path = test::shared_path("models/stories260K.gguf");
    if (!test::file_exists(o.vocab_path)) GTEST_SKIP() << "missing " << o.vocab_path;
    o.out_path = testing::TempDir() + "oxidize_synth_arch.gguf";
    const Status st = synth_gguf(o);
    ASSERT_TRUE(st.is_ok()) << arch->name << ": " << st.message();
    Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::open(o.out_path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    std::shared_ptr<const gguf::GgufFile> shared(std::move(file).value());
    EXPECT_EQ(shared->get_string("general.architecture").value(), arch->name);
    Result<std::shared_ptr<const Model>> model = Model::load(shared);
    ASSERT_TRUE(model.ok()) << arch->name << ": " << model.status().message();
    for (const PlannedTensor& t : plan_tensors(model.value()->spec(), model.value()->hparams())) {
      EXPECT_NE(shared->find_tensor(t.name()), nullptr) << arch->name << ": " << t.name();
    }
    std::remove(o.out_path.c_str());
  }
}

}  // namespace
}  // namespace ox

namespace ox {
namespace {

// A shape of another architecture, cut to n_layer layers, Q4_0, stories260K's 512 tokens: the
// file, or nullptr after a failed expectation.
std::shared_ptr<const gguf::GgufFile> synth_shape(const char* shape, uint32_t n_layer, const std::string& out) {
  SynthOptions o;
  o.shape = shape;
  o.n_layer = n_layer;
  o.type = "Q4_0";
  o.n_threads = 2;
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.out_path = out;
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << shape << ": " << st.message();
  if (!st.is_ok()) return nullptr;
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::open(out);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  return std::shared_ptr<const gguf::GgufFile>(std::move(file).value());
}

// The benchmark shapes of issue #20 item 5: Qwen3-30B-A3B's attention and router as llama.cpp's
// qwen3moe reads them (32 heads of 128, 4 KV heads, width 2048), 64 experts 256 wide, 8 active.
TEST(Synth, MoeShapeIsAScaledQwen3Moe) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "missing stories260K";
  const std::string out = temp("oxidize_synth_moe.gguf");
  std::shared_ptr<const gguf::GgufFile> f = synth_shape("moe-16x64", 1, out);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_string("general.architecture").value(), "qwen3moe");
  EXPECT_EQ(f->get_u32("qwen3moe.embedding_length").value(), 2048u);
  EXPECT_EQ(f->get_u32("qwen3moe.attention.head_count").value(), 32u);
  EXPECT_EQ(f->get_u32("qwen3moe.attention.head_count_kv").value(), 4u);
  EXPECT_EQ(f->get_u32("qwen3moe.attention.key_length").value(), 128u);
  EXPECT_EQ(f->get_u32("qwen3moe.expert_count").value(), 64u);
  EXPECT_EQ(f->get_u32("qwen3moe.expert_used_count").value(), 8u);
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->dims, (std::vector<uint64_t>{2048, 4096}));
  EXPECT_EQ(f->find_tensor("blk.0.attn_k_norm.weight")->dims, (std::vector<uint64_t>{128}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_gate_inp.weight")->dims, (std::vector<uint64_t>{2048, 64}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_up_exps.weight")->dims, (std::vector<uint64_t>{2048, 256, 64}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down_exps.weight")->dims, (std::vector<uint64_t>{256, 2048, 64}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down.weight"), nullptr);  // no dense feed-forward
  Result<std::shared_ptr<const Model>> model = Model::load(f);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model.value()->hparams().n_expert, 64);
  std::remove(out.c_str());
}

// LFM2-1.2B's layer pattern (its config's layer_types: attention at layers 2, 5, 8, 10, 12, 14, short
// convolutions elsewhere) as the per-layer head_count_kv llama.cpp's lfm2 reads.
TEST(Synth, HybridShapeIsLfm2) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "missing stories260K";
  const std::string out = temp("oxidize_synth_lfm2.gguf");
  std::shared_ptr<const gguf::GgufFile> f = synth_shape("lfm2-1.2B", 3, out);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_string("general.architecture").value(), "lfm2");
  const gguf::Value* kv = f->find("lfm2.attention.head_count_kv");
  ASSERT_NE(kv, nullptr);
  ASSERT_EQ(kv->count, 3u);
  EXPECT_EQ(kv->integer_at(0), 0);
  EXPECT_EQ(kv->integer_at(1), 0);
  EXPECT_EQ(kv->integer_at(2), 8);
  EXPECT_EQ(f->get_u32("lfm2.shortconv.l_cache").value(), 3u);
  EXPECT_EQ(f->find_tensor("blk.0.shortconv.in_proj.weight")->dims, (std::vector<uint64_t>{2048, 3 * 2048}));
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.2.attn_k.weight")->dims, (std::vector<uint64_t>{2048, 8 * 64}));
  EXPECT_EQ(f->find_tensor("blk.2.ffn_up.weight")->dims, (std::vector<uint64_t>{2048, 8192}));
  Result<std::shared_ptr<const Model>> model = Model::load(f);
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::remove(out.c_str());
}

TEST(Synth, ShapeOfAnotherArchitectureRefusesArch) {
  SynthOptions o;
  o.out_path = temp("oxidize_synth_shape_err.gguf");
  o.shape = "moe-16x64";
  o.arch = "llama";
  const Status st = synth_gguf(o);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("qwen3moe"), std::string::npos) << st.message();
  o.arch.clear();
  o.variant = "kv_b";
  EXPECT_EQ(synth_gguf(o).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(test::file_exists(o.out_path));
}

}  // namespace
}  // namespace ox
