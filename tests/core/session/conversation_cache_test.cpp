// ConversationCache: a side request does not cost the main conversation its cached prefix, the
// swapped-back conversation continues exactly as if never interrupted, and the cache is bounded
// (least recently used out first, by slot count and by bytes).
#include <gtest/gtest.h>

#include <string>

#include "core/session/conversation_cache.h"
#include "core/session/session.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::shared_ptr<const LoadedModel> model() {
  static auto m = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

std::unique_ptr<Session> session() {
  SessionOptions o;
  o.n_ctx = 512;
  o.n_threads = 2;
  auto s = Session::create(model(), o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

std::vector<int32_t> tokens(const std::string& text) {
  auto t = model()->tokenizer().encode(text, true, false);
  EXPECT_TRUE(t.ok());
  return t.value();
}

// Swaps in, then generates greedily: the stats say how much of the prompt was already cached.
GenerateStats run(Session& s, ConversationCache& cache, const std::vector<int32_t>& prompt, int n) {
  EXPECT_TRUE(cache.swap_in(s, prompt).ok());
  GenerateOptions g;
  g.max_tokens = n;
  g.sampling.temperature = 0;
  auto on_event = [](const GenerateEvent&) { return true; };
  auto stats = s.generate(prompt, g, on_event);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return stats.value();
}

TEST(ConversationCache, SideRequestDoesNotEvictTheMainConversation) {
  const std::vector<int32_t> a = tokens("Once upon a time, there was a little girl named Lily. She loved to play "
                                        "outside in the park with her friends every day.");
  const std::vector<int32_t> b = tokens("Tom had a red ball.");
  auto s = session();
  ConversationCache cache(4, uint64_t{64} << 20);
  const GenerateStats first = run(*s, cache, a, 20);
  std::vector<int32_t> turn2 = a;
  turn2.insert(turn2.end(), first.tokens.begin(), first.tokens.end());
  const std::vector<int32_t> more = tokens(" Then");
  turn2.insert(turn2.end(), more.begin() + 1, more.end());  // without its BOS

  run(*s, cache, b, 10);  // the side request: the main conversation is saved, not overwritten
  EXPECT_EQ(cache.size(), 1);
  const GenerateStats resumed = run(*s, cache, turn2, 12);
  // Everything the session held of the main conversation is reused: the prompt and all generated
  // tokens but the last, which was never evaluated.
  EXPECT_EQ(resumed.n_prompt_cached, static_cast<int>(a.size() + first.tokens.size() - 1));

  // The same turn in a session that never saw the side request gives the same tokens.
  auto direct = session();
  ConversationCache unused(4, uint64_t{64} << 20);
  run(*direct, unused, a, 20);
  const GenerateStats want = run(*direct, unused, turn2, 12);
  EXPECT_EQ(resumed.tokens, want.tokens);
  EXPECT_EQ(resumed.n_prompt_cached, want.n_prompt_cached);
}

TEST(ConversationCache, NextTurnOfTheSameConversationSavesNothing) {
  const std::vector<int32_t> a = tokens("Once upon a time, there was a dog.");
  auto s = session();
  ConversationCache cache(4, uint64_t{64} << 20);
  const GenerateStats first = run(*s, cache, a, 8);
  std::vector<int32_t> turn2 = a;
  turn2.insert(turn2.end(), first.tokens.begin(), first.tokens.end());
  run(*s, cache, turn2, 8);
  EXPECT_EQ(cache.size(), 0);
}

TEST(ConversationCache, BoundedBySlotsAndBytesLeastRecentlyUsedFirst) {
  auto s = session();
  ConversationCache cache(4, uint64_t{64} << 20);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 6; ++i) {
    prompts.push_back(tokens("Story number " + std::to_string(i) + ": once upon a time there was a cat named Tim."));
    run(*s, cache, prompts.back(), 4);
  }
  EXPECT_EQ(cache.size(), 4);  // five saved, the oldest (story 0) evicted
  // The stories share their first tokens ("Story number "): a conversation found in the cache
  // reuses all of its prompt but the last token, an evicted one only that shared start.
  size_t shared = 0;
  while (prompts[0][shared] == prompts[1][shared]) ++shared;
  EXPECT_EQ(run(*s, cache, prompts[1], 4).n_prompt_cached, static_cast<int>(prompts[1].size()) - 1)
      << "story 1 is still cached";
  EXPECT_EQ(run(*s, cache, prompts[0], 4).n_prompt_cached, static_cast<int>(shared)) << "story 0 was evicted";

  ConversationCache small(8, 1);  // no state fits in one byte
  run(*s, small, prompts[2], 4);
  run(*s, small, prompts[3], 4);
  EXPECT_EQ(small.size(), 0);
  EXPECT_EQ(small.bytes(), 0u);
}

}  // namespace
}  // namespace ox
