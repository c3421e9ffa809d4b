// Session::save_state / load_state (core/session/state_file.h): a loaded state continues bit for
// bit like the session it was saved from; every damaged or foreign state is refused with a message
// naming the problem, and the session it was offered to is left as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/session/session.h"
#include "core/session/state_file.h"
#include "tests/support/shared_data.h"
#include "tests/core/session/open_model.h"

namespace ox {
namespace {

std::unique_ptr<Session> new_session(std::shared_ptr<const LoadedModel> model, int n_ctx,
                                     DType cache_type = DType::F16) {
  SessionOptions options;
  options.n_ctx = n_ctx;
  options.cache_type_k = options.cache_type_v = cache_type;
  Result<std::unique_ptr<Session>> s = Session::create(std::move(model), options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::vector<int32_t> prompt_of(Session& s, const char* text) {
  Result<std::vector<int32_t>> ids = s.tokenize(text, true, true);
  EXPECT_TRUE(ids.ok());
  return ids.ok() ? ids.value() : std::vector<int32_t>{};
}

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class StateRoundTrip : public ::testing::TestWithParam<DType> {};

// Saved after the prompt, loaded into a fresh session over a separately opened copy of the model:
// the same tokens, the same logits, and 24 greedy steps with bit-identical logits at every step.
TEST_P(StateRoundTrip, GreedyContinuationIsBitIdentical) {
  auto model_a = test::open_shared_model("models/stories260K.gguf"), model_b = test::open_shared_model("models/stories260K.gguf");
  ASSERT_TRUE(model_a && model_b);
  auto a = new_session(model_a, 96, GetParam()), b = new_session(model_b, 96, GetParam());
  ASSERT_TRUE(a && b);
  const std::vector<int32_t> prompt = prompt_of(*a, "Once upon a time, there was a little");
  ASSERT_TRUE(a->eval(prompt).is_ok());
  Result<std::vector<uint8_t>> state = a->save_state();
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_TRUE(b->load_state(state.value()).is_ok());
  EXPECT_EQ(b->tokens(), prompt);
  EXPECT_TRUE(same_bits(a->logits(), b->logits()));
  for (int step = 0; step < 24; ++step) {
    const int32_t next = argmax(a->logits());
    ASSERT_EQ(next, argmax(b->logits())) << "step " << step;
    const int32_t one[1] = {next};
    ASSERT_TRUE(a->eval(one).is_ok());
    ASSERT_TRUE(b->eval(one).is_ok());
    ASSERT_TRUE(same_bits(a->logits(), b->logits())) << "step " << step;
  }
  // A state saved again from the loaded session is the same bytes as the original's.
  Result<std::vector<uint8_t>> again_a = a->save_state(), again_b = b->save_state();
  ASSERT_TRUE(again_a.ok() && again_b.ok());
  EXPECT_EQ(again_a.value(), again_b.value());
}

// The high-level loop over a loaded state: generate() reuses the state's tokens and writes the
// same text as the session that evaluated them.
TEST_P(StateRoundTrip, GenerateAfterLoadMatchesUninterrupted) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_TRUE(model);
  auto a = new_session(model, 96, GetParam()), b = new_session(model, 96, GetParam());
  const std::vector<int32_t> prompt = prompt_of(*a, "Lily wanted to");
  ASSERT_TRUE(a->eval(prompt).is_ok());
  Result<std::vector<uint8_t>> state = a->save_state();
  ASSERT_TRUE(state.ok());
  ASSERT_TRUE(b->load_state(state.value()).is_ok());
  GenerateOptions greedy;
  greedy.max_tokens = 20;
  greedy.sampling.temperature = 0;
  auto ignore = [](const GenerateEvent&) { return true; };
  Result<GenerateStats> ra = a->generate(prompt, greedy, ignore), rb = b->generate(prompt, greedy, ignore);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(rb->n_prompt_cached, static_cast<int>(prompt.size()) - 1);
  EXPECT_EQ(rb->n_prompt, 1);
  EXPECT_EQ(ra->tokens, rb->tokens);
  EXPECT_EQ(ra->text, rb->text);
  EXPECT_EQ(ra->n_generated, 20);
}

INSTANTIATE_TEST_SUITE_P(CacheTypes, StateRoundTrip, ::testing::Values(DType::F16, DType::F32, DType::BF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// Damaged or foreign states, each offered to a session that holds other tokens: refused with the
// message, and the session keeps its tokens and logits.
class StateErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::open_shared_model("models/stories260K.gguf");
    ASSERT_TRUE(model_);
    auto source = new_session(model_, 64);
    ASSERT_TRUE(source);
    prompt_ = prompt_of(*source, "One day");
    ASSERT_GE(prompt_.size(), 2u);
    ASSERT_TRUE(source->eval(prompt_).is_ok());
    Result<std::vector<uint8_t>> state = source->save_state();
    ASSERT_TRUE(state.ok());
    state_ = state.value();
    target_ = new_session(model_, 64);
    ASSERT_TRUE(target_->eval(prompt_of(*target_, "The sun")).is_ok());
    before_tokens_ = target_->tokens();
    before_logits_.assign(target_->logits().begin(), target_->logits().end());
  }

  // Loads `bytes` into the target: must fail with every substring of `want` in the message.
  void expect_refused(std::span<const uint8_t> bytes, std::initializer_list<const char*> want) {
    Status s = target_->load_state(bytes);
    ASSERT_FALSE(s.is_ok()) << "accepted; expected: " << *want.begin();
    for (const char* w : want) EXPECT_NE(s.message().find(w), std::string::npos) << s.message() << "\nwanted: " << w;
    EXPECT_EQ(target_->tokens(), before_tokens_);
    EXPECT_TRUE(same_bits(target_->logits(), before_logits_));
  }

  void put_u32(size_t offset, uint32_t v) { std::memcpy(state_.data() + offset, &v, 4); }

  std::shared_ptr<const LoadedModel> model_;
  std::vector<int32_t> prompt_;
  std::vector<uint8_t> state_;
  std::unique_ptr<Session> target_;
  std::vector<int32_t> before_tokens_;
  std::vector<float> before_logits_;
};

TEST_F(StateErrors, UndamagedStateLoads) {
  ASSERT_TRUE(target_->load_state(state_).is_ok());
  EXPECT_EQ(target_->tokens(), prompt_);
}

TEST_F(StateErrors, AnotherModel) {
  auto other = test::open_shared_model("models/llama-2-tiny-random.gguf");
  ASSERT_TRUE(other);
  const uint64_t mine = model_fingerprint(model_->file()), theirs = model_fingerprint(other->file());
  ASSERT_NE(mine, theirs);
  auto s = new_session(other, 64);
  ASSERT_TRUE(s->eval(std::vector<int32_t>{1, 2, 3}).is_ok());
  Result<std::vector<uint8_t>> state = s->save_state();
  ASSERT_TRUE(state.ok());
  expect_refused(state.value(), {"state file was saved from another model",
                                 strfmt("hash %016llx, this model %016llx", static_cast<unsigned long long>(theirs),
                                        static_cast<unsigned long long>(mine)).c_str()});
}

TEST_F(StateErrors, OtherCacheTypes) {
  auto s = new_session(model_, 64, DType::F32);
  ASSERT_TRUE(s->eval(prompt_).is_ok());
  Result<std::vector<uint8_t>> state = s->save_state();
  ASSERT_TRUE(state.ok());
  expect_refused(state.value(), {"holds a f32/f32 KV cache", "this session's is f16/f16", "-ctk/-ctv"});
}

TEST_F(StateErrors, MoreTokensThanTheContext) {
  auto small = new_session(model_, static_cast<int>(prompt_.size()) - 1);
  Status s = small->load_state(state_);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find(strfmt("holds %zu tokens (saved from a context of 64), more than this session's "
                                    "context of %zu",
                                    prompt_.size(), prompt_.size() - 1)),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("-c"), std::string::npos);
  EXPECT_EQ(small->n_past(), 0);
}

TEST_F(StateErrors, MagicVersionFlagsTypes) {
  const std::vector<uint8_t> good = state_;
  state_[0] = 'X';
  expect_refused(state_, {"not an oxidize state file", "offset 0"});
  state_ = good;
  put_u32(8, 2);  // before window_first (v3)
  expect_refused(state_, {"format version 2 at offset 8 is not supported", "reads version 3"});
  state_ = good;
  put_u32(40, 1);  // this model has no sliding-window layer
  expect_refused(state_, {"window_first 1 at offset 40"});
  state_ = good;
  put_u32(40, 1000);
  expect_refused(state_, {"window_first 1000 at offset 40"});
  state_ = good;
  put_u32(12, 6);
  expect_refused(state_, {"unknown flags 0x6 at offset 12"});
  state_ = good;
  put_u32(28, 99);
  expect_refused(state_, {"KV cache type id 99 at offset 28 is not a cache type"});
  state_ = good;
  put_u32(16, 0x12345678);
  expect_refused(state_, {"saved from another model (hash "});
}

TEST_F(StateErrors, TokenOutOfTheVocabulary) {
  const int n_vocab = model_->hparams().n_vocab;
  put_u32(kStateHeaderBytes + 4, static_cast<uint32_t>(n_vocab));
  expect_refused(state_, {strfmt("token id %d at index 1 (offset %zu) is out of range (vocabulary has %d tokens)",
                                 n_vocab, kStateHeaderBytes + 4, n_vocab).c_str()});
  put_u32(kStateHeaderBytes + 4, 0xFFFFFFFFu);
  expect_refused(state_, {"token id -1 at index 1"});
}

// Every truncation is refused; one in the middle of layer 1's K rows names its offset and section.
TEST_F(StateErrors, TruncatedAnywhere) {
  for (size_t n = 0; n < state_.size(); n += (n < 64 ? 1 : 37)) {
    Status s = target_->load_state(std::span<const uint8_t>(state_.data(), n));
    ASSERT_FALSE(s.is_ok()) << "a state cut to " << n << " bytes was accepted";
    EXPECT_NE(s.message().find("truncated at offset"), std::string::npos) << n << ": " << s.message();
  }
  const size_t n_tok = prompt_.size(), logits = 4 * size_t(model_->hparams().n_vocab);
  const uint64_t k_row = 2 * uint64_t(model_->hparams().n_head_kv) * model_->hparams().head_dim_k;  // f16
  const uint64_t v_row = 2 * uint64_t(model_->hparams().n_head_kv) * model_->hparams().head_dim_v;
  const uint64_t layer1_k = kStateHeaderBytes + 4 * n_tok + logits + n_tok * (k_row + v_row);
  ASSERT_LT(layer1_k + 3, state_.size());
  expect_refused(std::span<const uint8_t>(state_.data(), layer1_k + 3),
                 {strfmt("truncated at offset %llu: expected the K cache of layer 1 for %zu positions (%llu bytes), "
                         "but the state ends at %llu",
                         static_cast<unsigned long long>(layer1_k), n_tok,
                         static_cast<unsigned long long>(n_tok * k_row), static_cast<unsigned long long>(layer1_k + 3))
                      .c_str()});
  expect_refused(std::span<const uint8_t>(state_.data(), kStateHeaderBytes + 2),
                 {strfmt("truncated at offset %zu: expected %zu token ids", kStateHeaderBytes, n_tok).c_str()});
}

TEST_F(StateErrors, TrailingBytes) {
  const size_t end = state_.size();
  state_.push_back(0);
  state_.push_back(0);
  expect_refused(state_, {strfmt("2 trailing bytes after the end of the state at offset %zu", end).c_str()});
}

// An empty session's state (no tokens, no logits) empties the session it is loaded into.
TEST(StateFile, EmptyStateEmptiesTheSession) {
  auto model = test::open_shared_model("models/stories260K.gguf");
  ASSERT_TRUE(model);
  auto empty = new_session(model, 32), s = new_session(model, 32);
  Result<std::vector<uint8_t>> state = empty->save_state();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->size(), kStateHeaderBytes);
  ASSERT_TRUE(s->eval(std::vector<int32_t>{1, 5, 9}).is_ok());
  ASSERT_TRUE(s->load_state(state.value()).is_ok());
  EXPECT_EQ(s->n_past(), 0);
  EXPECT_TRUE(s->logits().empty());
  // A truncated session (logits of a dropped position) saves without logits and loads the same way.
  ASSERT_TRUE(s->eval(std::vector<int32_t>{1, 5, 9}).is_ok());
  ASSERT_TRUE(s->truncate(2).is_ok());
  Result<std::vector<uint8_t>> cut = s->save_state();
  ASSERT_TRUE(cut.ok());
  ASSERT_TRUE(empty->load_state(cut.value()).is_ok());
  EXPECT_EQ(empty->tokens(), (std::vector<int32_t>{1, 5}));
  EXPECT_TRUE(empty->logits().empty());
}

// The fingerprint names the file's types: converting weights to an internal layout at load (the
// relaxed-SIMD wasm module's Q4_K_IL) does not change it, while any change of the tensor table does.
TEST(StateFile, FingerprintIgnoresInternalLayoutsOnly) {
  auto build = [](const char* name, uint64_t cols) {
    gguf::GgufWriter w;
    EXPECT_TRUE(w.add_string("general.architecture", "llama").is_ok());
    const uint64_t dims[] = {cols, 2};
    std::vector<uint8_t> data(static_cast<size_t>(cols / 256 * 144 * 2), 7);
    EXPECT_TRUE(w.add_tensor(name, dims, DType::Q4_K, data).is_ok());
    Result<std::vector<uint8_t>> bytes = w.to_bytes();
    EXPECT_TRUE(bytes.ok());
    auto owned = std::make_shared<std::vector<uint8_t>>(bytes.value());
    Result<std::unique_ptr<gguf::GgufFile>> f =
        gguf::GgufFile::parse(*owned, "fp.gguf", owned, /*writable=*/true);
    EXPECT_TRUE(f.ok()) << f.status().message();
    return std::move(f).value();
  };
  std::unique_ptr<gguf::GgufFile> f = build("w", 256);
  const uint64_t natural = model_fingerprint(*f);
  ASSERT_EQ(f->relayout(DType::Q4_K, DType::Q4_K_IL, [](void*, int64_t) {}), 1);
  EXPECT_EQ(f->tensors()[0].type, DType::Q4_K_IL);
  EXPECT_EQ(model_fingerprint(*f), natural);
  EXPECT_NE(model_fingerprint(*build("v", 256)), natural);
  EXPECT_NE(model_fingerprint(*build("w", 512)), natural);
}

}  // namespace
}  // namespace ox
