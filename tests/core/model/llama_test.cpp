// Llama forward pass against the independent float32 reference of stories260K
// (../shared/models/stories260K.greedy.txt: numpy, llama2.c semantics) on every kernel table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/model/model.h"
#include "kernels/kernels.h"
#include "tests/core/model/zoo_support.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

// Reference greedy ids from stories260K.greedy.txt (the first line that is not a comment).
std::vector<int32_t> reference_greedy() {
  std::ifstream in(test::shared_path("models/stories260K.greedy.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ids(line);
    std::vector<int32_t> out;
    int32_t id;
    while (ids >> id) out.push_back(id);
    return out;
  }
  return {};
}

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::shared_ptr<const Model> load_stories() { return test::load_shared_model("models/stories260K.gguf"); }

class LlamaReference : public ::testing::TestWithParam<const kernels::KernelTable*> {};

TEST_P(LlamaReference, HyperparametersFromGguf) {
  auto model = load_stories();
  ASSERT_NE(model, nullptr);
  const HParams& hp = model->hparams();
  EXPECT_EQ(hp.arch, "llama");
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_ff, 172);
  EXPECT_EQ(hp.n_layer, 5);
  EXPECT_EQ(hp.n_head, 8);
  EXPECT_EQ(hp.n_head_kv, 4);
  EXPECT_EQ(hp.n_vocab, 512);
  EXPECT_EQ(hp.n_ctx_train, 2048);  // llama.context_length as stored in this GGUF
}

TEST_P(LlamaReference, FirstStepTop5AndGreedy200Tokens) {
  auto model = load_stories();
  ASSERT_NE(model, nullptr);
  for (int n_threads : {1, 2}) {
    ThreadPool pool(n_threads);
    auto state = model->new_state(512, 64, GetParam(), &pool);
    ASSERT_TRUE(state.ok()) << state.status().message();
    std::vector<float> logits(512);
    int32_t token = 1;  // BOS
    model->forward(*state.value(), std::span<const int32_t>(&token, 1), 0, false, logits.data());

    // First-step top-5 from the shared README (float32 reference).
    const std::pair<int32_t, float> top5[] = {{403, 17.0235f}, {385, 15.4062f}, {410, 13.1083f},
                                              {317, 12.7692f}, {407, 12.4181f}};
    std::vector<int32_t> order(512);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(order[i], top5[i].first) << "rank " << i;
      EXPECT_NEAR(logits[top5[i].first], top5[i].second, 1e-3) << "token " << top5[i].first;
    }

    const std::vector<int32_t> expected = reference_greedy();
    ASSERT_GE(expected.size(), 200u);
    std::vector<int32_t> got;
    for (int step = 0; step < 200; ++step) {
      token = argmax(logits);
      got.push_back(token);
      model->forward(*state.value(), std::span<const int32_t>(&token, 1), step + 1, false, logits.data());
    }
    EXPECT_EQ(got, std::vector<int32_t>(expected.begin(), expected.begin() + 200)) << "threads " << n_threads;
  }
}

TEST_P(LlamaReference, BatchedPrefillMatchesTokenByToken) {
  auto model = load_stories();
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315};
  ThreadPool pool(2);
  auto batched = model->new_state(512, 64, GetParam(), &pool);
  auto single = model->new_state(512, 64, GetParam(), &pool);
  ASSERT_TRUE(batched.ok() && single.ok());
  std::vector<float> all(prompt.size() * 512), one(512);
  model->forward(*batched.value(), prompt, 0, true, all.data());
  for (size_t i = 0; i < prompt.size(); ++i) {
    model->forward(*single.value(), std::span<const int32_t>(&prompt[i], 1), static_cast<int64_t>(i), false,
                   one.data());
    for (int v = 0; v < 512; ++v) ASSERT_NEAR(all[i * 512 + v], one[v], 1e-4) << "position " << i << " token " << v;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, LlamaReference, ::testing::ValuesIn(kernels::all_kernels()),
                         [](const auto& info) {
                           // gtest names are alphanumeric: "neon-dotprod", "simd128+relaxed" -> '_'
                           std::string name = info.param->isa;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace ox
