// A split model (llama.cpp's gguf-split layout, written by gguf::write_split) loaded from its first
// shard runs exactly as the unsplit file: the same greedy tokens, bit for bit the same logits.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/gguf/split.h"
#include "core/session/session.h"
#include "tests/core/session/open_model.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::unique_ptr<Session> split_model_session(std::shared_ptr<const LoadedModel> model) {
  SessionOptions options;
  options.n_ctx = 96;
  Result<std::unique_ptr<Session>> s = Session::create(std::move(model), options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(SplitModel, GreedyTokensAndLogitsMatchTheUnsplitFile) {
  const std::string whole_path = test::shared_path("models/stories260K.gguf");
  Result<std::unique_ptr<gguf::GgufFile>> whole_file = gguf::GgufFile::open(whole_path);
  ASSERT_TRUE(whole_file.ok()) << whole_file.status().message();
  Result<std::vector<std::string>> shards =
      gguf::write_split(**whole_file, testing::TempDir() + "split_model_stories", 20);
  ASSERT_TRUE(shards.ok()) << shards.status().message();
  ASSERT_EQ(shards->size(), 3u);

  std::shared_ptr<const LoadedModel> whole = test::open_shared_model("models/stories260K.gguf");
  Result<std::shared_ptr<const LoadedModel>> split = LoadedModel::open(shards->front());
  ASSERT_TRUE(whole);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ((*split)->file().shards().size(), 3u);
  auto a = split_model_session(whole), b = split_model_session(*split);
  ASSERT_TRUE(a && b);

  Result<std::vector<int32_t>> prompt = a->tokenize("Once upon a time, there was a little", true, true);
  ASSERT_TRUE(prompt.ok());
  ASSERT_TRUE(a->eval(*prompt).is_ok());
  ASSERT_TRUE(b->eval(*prompt).is_ok());
  for (int step = 0; step < 24; ++step) {
    ASSERT_EQ(a->logits().size(), b->logits().size());
    ASSERT_EQ(std::memcmp(a->logits().data(), b->logits().data(), a->logits().size() * sizeof(float)), 0)
        << "step " << step;
    int32_t next = 0;
    for (size_t i = 1; i < a->logits().size(); ++i) {
      if (a->logits()[i] > a->logits()[next]) next = static_cast<int32_t>(i);
    }
    const int32_t one[1] = {next};
    ASSERT_TRUE(a->eval(one).is_ok());
    ASSERT_TRUE(b->eval(one).is_ok());
  }
  EXPECT_EQ(a->tokens(), b->tokens());
  for (const std::string& p : *shards) std::remove(p.c_str());
}

}  // namespace
}  // namespace ox
