// Multi-token-prediction (NextN) blocks (ArchSpec::nextn) beyond the parity references
// (ARCH@mtp.txt in arch_parity_test.cpp): the trunk runs without them, their tensors are checked as
// llama.cpp's loader checks them (a missing required one named; a "trunk only" file where llama.cpp
// takes one), and a count that leaves no trunk, or an architecture without them, is refused by name.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/model/model.h"
#include "core/model/moe.h"
#include "core/tools/quantize.h"
#include "core/tools/synth.h"
#include "tests/arch/tiny_models.h"
#include "tests/core/model/edited_gguf.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

// Every architecture that runs files with NextN blocks, and whether a file may leave them out.
struct NextnArch {
  const char* name;
  bool trunk_only;
};
constexpr NextnArch kNextnArchs[] = {
    {"glm4", false}, {"glm4moe", true}, {"deepseek2", true}, {"qwen35", false}, {"qwen35moe", false}, {"exaone4", false},
};

// `oxidize synth --arch arch --variant variant` (tiny-arch: a 2-block trunk), its path.
std::string synth_file(const std::string& arch, const std::string& variant) {
  return test::synth_tiny_arch(arch, variant, "nextn");
}

// The file at `path` with the u32 keys in `set` overridden and the tensors `drop` says so left out, loaded.
Result<std::shared_ptr<const Model>> load_edited(const std::string& path,
                                                 const std::vector<std::pair<std::string, uint32_t>>& set,
                                                 const std::function<bool(const std::string&)>& drop) {
  auto overridden = [&](const std::string& key) {
    for (const auto& [k, v] : set) {
      if (k == key) return true;
    }
    return false;
  };
  return test::load_edited_gguf(
      path, [&](const std::string& key) { return !overridden(key); },
      [&](gguf::GgufWriter& w) {
        for (const auto& [key, v] : set) EXPECT_TRUE(w.add_u32(key, v).is_ok());
      },
      [&](const std::string& name) { return !drop(name); });
}

bool none(const std::string&) { return false; }

void expect_error(const Result<std::shared_ptr<const Model>>& m, const std::string& part, const std::string& what) {
  ASSERT_FALSE(m.ok()) << what << ": loaded, expected an error naming " << part;
  EXPECT_NE(m.status().message().find(part), std::string::npos) << what << ": " << m.status().message();
}

TEST(Nextn, TheTrunkRunsWithoutTheBlocks) {
  for (const NextnArch& a : kNextnArchs) {
    const std::string path = synth_file(a.name, "mtp");
    Result<std::shared_ptr<const Model>> m = load_edited(path, {}, none);
    ASSERT_TRUE(m.ok()) << a.name << ": " << m.status().message();
    const HParams& hp = m.value()->hparams();
    EXPECT_EQ(hp.n_layer, 2) << a.name << ": block_count 3 less one NextN block";
    EXPECT_EQ(hp.n_layer_nextn, 1) << a.name;
    EXPECT_EQ(m.value()->weights().layers.size(), 2u) << a.name << ": the NextN block is not loaded";
    EXPECT_NE(m.value()->file().find_tensor("blk.2.nextn.eh_proj.weight"), nullptr) << a.name;
    std::remove(path.c_str());
  }
}

TEST(Nextn, AMissingRequiredTensorIsNamed) {
  for (const NextnArch& a : kNextnArchs) {
    const std::string path = synth_file(a.name, "mtp");
    // The block's own tensors, and an ordinary one of the block (llama.cpp requires both while
    // blk.2.nextn.eh_proj is there).
    for (const std::string name : {"blk.2.nextn.enorm.weight", "blk.2.nextn.hnorm.weight", "blk.2.attn_output.weight"}) {
      expect_error(load_edited(path, {}, [&](const std::string& t) { return t == name; }), "'" + name + "'",
                   std::string(a.name) + " without " + name);
    }
    // The optional ones (llama.cpp's TENSOR_NOT_REQUIRED) may be absent.
    Result<std::shared_ptr<const Model>> m = load_edited(path, {}, [](const std::string& t) {
      return t == "blk.2.nextn.embed_tokens.weight" || t == "blk.2.nextn.shared_head_head.weight" ||
             t == "blk.2.nextn.shared_head_norm.weight";
    });
    EXPECT_TRUE(m.ok()) << a.name << ": " << m.status().message();
    std::remove(path.c_str());
  }
}

TEST(Nextn, AWrongShapeIsNamed) {
  const std::string path = synth_file("glm4", "mtp");
  Result<std::unique_ptr<gguf::GgufFile>> src = gguf::GgufFile::open(path);
  ASSERT_TRUE(src.ok());
  // eh_proj [2 n_embd, n_embd] written as a square [n_embd, n_embd]: the block's first half only.
  gguf::GgufWriter w;
  for (const auto& [key, value] : src.value()->metadata()) ASSERT_TRUE(w.add(key, gguf::encode_value(value)).is_ok());
  for (const gguf::TensorInfo& t : src.value()->tensors()) {
    std::vector<uint64_t> dims = t.dims;
    uint64_t n_bytes = t.n_bytes;
    if (t.name == "blk.2.nextn.eh_proj.weight") {
      dims[0] /= 2;
      n_bytes /= 2;
    }
    ASSERT_TRUE(w.add_tensor(t.name, dims, t.type, std::vector<uint8_t>(t.data, t.data + n_bytes)).is_ok());
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  ASSERT_TRUE(bytes.ok());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "edited.gguf", owned);
  ASSERT_TRUE(file.ok());
  expect_error(Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value())),
               "tensor 'blk.2.nextn.eh_proj.weight' has shape", "glm4 with a square eh_proj");
  std::remove(path.c_str());
}

// A file whose NextN blocks were left out (no blk.2.* at all): glm4moe and deepseek2 run it, as
// llama.cpp does; the others need the block.
TEST(Nextn, TrunkOnlyFilesWhereLlamaCppTakesThem) {
  for (const NextnArch& a : kNextnArchs) {
    const std::string path = synth_file(a.name, "mtp");
    Result<std::shared_ptr<const Model>> m =
        load_edited(path, {}, [](const std::string& t) { return t.rfind("blk.2.", 0) == 0; });
    if (a.trunk_only) {
      ASSERT_TRUE(m.ok()) << a.name << ": " << m.status().message();
      EXPECT_EQ(m.value()->hparams().n_layer, 2) << a.name;
      // A decoded token reads the trunk's weights alone, NextN block or not.
      Result<std::shared_ptr<const Model>> full = load_edited(path, {}, none);
      ASSERT_TRUE(full.ok()) << full.status().message();
      EXPECT_EQ(decode_weight_bytes(*full.value()), decode_weight_bytes(*m.value())) << a.name;
    } else {
      expect_error(m, "missing tensor 'blk.2.", std::string(a.name) + " trunk only");
    }
    std::remove(path.c_str());
  }
}

// llama-quantize's Q4_K_M of glm4moe@mtp, read with `oxidize inspect`: the NextN matrices
// get the preset's default type, their norms stay F32, and the block counts among block_count's
// layers (its experts' ffn_down is the last layer's, which llama.cpp gives more bits).
TEST(Nextn, QuantizeTypesTheBlocksAsLlamaQuantize) {
  const std::string path = synth_file("glm4moe", "mtp");
  const std::string out = path + "-q4_k_m.gguf";
  const Status st = quantize_gguf(path, out, "Q4_K_M", 1);
  ASSERT_TRUE(st.is_ok()) << st.message();
  Result<std::unique_ptr<gguf::GgufFile>> f = gguf::GgufFile::open(out);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const std::pair<const char*, DType> expected[] = {
      {"blk.2.nextn.eh_proj.weight", DType::Q4_K},          {"blk.2.nextn.embed_tokens.weight", DType::Q4_K},
      {"blk.2.nextn.shared_head_head.weight", DType::Q4_K}, {"blk.2.nextn.enorm.weight", DType::F32},
      {"blk.2.nextn.hnorm.weight", DType::F32},             {"blk.2.nextn.shared_head_norm.weight", DType::F32},
      {"blk.2.ffn_down_exps.weight", DType::Q6_K},          {"blk.2.attn_v.weight", DType::Q6_K},
      {"blk.2.attn_output.weight", DType::Q4_K},
  };
  for (const auto& [name, type] : expected) {
    const gguf::TensorInfo* t = f.value()->find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, type) << name << ": " << dtype_name(t->type);
  }
  std::remove(path.c_str());
  std::remove(out.c_str());
}

TEST(Nextn, CountsThatLeaveNoTrunkAreRefusedByName) {
  for (const NextnArch& a : kNextnArchs) {
    const std::string path = synth_file(a.name, "mtp");
    const std::string key = std::string(a.name) + ".nextn_predict_layers";
    for (uint32_t n : {3u, 4u}) {  // block_count is 3
      expect_error(load_edited(path, {{key, n}}, none), "'" + key + "' (" + std::to_string(n) + ") must be below '" +
                                                            a.name + ".block_count' (3)",
                   std::string(a.name) + " nextn " + std::to_string(n));
    }
    std::remove(path.c_str());
  }
}

// Architectures whose llama.cpp loader has no NextN blocks run none: refused, not run as trunk.
TEST(Nextn, OtherArchitecturesRefuseTheBlocksByName) {
  const std::string path = synth_file("llama", "");
  expect_error(load_edited(path, {{"llama.nextn_predict_layers", 1}}, none),
               "multi-token-prediction blocks ('llama.nextn_predict_layers' = 1) are not supported for llama", "llama");
  // A zero count is no block: the file loads.
  EXPECT_TRUE(load_edited(path, {{"llama.nextn_predict_layers", 0}}, none).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ox
