// Every registered architecture with recurrent layers (mamba, ...), on its tiny synth model: a
// batched prefill gives the logits of token-by-token decode; two sequences in one batch give each
// their own logits; the cache counts the state and refuses to cut it (seq_rm), a context shift keeps
// it; a session's saved state restores it exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/model/arch_registry.h"
#include "core/model/model.h"
#include "core/session/session.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::string synth_path(const std::string& arch) { return testing::TempDir() + "oxidize_recurrent_" + arch + ".gguf"; }

std::shared_ptr<const LoadedModel> tiny_model(const std::string& arch) {
  SynthOptions o;
  o.arch = arch;
  o.shape = "tiny-arch";
  o.seed = 3;
  o.weight_std = 0.08f;
  o.vocab_path = test::shared_path("models/stories260K.gguf");
  o.out_path = synth_path(arch);
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << st.message();
  Result<std::shared_ptr<const LoadedModel>> m = LoadedModel::open(o.out_path);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.value() : nullptr;
}

std::vector<std::string> recurrent_archs() {
  std::vector<std::string> v;
  for (const ArchDef* a : all_archs()) {
    if (a->spec.recurrent != Recurrent::kNone) v.push_back(a->name);
  }
  return v;
}

const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378, 299, 285, 306, 316, 330, 284, 355};

class RecurrentModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = tiny_model(GetParam());
    ASSERT_NE(loaded_, nullptr);
    n_vocab_ = loaded_->hparams().n_vocab;
  }
  void TearDown() override { std::remove(synth_path(GetParam()).c_str()); }
  const Model& model() const { return loaded_->model(); }
  std::unique_ptr<ForwardState> state(int n_seq = 1) {
    auto st = model().new_state(64, 16, &kernels::best_kernels(), &pool_, DType::F16, DType::F16, n_seq);
    EXPECT_TRUE(st.ok()) << st.status().message();
    return st.ok() ? std::move(st).value() : nullptr;
  }
  std::shared_ptr<const LoadedModel> loaded_;
  int n_vocab_ = 0;
  ThreadPool pool_{2};
};

double max_diff(const float* a, const float* b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

TEST_P(RecurrentModel, BatchedPrefillMatchesTokenByTokenDecode) {
  const int64_t n = static_cast<int64_t>(kPrompt.size());
  std::vector<float> batched(static_cast<size_t>(n * n_vocab_)), stepped(batched.size());
  auto a = state();
  model().forward(*a, kPrompt, 0, true, batched.data());
  auto b = state();
  for (int64_t t = 0; t < n; ++t) {
    model().forward(*b, std::span<const int32_t>(&kPrompt[static_cast<size_t>(t)], 1), t, false,
                    stepped.data() + t * n_vocab_);
  }
  // Only the matmuls' blocking differs (a batch of 12 rows against rows of 1).
  EXPECT_LT(max_diff(batched.data(), stepped.data(), n * n_vocab_), 1e-3);
  EXPECT_EQ(a->kv.n_pos(0), n);
  // Evaluating again from position 0 starts from a cleared state: the same logits.
  std::vector<float> again(batched.size());
  model().forward(*a, kPrompt, 0, true, again.data());
  EXPECT_EQ(again, batched);
}

TEST_P(RecurrentModel, SequencesInOneBatchKeepTheirOwnState) {
  const int64_t n = 6;
  // Sequence 0 gets kPrompt[0..6), sequence 1 kPrompt[6..12), interleaved token by token.
  std::vector<BatchToken> batch;
  for (int64_t t = 0; t < n; ++t) {
    batch.push_back({kPrompt[static_cast<size_t>(t)], 0, t, true});
    batch.push_back({kPrompt[static_cast<size_t>(n + t)], 1, t, true});
  }
  auto st = state(2);
  std::vector<float> both(batch.size() * static_cast<size_t>(n_vocab_));
  ASSERT_TRUE(model().forward_batch(*st, batch, both.data()).is_ok());
  for (int seq = 0; seq < 2; ++seq) {
    auto alone = state();
    std::vector<float> want(static_cast<size_t>(n * n_vocab_));
    model().forward(*alone, std::span<const int32_t>(kPrompt.data() + seq * n, static_cast<size_t>(n)), 0, true,
                    want.data());
    for (int64_t t = 0; t < n; ++t) {
      EXPECT_LT(max_diff(both.data() + (2 * t + seq) * n_vocab_, want.data() + t * n_vocab_, n_vocab_), 1e-3)
          << "sequence " << seq << " token " << t;
    }
  }
}

TEST_P(RecurrentModel, CacheCountsTheStateAndRefusesToCutIt) {
  auto st = state(2);
  ASSERT_TRUE(st->kv.has_recurrent());
  EXPECT_GT(st->kv.rs().bytes(), 0u);
  if (model().spec().hybrid) {
    EXPECT_GT(st->kv.bytes(), st->kv.rs().bytes());  // K/V rows for the attention layers too
  } else {
    EXPECT_EQ(st->kv.k_dim(), 0);  // a pure recurrent model keeps no K/V rows
    EXPECT_EQ(st->kv.bytes(), st->kv.rs().bytes());
  }
  std::vector<float> logits(static_cast<size_t>(n_vocab_));
  model().forward(*st, kPrompt, 0, false, logits.data());
  const Status cut = model().seq_rm(*st, 0, 4, -1);
  EXPECT_EQ(cut.code(), ErrorCode::kUnsupported);
  EXPECT_NE(cut.message().find("recurrent state"), std::string::npos) << cut.message();
  EXPECT_EQ(model().seq_rm(*st, 0, 2, 5).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(st->kv.n_pos(0), static_cast<int64_t>(kPrompt.size()));
  // Nothing (an empty range) and everything are fine.
  EXPECT_TRUE(model().seq_rm(*st, 0, 5, 5).is_ok());
  // A whole copy to sequence 1, then a partial one refused.
  EXPECT_TRUE(st->kv.seq_cp(0, 1, 0, st->kv.n_pos(0)).is_ok());
  EXPECT_EQ(st->kv.seq_cp(0, 1, 0, 3).code(), ErrorCode::kUnsupported);
  // A context shift renumbers the positions and keeps the state (llama.cpp's recurrent memory).
  auto state_bytes = [&] {
    std::vector<uint8_t> b;
    for (std::span<const uint8_t> r : st->kv.rs().ranges(0)) b.insert(b.end(), r.begin(), r.end());
    return b;
  };
  const std::vector<uint8_t> before = state_bytes();
  ASSERT_TRUE(model().shift(*st, 2, 4, static_cast<int64_t>(kPrompt.size()), 0).is_ok());
  EXPECT_EQ(st->kv.n_pos(0), static_cast<int64_t>(kPrompt.size()) - 4);
  EXPECT_EQ(state_bytes(), before);
  ASSERT_TRUE(model().seq_rm(*st, 0, 0, -1).is_ok());
  EXPECT_EQ(st->kv.n_pos(0), 0);
  const std::vector<uint8_t> cleared = state_bytes();
  EXPECT_TRUE(std::all_of(cleared.begin(), cleared.end(), [](uint8_t v) { return v == 0; }));
  // Sequence 1's copy continues as sequence 0 would have.
  std::vector<float> next1(logits.size()), next0(logits.size());
  const int32_t tok = 300;
  ASSERT_TRUE(model().forward_batch(*st, std::vector<BatchToken>{{tok, 1, st->kv.n_pos(1), true}}, next1.data()).is_ok());
  auto fresh = state();
  model().forward(*fresh, kPrompt, 0, false, logits.data());
  model().forward(*fresh, std::span<const int32_t>(&tok, 1), static_cast<int64_t>(kPrompt.size()), false, next0.data());
  EXPECT_LT(max_diff(next0.data(), next1.data(), n_vocab_), 1e-4);
}

TEST_P(RecurrentModel, SessionStateRestoresTheRecurrentState) {
  SessionOptions options;
  options.n_ctx = 64;
  options.n_threads = 1;
  auto a = Session::create(loaded_, options);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a.value()->eval(kPrompt).is_ok());
  Result<std::vector<uint8_t>> saved = a.value()->save_state();
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  const int32_t tok = 300;
  ASSERT_TRUE(a.value()->eval(std::span<const int32_t>(&tok, 1)).is_ok());
  const std::vector<float> want(a.value()->logits().begin(), a.value()->logits().end());

  auto b = Session::create(loaded_, options);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(b.value()->load_state(saved.value()).is_ok());
  ASSERT_TRUE(b.value()->eval(std::span<const int32_t>(&tok, 1)).is_ok());
  const std::vector<float> got(b.value()->logits().begin(), b.value()->logits().end());
  EXPECT_EQ(got, want);
  // A truncated state file names the recurrent part it lacks.
  std::vector<uint8_t> cut(saved.value().begin(), saved.value().end() - 4);
  const Status bad = b.value()->load_state(cut);
  EXPECT_NE(bad.message().find("recurrent state"), std::string::npos) << bad.message();
  // Keeping part of the context is refused; keeping none is fine.
  EXPECT_EQ(b.value()->truncate(3).code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(b.value()->truncate(0).is_ok());
}

// Greedy generation through a session: a second prompt that shares only part of the first cannot
// reuse the cut state, so it starts again from position 0 and gives a fresh session's tokens; a
// context shift past n_ctx keeps generating.
std::vector<int32_t> generate(Session& s, std::span<const int32_t> prompt, int n, bool* ok) {
  GenerateOptions o;
  o.max_tokens = n;
  o.sampling.temperature = 0.0f;
  o.ignore_eos = true;
  std::vector<int32_t> out;
  auto on_event = [&](const GenerateEvent& e) {
    out.push_back(e.token);
    return true;
  };
  Result<GenerateStats> r = s.generate(prompt, o, on_event);
  *ok = r.ok();
  EXPECT_TRUE(r.ok()) << r.status().message();
  return out;
}

TEST_P(RecurrentModel, GenerationRestartsWhereThePrefixDiverges) {
  SessionOptions options;
  options.n_ctx = 24;
  options.n_threads = 1;
  auto a = Session::create(loaded_, options);
  auto b = Session::create(loaded_, options);
  ASSERT_TRUE(a.ok() && b.ok());
  bool ok = false;
  generate(*a.value(), kPrompt, 4, &ok);
  std::vector<int32_t> other(kPrompt.begin(), kPrompt.begin() + 6);
  other.push_back(290);
  const std::vector<int32_t> reused = generate(*a.value(), other, 6, &ok);
  const std::vector<int32_t> fresh = generate(*b.value(), other, 6, &ok);
  EXPECT_EQ(reused, fresh);
  // 7 prompt tokens + 30 generated in a context of 24: shifted at least once, and still going.
  const std::vector<int32_t> longer = generate(*b.value(), other, 30, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(longer.size(), 30u);
}

INSTANTIATE_TEST_SUITE_P(Archs, RecurrentModel, ::testing::ValuesIn(recurrent_archs()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RecurrentModel);

}  // namespace
}  // namespace ox
