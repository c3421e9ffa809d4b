// Model::shift (context shift). Layer 0's keys depend only on a token and its position, so after
// dropping positions, the moved and re-rotated keys of layer 0 must equal the keys a fresh cache
// computes for the same tokens at their new positions; values of layer 0 do not depend on the
// position at all and must have moved unchanged. Every rope style of the zoo, every cache type
// that fits, and a model without rope (refused).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/kv_cache/kv_cache.h"
#include "core/model/model.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"
#include "tests/core/model/shift_check.h"
#include "tests/core/model/zoo_support.h"

namespace ox {
namespace {

std::shared_ptr<const Model> load(const std::string& rel) { return test::load_shared_model(rel); }

using test::shifted_key_error;

// f32 cache: rotation by theta(p) then theta(-d) against theta(p - d) directly, in float: ~1e-5 of
// keys of size ~1 at positions up to 100. f16: both sides are rounded to f16 (one extra rounding
// on the shifted side), so within a couple of f16 ulps (~2e-3 at |k| ~ 2).
TEST(ContextShift, MovedKeysEqualKeysComputedAtTheNewPositions) {
  for (const char* arch : {"llama", "qwen2", "phi2", "gemma2", "gptneox", "llama3-ropefreqs"}) {
    auto model = load(std::string("zoo/models/") + arch + ".gguf");
    ASSERT_NE(model, nullptr);
    ASSERT_TRUE(model->can_shift()) << arch;
    double v_err = 0;
    EXPECT_LT(shifted_key_error(*model, DType::F32, 100, 4, 37, &v_err), 2e-5) << arch;
    EXPECT_EQ(v_err, 0.0) << arch << ": values move unchanged";
    EXPECT_LT(shifted_key_error(*model, DType::F16, 100, 1, 50, &v_err), 5e-3) << arch;
    EXPECT_EQ(v_err, 0.0) << arch;
  }
}

// A block cache type: the keys are dequantized, rotated and quantized again (as llama.cpp does).
TEST(ContextShift, QuantizedKeysAreRequantizedAfterRotation) {
  auto model = load("zoo/models/qwen2.gguf");
  ASSERT_NE(model, nullptr);
  if (model->hparams().head_dim_k % 32 != 0) GTEST_SKIP() << "head size not a multiple of 32";
  double v_err = 0;
  const double k_err = shifted_key_error(*model, DType::Q8_0, 80, 2, 30, &v_err);
  EXPECT_LT(k_err, 0.1);  // q8_0 steps are ~1/127 of a block's largest |value|: two roundings
  EXPECT_EQ(v_err, 0.0);
}

TEST(ContextShift, LearnedPositionsAndBadRangesAreRefused) {
  auto gpt2 = load("zoo/models/gpt2.gguf");
  ASSERT_NE(gpt2, nullptr);
  EXPECT_FALSE(gpt2->can_shift());
  ThreadPool pool(1);
  auto st = gpt2->new_state(32, 8, &kernels::best_kernels(), &pool);
  ASSERT_TRUE(st.ok());
  Status s = gpt2->shift(*st.value(), 0, 4, 8);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("learned absolute positions"), std::string::npos) << s.message();

  auto llama = load("zoo/models/llama.gguf");
  ASSERT_NE(llama, nullptr);
  auto st2 = llama->new_state(32, 8, &kernels::best_kernels(), &pool);
  ASSERT_TRUE(st2.ok());
  EXPECT_EQ(llama->shift(*st2.value(), 4, 0, 8).code(), ErrorCode::kOutOfRange);   // nothing dropped
  EXPECT_EQ(llama->shift(*st2.value(), 4, 5, 8).code(), ErrorCode::kOutOfRange);   // past n_past
  EXPECT_EQ(llama->shift(*st2.value(), 0, 4, 40).code(), ErrorCode::kOutOfRange);  // past n_ctx
}

}  // namespace
}  // namespace ox
