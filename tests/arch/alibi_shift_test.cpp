// Context shift of models without rotary embeddings: with ALiBi (bloom) the cached keys do not
// depend on positions, so after dropping positions every moved row of layer 0 (keys and values,
// which depend only on the token there) must equal what a fresh cache computes for the kept
// tokens; a model with learned positions (mpt's parity model has them) is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/model/model.h"
#include "core/quant/traits.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::shared_ptr<const Model> synth_model(const std::string& arch) {
  SynthOptions o;
  o.arch = arch;
  o.shape = "tiny-arch";
  o.weight_std = 0.08f;
  o.n_ctx = 128;
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.out_path = testing::TempDir() + "oxidize_shift_" + arch + ".gguf";
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << st.message();
  auto file = gguf::GgufFile::open(o.out_path);
  if (!file.ok()) return nullptr;
  auto model = Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
  std::remove(o.out_path.c_str());
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? model.value() : nullptr;
}

// Layer 0's row `pos` (keys or values) as floats.
std::vector<float> row(const ForwardState& st, bool key, int64_t pos) {
  const KvCache& kv = st.kv;
  const int64_t n = key ? kv.k_dim() : kv.v_dim();
  std::vector<float> out(static_cast<size_t>(n));
  quant_traits(key ? kv.type_k() : kv.type_v()).to_float(key ? kv.k(0, 0, pos) : kv.v(0, 0, pos), out.data(), n);
  return out;
}

TEST(AlibiShift, MovedRowsEqualAFreshCacheOfTheKeptTokens) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no stories260K";
  auto model = synth_model("bloom");
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->can_shift());
  ThreadPool pool(2);
  const int n = 40, keep = 4, drop = 13;
  auto shifted = model->new_state(n, n, &kernels::best_kernels(), &pool);
  auto fresh = model->new_state(n, n, &kernels::best_kernels(), &pool);
  ASSERT_TRUE(shifted.ok() && fresh.ok());
  std::vector<int32_t> tokens(n);
  for (int i = 0; i < n; ++i) tokens[static_cast<size_t>(i)] = 1 + (i * 37 + 11) % (model->hparams().n_vocab - 1);
  std::vector<float> logits(static_cast<size_t>(model->hparams().n_vocab));
  model->forward(*shifted.value(), tokens, 0, false, logits.data());
  ASSERT_TRUE(model->shift(*shifted.value(), keep, drop, n).is_ok());
  EXPECT_EQ(shifted.value()->kv.n_pos(0), n - drop);
  std::vector<int32_t> kept(tokens.begin(), tokens.begin() + keep);
  kept.insert(kept.end(), tokens.begin() + keep + drop, tokens.end());
  model->forward(*fresh.value(), kept, 0, false, logits.data());
  for (int64_t pos = 0; pos < static_cast<int64_t>(kept.size()); ++pos) {
    EXPECT_EQ(row(*shifted.value(), true, pos), row(*fresh.value(), true, pos)) << "keys at " << pos;
    EXPECT_EQ(row(*shifted.value(), false, pos), row(*fresh.value(), false, pos)) << "values at " << pos;
  }
}

TEST(AlibiShift, LearnedPositionsAreRefused) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no stories260K";
  auto model = synth_model("mpt");
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->can_shift());
}

}  // namespace
}  // namespace ox
