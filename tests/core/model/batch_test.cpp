// Several sequences in one KV cache and one forward pass over tokens of all of them
// (Model::forward_batch): every sequence must give the tokens and logits it gives alone in a cache
// of its own (Model::forward), through batched prefill (interleaved runs), batched greedy decode,
// a shared prefix copied with seq_cp, and positions removed with seq_rm; and malformed batches
// are refused with an error. On several zoo architectures (rope styles, a sliding window, learned
// positions, experts) and every kernel table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/model/model.h"
#include "kernels/kernels.h"
#include "tests/core/model/zoo_support.h"

namespace ox {
namespace {

// Batched and solo runs differ only in how many rows a matmul gets at once: summation order noise,
// as in Zoo.BatchedPrefillMatchesTokenByToken.
constexpr double kTolerance = 1e-4;
constexpr int kSeqs = 4;
constexpr int kSteps = 16;
constexpr int kCtx = 64;
constexpr int kMaxBatch = 48;

using Logits = std::vector<float>;

int32_t argmax(const float* v, int n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

// Distinct ids per sequence, away from 0 (often BOS/unk).
std::vector<int32_t> tokens(int n, int seed, int n_vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = 1 + (i * 37 + seed * 101 + 11) % (n_vocab - 1);
  return t;
}

// One sequence alone in a cache of its own. logits[i] follows ids[i - 1] (logits[0]: the state it
// started from); ids are greedy.
struct Solo {
  std::vector<int32_t> ids;
  std::vector<Logits> logits;
};

// `steps` greedy tokens one at a time (Model::forward) from a state whose sequence holds `pos`
// positions and whose last logits are `first`.
Solo decode_solo(const Model& model, ForwardState& st, Logits first, int64_t pos, int steps) {
  const int n_vocab = model.hparams().n_vocab;
  Solo out;
  out.logits.push_back(std::move(first));
  Logits logits(static_cast<size_t>(n_vocab));
  for (int step = 0; step < steps; ++step) {
    const int32_t id = argmax(out.logits.back().data(), n_vocab);
    out.ids.push_back(id);
    model.forward(st, std::span<const int32_t>(&id, 1), pos + step, false, logits.data());
    out.logits.push_back(logits);
  }
  return out;
}

// The prompt in one forward, then decode_solo.
Solo run_solo(const Model& model, const kernels::KernelTable* table, ThreadPool& pool,
              const std::vector<int32_t>& prompt, int steps) {
  auto st = model.new_state(kCtx, kMaxBatch, table, &pool);
  EXPECT_TRUE(st.ok()) << st.status().message();
  Logits logits(static_cast<size_t>(model.hparams().n_vocab));
  model.forward(*st.value(), prompt, 0, false, logits.data());
  return decode_solo(model, *st.value(), std::move(logits), static_cast<int64_t>(prompt.size()), steps);
}

void expect_near(const float* got, const Logits& want, const std::string& what) {
  double worst = 0;
  for (size_t v = 0; v < want.size(); ++v) worst = std::max(worst, std::fabs(double{got[v]} - want[v]));
  EXPECT_LE(worst, kTolerance) << what;
}

// Decodes `steps` greedy tokens of every sequence together, one token per sequence per
// forward_batch (the order of the sequences in the batch reversed on odd steps), starting from
// first[s] (logits after each sequence's prompt) at positions n_pos[s]; each must follow its solo run.
void decode_together(const Model& model, ForwardState& st, std::vector<Logits> first, const std::vector<Solo>& solo,
                     const std::string& arch) {
  const int n_vocab = model.hparams().n_vocab;
  const int n = static_cast<int>(solo.size());
  std::vector<Logits> last = std::move(first);
  Logits rows(static_cast<size_t>(n) * n_vocab);
  for (int step = 0; step < kSteps; ++step) {
    std::vector<BatchToken> batch;
    for (int i = 0; i < n; ++i) {
      const int s = step % 2 == 0 ? i : n - 1 - i;
      const int32_t id = argmax(last[static_cast<size_t>(s)].data(), n_vocab);
      EXPECT_EQ(id, solo[static_cast<size_t>(s)].ids[static_cast<size_t>(step)]) << arch << " seq " << s << " step "
                                                                                   << step;
      batch.push_back(BatchToken{id, s, st.kv.n_pos(s), true});
    }
    Status status = model.forward_batch(st, batch, rows.data());
    ASSERT_TRUE(status.is_ok()) << status.message();
    for (int i = 0; i < n; ++i) {
      const int s = batch[static_cast<size_t>(i)].seq;
      const float* row = rows.data() + static_cast<size_t>(i) * n_vocab;
      expect_near(row, solo[static_cast<size_t>(s)].logits[static_cast<size_t>(step) + 1],
                  arch + " seq " + std::to_string(s) + " step " + std::to_string(step));
      last[static_cast<size_t>(s)].assign(row, row + n_vocab);
    }
  }
}

// Each prompt alone in its sequence through forward_batch; the logits after each.
std::vector<Logits> prefill_each(const Model& model, ForwardState& st,
                                 const std::vector<std::vector<int32_t>>& prompt) {
  std::vector<Logits> last;
  for (size_t s = 0; s < prompt.size(); ++s) {
    const auto& p = prompt[s];
    std::vector<BatchToken> batch;
    for (size_t i = 0; i < p.size(); ++i) {
      batch.push_back({p[i], static_cast<int32_t>(s), static_cast<int64_t>(i), i + 1 == p.size()});
    }
    Logits row(static_cast<size_t>(model.hparams().n_vocab));
    const Status status = model.forward_batch(st, batch, row.data());
    EXPECT_TRUE(status.is_ok()) << status.message();
    last.push_back(std::move(row));
  }
  return last;
}

// Prompt lengths: different, one (17) longer than gemma2's sliding window of 8.
const int kPromptLengths[kSeqs] = {5, 11, 3, 17};

std::vector<std::vector<int32_t>> prompts(int n_vocab) {
  std::vector<std::vector<int32_t>> p;
  for (int s = 0; s < kSeqs; ++s) p.push_back(tokens(kPromptLengths[s], s, n_vocab));
  return p;
}

class MultiSequence : public ::testing::TestWithParam<test::ArchTable> {
 protected:
  void SetUp() override {
    arch_ = std::get<0>(GetParam());
    table_ = std::get<1>(GetParam());
    model_ = test::load_shared_model(std::string("zoo/models/") + arch_ + ".gguf");
    ASSERT_NE(model_, nullptr);
    n_vocab_ = model_->hparams().n_vocab;
    prompt_ = prompts(n_vocab_);
    auto st = model_->new_state(kCtx, kMaxBatch, table_, &pool_, DType::F16, DType::F16, kSeqs);
    ASSERT_TRUE(st.ok()) << st.status().message();
    st_ = std::move(st).value();
  }
  // Each of `prompts` decoded alone.
  std::vector<Solo> solo_runs(const std::vector<std::vector<int32_t>>& prompts) {
    std::vector<Solo> solo;
    for (const auto& p : prompts) solo.push_back(run_solo(*model_, table_, pool_, p, kSteps));
    return solo;
  }

  std::string arch_;
  const kernels::KernelTable* table_ = nullptr;
  std::shared_ptr<const Model> model_;
  int n_vocab_ = 0;
  ThreadPool pool_{2};
  std::vector<std::vector<int32_t>> prompt_;  // kSeqs prompts of kPromptLengths
  std::unique_ptr<ForwardState> st_;          // kSeqs sequences
};

TEST_P(MultiSequence, PrefillAloneThenDecodeTogetherMatchesSolo) {
  const std::vector<Solo> solo = solo_runs(prompt_);
  const std::vector<Logits> first = prefill_each(*model_, *st_, prompt_);
  for (int s = 0; s < kSeqs; ++s) {
    expect_near(first[static_cast<size_t>(s)].data(), solo[static_cast<size_t>(s)].logits[0],
                arch_ + " prompt of seq " + std::to_string(s));
    EXPECT_EQ(st_->kv.n_pos(s), kPromptLengths[s]);
  }
  decode_together(*model_, *st_, first, solo, arch_);
}

// All four prompts in one batch, each cut in two halves and interleaved (s0a s1a s2a s3a s0b s1b
// s2b s3b): eight runs, a sequence's second run attending to rows its first stored in the same pass.
TEST_P(MultiSequence, PrefillTogetherThenDecodeTogetherMatchesSolo) {
  const std::vector<Solo> solo = solo_runs(prompt_);
  std::vector<BatchToken> batch;
  for (int half = 0; half < 2; ++half) {
    for (int s = 0; s < kSeqs; ++s) {
      const auto& p = prompt_[static_cast<size_t>(s)];
      const size_t mid = p.size() / 2, begin = half == 0 ? 0 : mid, end = half == 0 ? mid : p.size();
      for (size_t i = begin; i < end; ++i) batch.push_back({p[i], s, static_cast<int64_t>(i), i + 1 == p.size()});
    }
  }
  ASSERT_LE(batch.size(), static_cast<size_t>(kMaxBatch));
  EXPECT_EQ(split_runs(batch, st_->runs), 8u);
  Logits rows(static_cast<size_t>(kSeqs) * n_vocab_);
  ASSERT_TRUE(model_->forward_batch(*st_, batch, rows.data()).is_ok());
  // Logits rows come in batch order of the tokens that asked: every last token is in the second
  // half, in sequence order.
  std::vector<Logits> first;
  for (int s = 0; s < kSeqs; ++s) {
    const float* row = rows.data() + static_cast<size_t>(s) * n_vocab_;
    expect_near(row, solo[static_cast<size_t>(s)].logits[0], arch_ + " prompt of seq " + std::to_string(s));
    first.emplace_back(row, row + n_vocab_);
  }
  decode_together(*model_, *st_, first, solo, arch_);
}

// A prompt evaluated once in sequence 0 and copied to 1..3; each sequence continued with its own
// tokens (all four in one batch), then decoded together: each equals prompt + continuation alone.
TEST_P(MultiSequence, CopiedPrefixContinuedDifferentlyMatchesSolo) {
  const std::vector<int32_t> shared = tokens(9, 7, n_vocab_);
  const int kContinuation[kSeqs] = {4, 6, 1, 12};
  std::vector<std::vector<int32_t>> cont;
  std::vector<Solo> solo;
  for (int s = 0; s < kSeqs; ++s) {
    cont.push_back(tokens(kContinuation[s], 20 + s, n_vocab_));
    std::vector<int32_t> whole = shared;
    whole.insert(whole.end(), cont.back().begin(), cont.back().end());
    solo.push_back(run_solo(*model_, table_, pool_, whole, kSteps));
  }
  std::vector<BatchToken> batch;
  for (size_t i = 0; i < shared.size(); ++i) batch.push_back({shared[i], 0, static_cast<int64_t>(i), false});
  ASSERT_TRUE(model_->forward_batch(*st_, batch, nullptr).is_ok());
  for (int s = 1; s < kSeqs; ++s) ASSERT_TRUE(st_->kv.seq_cp(0, s, 0, 9).is_ok());
  for (int s = 0; s < kSeqs; ++s) EXPECT_EQ(st_->kv.n_pos(s), 9);

  batch.clear();
  for (int s = kSeqs - 1; s >= 0; --s) {  // sequence 3 first: rows come back in batch order
    const auto& c = cont[static_cast<size_t>(s)];
    for (size_t i = 0; i < c.size(); ++i) batch.push_back({c[i], s, 9 + static_cast<int64_t>(i), i + 1 == c.size()});
  }
  Logits rows(static_cast<size_t>(kSeqs) * n_vocab_);
  ASSERT_TRUE(model_->forward_batch(*st_, batch, rows.data()).is_ok());
  std::vector<Logits> first(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    const float* row = rows.data() + static_cast<size_t>(kSeqs - 1 - s) * n_vocab_;
    expect_near(row, solo[static_cast<size_t>(s)].logits[0], arch_ + " continuation of seq " + std::to_string(s));
    first[static_cast<size_t>(s)].assign(row, row + n_vocab_);
  }
  decode_together(*model_, *st_, first, solo, arch_);
}

// seq_rm of a tail (any model): the sequence continues from the cut as if the removed tokens had
// never been there, and the other sequences are untouched.
TEST_P(MultiSequence, SeqRmOfATailContinuesFromTheCut) {
  std::vector<Logits> first = prefill_each(*model_, *st_, prompt_);
  ASSERT_TRUE(model_->seq_rm(*st_, 1, 6, -1).is_ok());  // sequence 1 held 11
  EXPECT_EQ(st_->kv.n_pos(1), 6);
  const std::vector<int32_t> more = tokens(3, 30, n_vocab_);
  std::vector<BatchToken> batch;
  for (size_t i = 0; i < more.size(); ++i) batch.push_back({more[i], 1, 6 + static_cast<int64_t>(i), i == 2});
  ASSERT_TRUE(model_->forward_batch(*st_, batch, first[1].data()).is_ok());

  std::vector<Solo> solo;
  for (int s = 0; s < kSeqs; ++s) {
    std::vector<int32_t> p = prompt_[static_cast<size_t>(s)];
    if (s == 1) {
      p.resize(6);
      p.insert(p.end(), more.begin(), more.end());
    }
    solo.push_back(run_solo(*model_, table_, pool_, p, kSteps));
  }
  expect_near(first[1].data(), solo[1].logits[0], arch_ + " after the cut");
  decode_together(*model_, *st_, first, solo, arch_);
}

// seq_rm of a middle range: Model::shift of that sequence, the same rows as a context shift of a
// cache holding it alone; then decoding goes on as there. Refused (and nothing changed) without
// rotary embeddings.
TEST_P(MultiSequence, SeqRmOfTheMiddleIsAContextShift) {
  std::vector<Logits> first = prefill_each(*model_, *st_, prompt_);
  const Status rm = model_->seq_rm(*st_, 3, 4, 10);  // sequence 3 held 17
  if (!model_->can_shift()) {
    EXPECT_EQ(rm.code(), ErrorCode::kUnsupported) << rm.message();
    EXPECT_EQ(st_->kv.n_pos(3), 17);
    return;
  }
  ASSERT_TRUE(rm.is_ok()) << rm.message();
  EXPECT_EQ(st_->kv.n_pos(3), 11);
  auto alone = model_->new_state(kCtx, kMaxBatch, table_, &pool_);
  ASSERT_TRUE(alone.ok());
  Logits logits(static_cast<size_t>(n_vocab_));
  model_->forward(*alone.value(), prompt_[3], 0, false, logits.data());
  ASSERT_TRUE(model_->shift(*alone.value(), 4, 6, 17).is_ok());
  const KvCache& a = st_->kv;
  const KvCache& b = alone.value()->kv;
  for (int l = 0; l < model_->hparams().n_layer; ++l) {
    for (int64_t pos = 0; pos < 11; ++pos) {
      EXPECT_EQ(std::memcmp(a.k(l, 3, pos), b.k(l, 0, pos), a.k_row_bytes()), 0) << arch_ << " layer " << l;
      EXPECT_EQ(std::memcmp(a.v(l, 3, pos), b.v(l, 0, pos), a.v_row_bytes()), 0) << arch_ << " layer " << l;
    }
  }
  // One more token in both, then every sequence decodes together.
  const int32_t next = tokens(1, 40, n_vocab_)[0];
  model_->forward(*alone.value(), std::span<const int32_t>(&next, 1), 11, false, logits.data());
  ASSERT_TRUE(model_->forward_batch(*st_, std::vector<BatchToken>{{next, 3, 11, true}}, first[3].data()).is_ok());
  std::vector<Solo> solo;
  for (int s = 0; s < 3; ++s) solo.push_back(run_solo(*model_, table_, pool_, prompt_[static_cast<size_t>(s)], kSteps));
  solo.push_back(decode_solo(*model_, *alone.value(), logits, 12, kSteps));
  expect_near(first[3].data(), solo[3].logits[0], arch_ + " after the shift");
  decode_together(*model_, *st_, first, solo, arch_);
}

const char* const kArchs[] = {"llama", "qwen2", "gemma2", "gpt2", "mixtral-moe"};

// Each refused batch names its problem, and the cache is as before: the same valid batch after it
// gives the logits it gives first.
TEST(MultiSequenceBatch, MalformedBatchesAreRefused) {
  auto model = test::load_shared_model("zoo/models/llama.gguf");
  ASSERT_NE(model, nullptr);
  const int n_vocab = model->hparams().n_vocab;
  ThreadPool pool(1);
  auto made = model->new_state(/*n_ctx=*/8, /*max_batch=*/4, &kernels::best_kernels(), &pool, DType::F16,
                               DType::F16, /*n_seq=*/2);
  ASSERT_TRUE(made.ok()) << made.status().message();
  ForwardState& st = *made.value();
  Logits out(static_cast<size_t>(4 * n_vocab));
  ASSERT_TRUE(model->forward_batch(st, std::vector<BatchToken>{{5, 0, 0, false}, {6, 0, 1, false}}, nullptr).is_ok());
  // sequence 0 holds 2 positions, sequence 1 none.
  struct Case {
    std::vector<BatchToken> batch;
    ErrorCode code;
    const char* says;
  };
  const Case cases[] = {
      {{}, ErrorCode::kInvalidArgument, "must hold 1 to 4"},
      {{{1, 1, 0, false}, {1, 1, 1, false}, {1, 1, 2, false}, {1, 1, 3, false}, {1, 1, 4, false}},
       ErrorCode::kInvalidArgument, "5 tokens"},  // more than max_batch
      {{{1, 2, 0, true}}, ErrorCode::kInvalidArgument, "sequence 2 is out of range"},
      {{{1, -1, 0, true}}, ErrorCode::kInvalidArgument, "sequence -1 is out of range"},
      {{{n_vocab, 1, 0, true}}, ErrorCode::kInvalidArgument, "out of range (vocabulary"},
      {{{-3, 1, 0, true}}, ErrorCode::kInvalidArgument, "id -3"},
      {{{1, 0, 3, true}}, ErrorCode::kOutOfRange, "next position is 2"},  // a gap
      {{{1, 0, 1, true}}, ErrorCode::kOutOfRange, "next position is 2"},  // going back
      {{{1, 1, 0, false}, {1, 0, 2, false}, {1, 1, 0, true}}, ErrorCode::kOutOfRange, "batch token 2"},  // repeated
      {{{1, 1, 0, false}, {1, 1, 2, true}}, ErrorCode::kOutOfRange, "next position is 1"},  // skips one
  };
  for (const Case& c : cases) {
    const Status s = model->forward_batch(st, c.batch, out.data());
    EXPECT_EQ(s.code(), c.code) << s.message();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    EXPECT_EQ(st.kv.n_pos(0), 2);
    EXPECT_EQ(st.kv.n_pos(1), 0);
  }
  // The context (8 positions) ends: position 8 is refused even though it continues the sequence.
  std::vector<BatchToken> fill;
  for (int64_t p = 2; p < 6; ++p) fill.push_back({7, 0, p, false});
  ASSERT_TRUE(model->forward_batch(st, fill, nullptr).is_ok());
  fill.clear();
  for (int64_t p = 6; p < 8; ++p) fill.push_back({7, 0, p, false});
  ASSERT_TRUE(model->forward_batch(st, fill, nullptr).is_ok());
  const Status full = model->forward_batch(st, std::vector<BatchToken>{{7, 0, 8, true}}, out.data());
  EXPECT_EQ(full.code(), ErrorCode::kOutOfRange);
  EXPECT_NE(full.message().find("past the context of 8"), std::string::npos) << full.message();
  EXPECT_EQ(st.kv.n_pos(0), 8);

  // seq_rm and seq_cp refuse what the sequences do not hold.
  EXPECT_EQ(model->seq_rm(st, 2, 0, -1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(model->seq_rm(st, 1, 1, -1).code(), ErrorCode::kOutOfRange);  // sequence 1 is empty
  EXPECT_EQ(st.kv.seq_cp(0, 0, 0, 4).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.kv.seq_cp(0, 2, 0, 4).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.kv.seq_cp(0, 1, 0, 9).code(), ErrorCode::kOutOfRange);  // sequence 0 holds 8
  EXPECT_EQ(st.kv.seq_cp(0, 1, 2, 4).code(), ErrorCode::kOutOfRange);  // sequence 1 would lack [0, 2)
  EXPECT_EQ(st.kv.n_pos(1), 0);
}

INSTANTIATE_TEST_SUITE_P(ZooArchs, MultiSequence,
                         ::testing::Combine(::testing::ValuesIn(kArchs), ::testing::ValuesIn(kernels::all_kernels())),
                         test::arch_table_name);

}  // namespace
}  // namespace ox
