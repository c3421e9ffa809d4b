// gemma4 and gemma3n files this engine (or llama.cpp) cannot run as they say: each is refused with
// the key or tensor named, before any tensor is read (their parity with llama.cpp is test_arch's).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/model/model.h"

namespace ox {
namespace {

struct Key {
  std::string name;  // after "<arch>."
  std::vector<uint32_t> values;  // one: a u32, several (or `array`): an array
  bool array = false;
};

// A 2-layer header of `arch` with the given keys and tensors (F32 zeros; enough of them that the
// block count is plausible), loaded.
Status load(const std::string& arch, const std::vector<Key>& keys, std::vector<std::string> tensors = {}) {
  gguf::GgufWriter w;
  const std::string p = arch + ".";
  EXPECT_TRUE(w.add_string("general.architecture", arch).is_ok());
  for (const auto& [name, v] : std::vector<std::pair<std::string, uint32_t>>{
           {"context_length", 16}, {"embedding_length", 8}, {"block_count", 2}, {"feed_forward_length", 16},
           {"attention.head_count", 2}, {"vocab_size", 4}}) {
    EXPECT_TRUE(w.add_u32(p + name, v).is_ok());
  }
  EXPECT_TRUE(w.add_f32(p + "attention.layer_norm_rms_epsilon", 1e-6f).is_ok());
  for (const Key& k : keys) {
    const Status s = k.array || k.values.size() > 1 ? w.add_array<uint32_t>(p + k.name, k.values) : w.add_u32(p + k.name, k.values[0]);
    EXPECT_TRUE(s.is_ok()) << s.message();
  }
  tensors.push_back("token_embd.weight");
  tensors.push_back("output_norm.weight");
  const std::vector<uint64_t> dims = {8, 4};
  for (const std::string& name : tensors) {
    EXPECT_TRUE(w.add_tensor(name, dims, DType::F32, std::vector<uint8_t>(8 * 4 * sizeof(float), 0)).is_ok());
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "test.gguf", owned);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value())).status();
}

// gemma4's required keys, layer 0 a window layer and layer 1 a global one.
std::vector<Key> gemma4_keys() {
  return {{"attention.sliding_window", {4}},   {"attention.sliding_window_pattern", {1, 0}},
          {"attention.key_length_swa", {4}},   {"attention.value_length_swa", {4}},
          {"embedding_length_per_layer_input", {0}}};
}

void expect_refused(const Status& s, ErrorCode code, const std::string& names) {
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.message();
}

TEST(GemmaRefusals, Gemma4KeysLlamaCppRequires) {
  std::vector<Key> keys = gemma4_keys();
  keys.erase(keys.begin() + 1);  // the window flags
  expect_refused(load("gemma4", keys), ErrorCode::kInvalidFile, "'gemma4.attention.sliding_window_pattern'");
  keys = gemma4_keys();
  keys[1] = {"attention.sliding_window_pattern", {2}};  // a period, not a flag per layer
  expect_refused(load("gemma4", keys), ErrorCode::kInvalidFile, "'gemma4.attention.sliding_window_pattern'");
}

TEST(GemmaRefusals, Gemma4SharedKvNeedsAWindowThenAGlobalLayer) {
  std::vector<Key> keys = gemma4_keys();
  keys.push_back({"attention.shared_kv_layers", {1}});  // layer 1 would reuse layer -1
  expect_refused(load("gemma4", keys), ErrorCode::kInvalidFile, "'gemma4.attention.shared_kv_layers' = 1");
}

TEST(GemmaRefusals, Gemma4ExpertsNeedTheirWidth) {
  std::vector<Key> keys = gemma4_keys();
  keys.push_back({"expert_count", {2}});
  keys.push_back({"expert_used_count", {1}});
  expect_refused(load("gemma4", keys), ErrorCode::kInvalidFile, "'gemma4.expert_feed_forward_length'");
}

TEST(GemmaRefusals, Gemma3nValuesLlamaCppFixes) {
  const std::vector<Key> base = {{"attention.sliding_window", {4}}, {"embedding_length_per_layer_input", {256}}};
  std::vector<Key> keys = base;
  keys.push_back({"altup.num_inputs", {5}});
  expect_refused(load("gemma3n", keys), ErrorCode::kUnsupported, "'gemma3n.altup.num_inputs' 5");
  keys = base;
  keys[1] = {"embedding_length_per_layer_input", {128}};
  expect_refused(load("gemma3n", keys), ErrorCode::kUnsupported, "'gemma3n.embedding_length_per_layer_input' is 128");
  keys = base;
  keys.push_back({"attention.shared_kv_layers", {1}});  // llama.cpp reuses from layer 20 only
  expect_refused(load("gemma3n", keys), ErrorCode::kUnsupported, "'gemma3n.attention.shared_kv_layers' is 1");
}

}  // namespace
}  // namespace ox
