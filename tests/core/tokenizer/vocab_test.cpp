// Vocabulary loading from GGUF bytes built in memory: malformed metadata gives errors (never a
// crash), and tiny hand-made vocabularies pin the merge order rules (SentencePiece: highest score,
// leftmost on ties; BPE: lowest merge rank, leftmost on ties).
#include <gtest/gtest.h>

#include "core/gguf/writer.h"
#include "core/tokenizer/tokenizer.h"

namespace ox::tok {
namespace {

using Ids = std::vector<int32_t>;

struct VocabSpec {
  std::string model = "llama";
  std::vector<std::string> tokens;
  std::vector<float> scores;    // empty: not written
  std::vector<int32_t> types;   // empty: not written
  std::vector<std::string> merges;
  std::string pre;              // empty: not written
  bool add_bos = false;
};

Result<std::unique_ptr<Tokenizer>> build(const VocabSpec& s,
                                         void (*extra)(gguf::GgufWriter&) = nullptr) {
  gguf::GgufWriter w;
  OX_TRY(w.add_string("tokenizer.ggml.model", s.model));
  if (!s.pre.empty()) OX_TRY(w.add_string("tokenizer.ggml.pre", s.pre));
  if (!s.tokens.empty()) OX_TRY(w.add_string_array("tokenizer.ggml.tokens", s.tokens));
  if (!s.scores.empty()) OX_TRY(w.add_array<float>("tokenizer.ggml.scores", s.scores));
  if (!s.types.empty()) OX_TRY(w.add_array<int32_t>("tokenizer.ggml.token_type", s.types));
  if (!s.merges.empty()) OX_TRY(w.add_string_array("tokenizer.ggml.merges", s.merges));
  OX_TRY(w.add_bool("tokenizer.ggml.add_bos_token", s.add_bos));
  if (extra != nullptr) extra(w);
  OX_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, w.to_bytes());
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::parse(*owned, "mem.gguf", owned));
  return Tokenizer::from_gguf(*file);
}

// <unk> <s> </s> and the 256 byte tokens, then `extra` normal tokens with `scores`.
VocabSpec spm_spec(std::vector<std::string> extra, std::vector<float> scores) {
  VocabSpec s;
  s.tokens = {"<unk>", "<s>", "</s>"};
  s.types = {2, 3, 3};
  s.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    s.tokens.push_back(buf);
    s.types.push_back(6);
    s.scores.push_back(0);
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    s.tokens.push_back(extra[i]);
    s.types.push_back(1);
    s.scores.push_back(scores[i]);
  }
  return s;
}

constexpr int32_t kFirst = 259;  // id of the first extra token in spm_spec

TEST(VocabLoad, SentencePieceTakesHighestScoreThenLeftmost) {
  // " ab" -> symbols ▁ a b; candidate pairs "▁a" and "ab".
  {
    auto tok = build(spm_spec({"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"}, {-5, -5, -5, -1, -1}));
    ASSERT_TRUE(tok.ok()) << tok.status().message();
    EXPECT_EQ((*tok)->encode("ab", false, false).value(), (Ids{kFirst + 3, kFirst + 2}));  // tie: ▁a first
  }
  {
    auto tok = build(spm_spec({"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"}, {-5, -5, -5, -2, -1}));
    ASSERT_TRUE(tok.ok());
    EXPECT_EQ((*tok)->encode("ab", false, false).value(), (Ids{kFirst, kFirst + 4}));  // "ab" scores higher
  }
  {
    // A character with no token falls back to its UTF-8 bytes (<0xC3> <0xA9> for é).
    auto tok = build(spm_spec({"\xE2\x96\x81"}, {-1}));
    ASSERT_TRUE(tok.ok());
    EXPECT_EQ((*tok)->encode("\xC3\xA9", false, false).value(), (Ids{kFirst, 3 + 0xC3, 3 + 0xA9}));
  }
}

TEST(VocabLoad, BpeTakesLowestRankThenLeftmost) {
  VocabSpec s;
  s.model = "gpt2";
  s.pre = "gpt-2";
  s.tokens = {"a", "b", "c", "ab", "bc"};
  s.merges = {"a b", "b c"};
  auto tok = build(s);
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  EXPECT_EQ((*tok)->encode("abc", false, false).value(), (Ids{3, 2}));
  s.merges = {"b c", "a b"};
  tok = build(s);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ((*tok)->encode("abc", false, false).value(), (Ids{0, 4}));
  // A byte with no token in the alphabet is dropped, as llama.cpp does.
  EXPECT_EQ((*tok)->encode("axb", false, false).value(), (Ids{0, 1}));
}

TEST(VocabLoad, RepeatedAndEmptyTokenTexts) {
  VocabSpec s = spm_spec({"\xE2\x96\x81x", "", "\xE2\x96\x81x"}, {-1, -1, -1});
  auto tok = build(s);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ((*tok)->find_token("\xE2\x96\x81x"), kFirst + 2);  // the last of a repeated text
  EXPECT_EQ((*tok)->token_text(kFirst + 1), "[EMPTY_260]");
}

TEST(VocabLoad, MalformedMetadataIsAnError) {
  VocabSpec ok = spm_spec({"\xE2\x96\x81"}, {-1});
  ASSERT_TRUE(build(ok).ok());

  VocabSpec no_tokens = ok;
  no_tokens.tokens.clear();
  no_tokens.scores.clear();
  no_tokens.types.clear();
  auto r = build(no_tokens);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tokenizer.ggml.tokens"), std::string::npos) << r.status().message();

  VocabSpec short_scores = ok;
  short_scores.scores.resize(5);
  r = build(short_scores);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidFile);
  EXPECT_NE(r.status().message().find("tokenizer.ggml.scores"), std::string::npos);

  VocabSpec short_types = ok;
  short_types.types.resize(3);
  EXPECT_FALSE(build(short_types).ok());

  VocabSpec unknown_model = ok;
  unknown_model.model = "mystery";
  r = build(unknown_model);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);

  VocabSpec bpe;
  bpe.model = "gpt2";
  bpe.tokens = {"a", "b"};
  bpe.pre = "no-such-pre";
  bpe.merges = {"a b"};
  r = build(bpe);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("no-such-pre"), std::string::npos);

  bpe.pre = "gpt-2";
  bpe.merges.clear();
  r = build(bpe);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tokenizer.ggml.merges"), std::string::npos);

  // Wrong types for scalar keys.
  r = build(ok, [](gguf::GgufWriter& w) { (void)w.add_string("tokenizer.ggml.bos_token_id", "one"); });
  EXPECT_FALSE(r.ok());
  r = build(ok, [](gguf::GgufWriter& w) { (void)w.add_string("tokenizer.ggml.add_space_prefix", "yes"); });
  EXPECT_FALSE(r.ok());
}

TEST(VocabLoad, OutOfRangeSpecialIdsKeepDefaults) {
  VocabSpec s = spm_spec({"\xE2\x96\x81"}, {-1});
  s.add_bos = true;
  auto tok = build(s, [](gguf::GgufWriter& w) {
    (void)w.add_u32("tokenizer.ggml.bos_token_id", 100000);
    (void)w.add_u32("tokenizer.ggml.eos_token_id", 2);
  });
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  EXPECT_EQ((*tok)->bos_id(), 1);  // SentencePiece default
  EXPECT_EQ((*tok)->eos_id(), 2);
  EXPECT_EQ((*tok)->encode("", true, false).value(), (Ids{1}));
}

TEST(VocabLoad, BadCharsmapIsAnError) {
  VocabSpec s = spm_spec({"\xE2\x96\x81"}, {-1});
  s.model = "t5";
  auto r = build(s, [](gguf::GgufWriter& w) {
    const std::vector<uint8_t> map = {0xFF, 0xFF, 0x00, 0x00, 1, 2, 3};  // claims 65535 bytes
    (void)w.add_array<uint8_t>("tokenizer.ggml.precompiled_charsmap", map);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("precompiled_charsmap"), std::string::npos);
  // Without a charsmap the unigram model still works (no normalisation rules); "a" has no token
  // and becomes the unknown id, 2 by the t5 default.
  r = build(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->encode("a", false, false).value(), (Ids{2}));
}

}  // namespace
}  // namespace ox::tok
