// The second file layouts llama.cpp's loader takes for an architecture (core/model/file_layout.h):
// attn_qkv for attn_q/k/v (ArchSpec::qkv_either) and ffn_gate_up_exps for ffn_gate_exps +
// ffn_up_exps (MoeSpec::gate_up_either). A file fused from a separate one here (rows concatenated,
// as convert_hf_to_gguf.py --fuse-qkv / --fuse-gate-up-exps do) gives bit-identical logits: each
// output row is the same dot product. Mixed files and fused tensors of the wrong shape are refused
// by name. ARCH@fused_qkv.txt / ARCH@fused_gate_up_exps.txt (arch_parity_test.cpp) compare synth's
// fused files with llama.cpp.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/gguf/writer.h"
#include "core/model/arch_registry.h"
#include "core/model/model.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"
#include "tests/arch/tiny_models.h"
#include "tests/support/shared_data.h"

namespace ox::fused_layout_test {  // named: test_arch builds its files as one unit
namespace {

std::string synth_file(const std::string& arch, const std::string& variant = "") {
  return test::synth_tiny_arch(arch, variant, "fused");
}

// What load_fused fuses: q/k/v and/or the experts' gate/up, in the layers `layer` picks.
struct Fuse {
  bool qkv = false;
  bool gate_up = false;
  bool qkv_bias = true;   // false: attn_q/k/v.bias stay apart beside attn_qkv (older files)
  std::function<bool(int)> layer = [](int) { return true; };
  uint64_t drop_rows = 0;  // rows cut off each fused weight's end: a wrong shape
  // > 0: the other way, attn_qkv written apart as attn_q (this many rows), attn_k and attn_v (kv_rows each)
  uint64_t q_rows = 0, kv_rows = 0;
};

// "blk.N.rest" -> N, rest; -1 for other names.
int layer_of(const std::string& name, std::string* rest) {
  if (name.rfind("blk.", 0) != 0) return -1;
  int l = -1;
  const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), l);
  if (ec != std::errc() || *end != '.') return -1;
  *rest = std::string(end + 1);
  return l;
}

// The F32 file at `path` with tensors fused per `f` (each fused tensor where its first part was),
// loaded.
Result<std::shared_ptr<const Model>> load_fused(const std::string& path, const Fuse& f) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> src, gguf::GgufFile::open(path));
  std::map<std::string, const gguf::TensorInfo*> by_name;
  for (const gguf::TensorInfo& t : src->tensors()) by_name[t.name] = &t;
  auto bytes = [](const gguf::TensorInfo* t, uint64_t from, uint64_t n) {
    return std::vector<uint8_t>(t->data + from, t->data + from + n);
  };
  gguf::GgufWriter w;
  for (const auto& [key, value] : src->metadata()) OX_TRY(w.add(key, gguf::encode_value(value)));
  for (const gguf::TensorInfo& t : src->tensors()) {
    EXPECT_EQ(t.type, DType::F32) << t.name;
    std::string rest;
    const int l = layer_of(t.name, &rest);
    const std::string blk = "blk." + std::to_string(l) + ".";
    const bool picked = l >= 0 && f.layer(l);
    const bool bias = rest.size() > 5 && rest.substr(rest.size() - 5) == ".bias";
    const bool qkv_part = rest.rfind("attn_q.", 0) == 0 || rest.rfind("attn_k.", 0) == 0 || rest.rfind("attn_v.", 0) == 0;
    if (f.qkv && picked && qkv_part && !(bias && !f.qkv_bias)) {
      if (rest.rfind("attn_q.", 0) != 0) continue;  // written with attn_q
      const std::string suffix = bias ? "bias" : "weight";
      std::vector<uint8_t> data;
      uint64_t rows = 0;
      for (const char* part : {"attn_q.", "attn_k.", "attn_v."}) {
        const gguf::TensorInfo* p = by_name.at(blk + part + suffix);
        const std::vector<uint8_t> b = bytes(p, 0, p->n_bytes);
        data.insert(data.end(), b.begin(), b.end());
        rows += bias ? p->dims[0] : p->dims[1];
      }
      std::vector<uint64_t> dims = bias ? std::vector<uint64_t>{rows} : std::vector<uint64_t>{t.dims[0], rows};
      if (!bias && f.drop_rows > 0) {
        dims[1] -= f.drop_rows;
        data.resize(data.size() - f.drop_rows * t.dims[0] * sizeof(float));
      }
      OX_TRY(w.add_tensor(blk + "attn_qkv." + suffix, dims, DType::F32, std::move(data)));
      continue;
    }
    if (f.q_rows > 0 && picked && rest.rfind("attn_qkv.", 0) == 0) {
      const bool is_bias = rest == "attn_qkv.bias";
      const uint64_t row_bytes = is_bias ? sizeof(float) : t.dims[0] * sizeof(float);
      uint64_t from = 0;
      for (const auto& [part, rows] : {std::pair{"attn_q.", f.q_rows}, {"attn_k.", f.kv_rows}, {"attn_v.", f.kv_rows}}) {
        const std::vector<uint64_t> dims = is_bias ? std::vector<uint64_t>{rows} : std::vector<uint64_t>{t.dims[0], rows};
        OX_TRY(w.add_tensor(blk + part + (is_bias ? "bias" : "weight"), dims, DType::F32, bytes(&t, from, rows * row_bytes)));
        from += rows * row_bytes;
      }
      continue;
    }
    if (f.gate_up && picked && (rest == "ffn_gate_exps.weight" || rest == "ffn_up_exps.weight")) {
      if (rest != "ffn_gate_exps.weight") continue;  // written with ffn_gate_exps
      const gguf::TensorInfo* up = by_name.at(blk + "ffn_up_exps.weight");
      const uint64_t n_exp = t.dims[2], per_expert = t.n_bytes / n_exp;
      std::vector<uint8_t> data;
      for (uint64_t e = 0; e < n_exp; ++e) {  // expert e's rows [gate | up]
        for (const gguf::TensorInfo* p : {&t, up}) {
          const std::vector<uint8_t> b = bytes(p, e * per_expert, per_expert);
          data.insert(data.end(), b.begin(), b.end());
        }
      }
      const std::vector<uint64_t> dims = {t.dims[0], 2 * t.dims[1], n_exp};
      OX_TRY(w.add_tensor(blk + "ffn_gate_up_exps.weight", dims, DType::F32, std::move(data)));
      continue;
    }
    OX_TRY(w.add_tensor(t.name, t.dims, t.type, bytes(&t, 0, t.n_bytes)));
  }
  OX_ASSIGN_OR_RETURN(std::vector<uint8_t> out, w.to_bytes());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(out));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::parse(*owned, "fused.gguf", owned));
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file)));
}

// A decoder's logits of a short prompt, an encoder's hidden states (forward_hidden) of it.
std::vector<float> outputs(const Model& m) {
  if (m.spec().causal_attention) return test::prompt_logits(m);
  std::vector<BatchToken> batch;
  for (int32_t t : {1, 403, 407, 261, 378}) batch.push_back({t, 0, static_cast<int64_t>(batch.size()), true});
  ThreadPool pool(2);
  auto st = m.new_state(16, 8, &kernels::best_kernels(), &pool, DType::F16, DType::F16, 1);
  EXPECT_TRUE(st.ok()) << st.status().message();
  std::vector<float> out(batch.size() * static_cast<size_t>(m.hparams().n_embd));
  if (st.ok()) {
    const Status run = m.forward_hidden(*st.value(), batch, out.data());
    EXPECT_TRUE(run.is_ok()) << run.message();
  }
  return out;
}

// The fused file's outputs against the separate file's, bit for bit.
void expect_same_logits(const std::string& arch, const Fuse& f, const std::string& what) {
  const std::string path = synth_file(arch);
  Result<std::shared_ptr<const Model>> separate = load_fused(path, Fuse{});
  Result<std::shared_ptr<const Model>> fused = load_fused(path, f);
  std::remove(path.c_str());
  ASSERT_TRUE(separate.ok()) << arch << ": " << separate.status().message();
  ASSERT_TRUE(fused.ok()) << arch << " " << what << ": " << fused.status().message();
  EXPECT_EQ(fused.value()->spec().fused_qkv, f.qkv) << arch;
  EXPECT_EQ(fused.value()->spec().experts.fused_gate_up, f.gate_up) << arch;
  const std::vector<float> a = outputs(*separate.value()), b = outputs(*fused.value());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << arch << " " << what << ": outputs differ";
}

void expect_error(const Result<std::shared_ptr<const Model>>& m, const std::vector<std::string>& parts,
                  const std::string& what) {
  ASSERT_FALSE(m.ok()) << what << ": loaded";
  for (const std::string& part : parts) {
    EXPECT_NE(m.status().message().find(part), std::string::npos) << what << ": " << m.status().message();
  }
}

// Every architecture whose files may fuse q/k/v, and whose parity model has them apart (encoders:
// their hidden states).
TEST(FusedLayout, FusedQkvGivesTheSeparateOutputsInEveryArchitecture) {
  int n = 0;
  for (const ArchDef* a : all_archs()) {
    if (!a->spec.qkv_either || a->spec.fused_qkv || a->spec.mla) continue;
    if (a->spec.recurrent != Recurrent::kNone && !a->spec.hybrid) continue;  // no attention
    expect_same_logits(a->name, Fuse{.qkv = true}, "attn_qkv");
    ++n;
  }
  EXPECT_GE(n, 50);  // every architecture but mamba, mamba2, rwkv7 and those of one layout or fused by default
}

// phi2, phi3, nomic-bert, nomic-bert-moe and jina-bert-v3 files fuse q/k/v; llama.cpp's loaders
// take them apart too.
TEST(FusedLayout, SeparateQkvGivesTheFusedOutputsWhereFusedIsTheDefault) {
  int n = 0;
  for (const ArchDef* a : all_archs()) {
    if (!a->spec.qkv_either || !a->spec.fused_qkv) continue;
    const std::string path = synth_file(a->name);
    Result<std::shared_ptr<const Model>> fused = load_fused(path, Fuse{});
    ASSERT_TRUE(fused.ok()) << a->name << ": " << fused.status().message();
    const HParams& hp = fused.value()->hparams();
    const Fuse split{.q_rows = static_cast<uint64_t>(hp.n_head) * static_cast<uint64_t>(hp.head_dim_k),
                     .kv_rows = static_cast<uint64_t>(hp.n_head_kv) * static_cast<uint64_t>(hp.head_dim_k)};
    Result<std::shared_ptr<const Model>> separate = load_fused(path, split);
    std::remove(path.c_str());
    ASSERT_TRUE(separate.ok()) << a->name << ": " << separate.status().message();
    EXPECT_FALSE(separate.value()->spec().fused_qkv) << a->name;
    EXPECT_NE(separate.value()->file().find_tensor("blk.1.attn_v.weight"), nullptr) << a->name;
    const std::vector<float> x = outputs(*fused.value()), y = outputs(*separate.value());
    ASSERT_EQ(x.size(), y.size());
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0) << a->name << ": outputs differ";
    ++n;
  }
  EXPECT_EQ(n, 5);
}

TEST(FusedLayout, SeparateBiasesBesideAFusedWeightAreAdded) {
  expect_same_logits("qwen2", Fuse{.qkv = true, .qkv_bias = false}, "attn_qkv with attn_q/k/v.bias");
}

TEST(FusedLayout, FusedGateUpExpertsGiveTheSeparateLogits) {
  for (const char* arch : {"qwen35moe", "deepseek2"}) {
    expect_same_logits(arch, Fuse{.gate_up = true}, "ffn_gate_up_exps");
  }
  expect_same_logits("qwen35moe", Fuse{.qkv = true, .gate_up = true}, "both");
}

TEST(FusedLayout, SynthWritesTheFusedLayouts) {
  for (const auto& [arch, variant, name] : {std::tuple{"qwen2", "fused_qkv", "blk.1.attn_qkv.bias"},
                                            std::tuple{"qwen35moe", "fused_gate_up_exps", "blk.1.ffn_gate_up_exps.weight"},
                                            std::tuple{"deepseek2", "fused_gate_up_exps", "blk.1.ffn_gate_up_exps.weight"}}) {
    const std::string path = synth_file(arch, variant);
    Result<std::shared_ptr<const Model>> m = load_fused(path, Fuse{});
    std::remove(path.c_str());
    ASSERT_TRUE(m.ok()) << arch << "@" << variant << ": " << m.status().message();
    EXPECT_NE(m.value()->file().find_tensor(name), nullptr) << arch << "@" << variant;
  }
  SynthOptions o;
  o.arch = "gpt2";  // attn_qkv is its only layout
  o.shape = "tiny-arch";
  o.variant = "fused_qkv";
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.out_path = testing::TempDir() + "oxidize_fused_gpt2.gguf";
  const Status st = synth_gguf(o);
  EXPECT_NE(st.message().find("has no variant 'fused_qkv'"), std::string::npos) << st.message();
}

TEST(FusedLayout, MixedFilesAreRefusedByName) {
  const std::string path = synth_file("llama");
  expect_error(load_fused(path, Fuse{.qkv = true, .layer = [](int l) { return l == 0; }}),
               {"'blk.0.attn_qkv.weight'", "layer 1 has them apart", "not supported"}, "layer 0 fused");
  expect_error(load_fused(path, Fuse{.qkv = true, .layer = [](int l) { return l == 1; }}),
               {"'blk.1.attn_qkv.weight'", "layer 0 has them apart"}, "layer 1 fused");
  std::remove(path.c_str());
  const std::string moe = synth_file("qwen35moe");
  expect_error(load_fused(moe, Fuse{.gate_up = true, .layer = [](int l) { return l == 1; }}),
               {"'blk.1.ffn_gate_up_exps.weight'", "gate and up", "layer 0 has them apart"}, "experts of layer 1 fused");
  std::remove(moe.c_str());
}

TEST(FusedLayout, WrongShapesAndMissingPartsAreNamed) {
  const std::string path = synth_file("llama");  // tiny-arch: n_embd 256, 4 + 4 + 4 heads of 64 (see the shape)
  Result<std::shared_ptr<const Model>> ok = load_fused(path, Fuse{});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  const HParams& hp = ok.value()->hparams();
  const int64_t rows = int64_t{hp.n_head} * hp.head_dim_k + 2 * int64_t{hp.n_head_kv} * hp.head_dim_k;
  const std::string want = strfmt("has shape [%d, %lld], expected [%d, %lld]", hp.n_embd,
                                  static_cast<long long>(rows - 1), hp.n_embd, static_cast<long long>(rows));
  expect_error(load_fused(path, Fuse{.qkv = true, .drop_rows = 1}), {"'blk.0.attn_qkv.weight'", want}, "one row short");
  std::remove(path.c_str());
  // qwen2 requires q/k/v biases: a fused weight without attn_qkv.bias or all three attn_q/k/v.bias is refused.
  const std::string qwen2 = synth_file("qwen2");
  Result<std::unique_ptr<gguf::GgufFile>> src = gguf::GgufFile::open(qwen2);
  ASSERT_TRUE(src.ok());
  gguf::GgufWriter w;
  for (const auto& [key, value] : src.value()->metadata()) ASSERT_TRUE(w.add(key, gguf::encode_value(value)).is_ok());
  for (const gguf::TensorInfo& t : src.value()->tensors()) {
    if (t.name == "blk.0.attn_k.bias") continue;
    ASSERT_TRUE(w.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.n_bytes)).is_ok());
  }
  const std::string edited = testing::TempDir() + "oxidize_fused_qwen2_no_k_bias.gguf";
  ASSERT_TRUE(w.write_file(edited).is_ok());
  expect_error(load_fused(edited, Fuse{.qkv = true, .qkv_bias = false}), {"missing tensor 'blk.0.attn_qkv.bias'"},
               "qwen2 without attn_k.bias");
  std::remove(edited.c_str());
  std::remove(qwen2.c_str());
  // qwen3moe's loader takes no fused experts (llama.cpp's qwen3moe.cpp): the separate ones are missing.
  const std::string qwen3moe = synth_file("qwen3moe");
  expect_error(load_fused(qwen3moe, Fuse{.gate_up = true}), {"'blk.0.ffn_gate_exps.weight'"}, "qwen3moe fused experts");
  std::remove(qwen3moe.c_str());
}

}  // namespace
}  // namespace ox::fused_layout_test
