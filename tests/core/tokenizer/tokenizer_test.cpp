// Tokenizer behaviour beyond the id vectors: BOS/EOS, special-token parsing on and off, control
// tokens in pieces and decode, end-of-generation ids, llama.cpp's decode clean-up, invalid UTF-8.
// Expected ids come from llama.cpp's test vectors (../shared/vocab/*.out) and the vocab files.
#include <gtest/gtest.h>

#include "tests/core/tokenizer/vocab_cases.h"

namespace ox::tok {
namespace {

using test::vocab_tokenizer;
using Ids = std::vector<int32_t>;

Ids encode(const Tokenizer& tok, std::string_view text, bool add_special, bool parse_special) {
  auto r = tok.encode(text, add_special, parse_special);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Ids{};
}

Ids concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(Tokenizer, AddsBosEosAsTheFamilyDoes) {
  // "Hello" ids from the vectors: llama-spm 15043, llama-bpe 9906, qwen2 9707, gemma-4 9259, bert 7592.
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  EXPECT_EQ(encode(*spm, "Hello", true, false), (Ids{1, 15043}));
  EXPECT_EQ(encode(*spm, "", true, false), (Ids{1}));
  EXPECT_EQ(encode(*spm, "", false, false), Ids{});
  EXPECT_EQ(spm->bos_id(), 1);
  EXPECT_EQ(spm->eos_id(), 2);

  const Tokenizer* llama3 = vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  EXPECT_EQ(encode(*llama3, "Hello", true, false), (Ids{128000, 9906}));

  const Tokenizer* qwen = vocab_tokenizer("qwen2");  // no BOS by default
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(encode(*qwen, "Hello", true, false), (Ids{9707}));

  const Tokenizer* gemma = vocab_tokenizer("gemma-4");
  ASSERT_NE(gemma, nullptr);
  EXPECT_EQ(encode(*gemma, "Hello", true, false), (Ids{2, 9259}));

  const Tokenizer* bert = vocab_tokenizer("bert-bge");  // [CLS] text [SEP]
  ASSERT_NE(bert, nullptr);
  EXPECT_EQ(encode(*bert, "Hello", true, false), (Ids{101, 7592, 102}));
}

TEST(Tokenizer, ParsesSpecialTokensOnlyWhenAsked) {
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  // After a special token SentencePiece starts a new word: "Hello" gets its space prefix.
  EXPECT_EQ(encode(*spm, "<s>Hello", false, true), (Ids{1, 15043}));
  const Ids literal = encode(*spm, "<s>Hello", false, false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1), 0);
  EXPECT_GT(literal.size(), 2u);

  const Tokenizer* llama3 = vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  EXPECT_EQ(encode(*llama3, "<|begin_of_text|>Hello world", false, true), (Ids{128000, 9906, 1917}));
  const Ids plain = encode(*llama3, "<|begin_of_text|>Hello world", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 128000), 0);

  const Tokenizer* qwen = vocab_tokenizer("qwen2");
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(encode(*qwen, "<|im_start|>user\nHello world<|im_end|>", false, true),
            concat({{151644}, encode(*qwen, "user\nHello world", false, false), {151645}}));

  const Tokenizer* gemma = vocab_tokenizer("gemma-4");
  ASSERT_NE(gemma, nullptr);
  EXPECT_EQ(encode(*gemma, "<|turn>user\nHello<turn|>", false, true),
            concat({{105}, encode(*gemma, "user\n", false, false), {9259, 106}}));
}

TEST(Tokenizer, UserDefinedTokensAreAlwaysSplitOut) {
  // deepseek-llm marks single characters like "ø" (100002) user-defined: llama.cpp (like Hugging
  // Face added tokens) splits them out even without special-token parsing.
  const Tokenizer* ds = vocab_tokenizer("deepseek-llm");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->find_token("\xC3\xB8"), 100002);
  EXPECT_EQ(encode(*ds, "\xC3\xB8", false, false), (Ids{100002}));
  const Ids word = encode(*ds, "a\xC3\xB8" "b", false, false);
  EXPECT_EQ(word, concat({encode(*ds, "a", false, false), {100002}, encode(*ds, "b", false, false)}));
}

TEST(Tokenizer, ControlTokensRenderOnlyOnRequest) {
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  EXPECT_EQ(spm->token_to_piece(1, false).value(), "");
  EXPECT_EQ(spm->token_to_piece(1, true).value(), "<s>");
  EXPECT_EQ(spm->token_to_piece(15043, false).value(), " Hello");
  EXPECT_EQ(spm->token_to_piece(3 + 0x0A, false).value(), "\n");  // <0x0A> byte token
  EXPECT_TRUE(spm->is_control(1));
  EXPECT_FALSE(spm->is_control(15043));
  // llama.cpp strips the SentencePiece space from the first piece only, even an empty one.
  EXPECT_EQ(spm->decode(Ids{15043, 3186}, false).value(), "Hello world");
  EXPECT_EQ(spm->decode(Ids{1, 15043}, true).value(), "<s> Hello");
  EXPECT_EQ(spm->decode(Ids{1, 15043}, false).value(), " Hello");

  const Tokenizer* llama3 = vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  EXPECT_EQ(llama3->token_to_piece(128009, false).value(), "");
  EXPECT_EQ(llama3->token_to_piece(128009, true).value(), "<|eot_id|>");
  EXPECT_EQ(llama3->decode(Ids{128000, 9906, 1917}, false).value(), "Hello world");
  EXPECT_EQ(llama3->decode(Ids{128000, 9906, 1917}, true).value(), "<|begin_of_text|>Hello world");
}

TEST(Tokenizer, RejectsOutOfRangeIds) {
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  EXPECT_FALSE(spm->token_to_piece(-1, true).ok());
  EXPECT_FALSE(spm->token_to_piece(spm->n_vocab(), true).ok());
  EXPECT_EQ(spm->token_to_piece(spm->n_vocab(), true).status().code(), ErrorCode::kOutOfRange);
  EXPECT_FALSE(spm->decode(Ids{15043, 32000}, false).ok());
  EXPECT_EQ(spm->token_text(-5), "");
}

TEST(Tokenizer, EndOfGenerationTokens) {
  const Tokenizer* llama3 = vocab_tokenizer("llama-bpe");
  ASSERT_NE(llama3, nullptr);
  EXPECT_TRUE(llama3->is_eog(128001));   // <|end_of_text|> (EOS)
  EXPECT_TRUE(llama3->is_eog(128009));   // <|eot_id|>
  EXPECT_FALSE(llama3->is_eog(128000));  // BOS
  EXPECT_FALSE(llama3->is_eog(9906));

  const Tokenizer* qwen = vocab_tokenizer("qwen2");
  ASSERT_NE(qwen, nullptr);
  EXPECT_TRUE(qwen->is_eog(151645));  // <|im_end|>
  EXPECT_TRUE(qwen->is_eog(151643));  // <|endoftext|>
  EXPECT_FALSE(qwen->is_eog(151644));

  const Tokenizer* gemma = vocab_tokenizer("gemma-4");
  ASSERT_NE(gemma, nullptr);
  EXPECT_TRUE(gemma->is_eog(1));    // <eos>
  EXPECT_TRUE(gemma->is_eog(106));  // <turn|>
  EXPECT_FALSE(gemma->is_eog(105));

  const Tokenizer* phi3 = vocab_tokenizer("phi-3");
  ASSERT_NE(phi3, nullptr);
  EXPECT_TRUE(phi3->is_eog(32007));  // <|end|>
  EXPECT_TRUE(phi3->is_eog(32000));  // <|endoftext|>
  EXPECT_FALSE(phi3->is_eog(-1));
}

TEST(Tokenizer, ChatTemplateAndNames) {
  const Tokenizer* qwen = vocab_tokenizer("qwen2");
  ASSERT_NE(qwen, nullptr);
  EXPECT_NE(qwen->chat_template().find("<|im_start|>"), std::string_view::npos);
  EXPECT_EQ(qwen->model_name(), "gpt2");
  EXPECT_EQ(qwen->pre_name(), "qwen2");
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  EXPECT_TRUE(spm->chat_template().empty());
  EXPECT_EQ(spm->kind(), TokenizerKind::kSentencePiece);
  EXPECT_EQ(vocab_tokenizer("bert-bge")->kind(), TokenizerKind::kWordPiece);
}

TEST(Tokenizer, DecodeCleansSpacesForFamiliesThatAskForIt) {
  // gpt-2 sets clean_up_tokenization_spaces: " ," " !" " 's" lose their space on decode.
  const Tokenizer* gpt2 = vocab_tokenizer("gpt-2");
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(gpt2->decode(encode(*gpt2, "Hello , world ! it 's", false, false), false).value(), "Hello, world! it's");
  EXPECT_EQ(gpt2->decode(encode(*gpt2, "a ' b", false, false), false).value(), "a'b");
  EXPECT_EQ(gpt2->decode(encode(*gpt2, "I 'll go", false, false), false).value(), "I 'll go");
  // qwen2 does not: the text comes back as it was.
  const Tokenizer* qwen = vocab_tokenizer("qwen2");
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(qwen->decode(encode(*qwen, "Hello , world ! it 's", false, false), false).value(), "Hello , world ! it 's");
}

TEST(Tokenizer, InvalidUtf8IsTokenizedLikeLlamaCpp) {
  // SentencePiece falls back to byte tokens (<0xFF> is id 3 + 0xFF): lossless.
  const Tokenizer* spm = vocab_tokenizer("llama-spm");
  ASSERT_NE(spm, nullptr);
  EXPECT_EQ(encode(*spm, "\xFF", false, false), (Ids{29871, 258}));
  const std::string broken = "ab\xE2\x82" "c\xC0\x80\xF4\x90\x80\x80\xED\xA0\x80";
  EXPECT_EQ(spm->decode(encode(*spm, broken, false, false), false).value(), broken);

  // Code-point based families see U+FFFD for each invalid byte, as llama.cpp's splitter does.
  for (const char* name : {"llama-bpe", "gpt-2", "qwen35", "gemma-4", "deepseek-coder"}) {
    const Tokenizer* tok = vocab_tokenizer(name);
    ASSERT_NE(tok, nullptr);
    EXPECT_EQ(encode(*tok, "a\xFF" "b", false, false), encode(*tok, "a\xEF\xBF\xBD" "b", false, false)) << name;
    EXPECT_EQ(encode(*tok, "x\xE2\x82", false, false), encode(*tok, "x\xEF\xBF\xBD\xEF\xBF\xBD", false, false)) << name;
  }
  // WordPiece drops U+FFFD altogether.
  const Tokenizer* bert = vocab_tokenizer("bert-bge");
  ASSERT_NE(bert, nullptr);
  EXPECT_EQ(encode(*bert, "Hello\xFF", false, false), (Ids{7592}));
}

TEST(Tokenizer, UnigramNormalisesAndSegments) {
  // nomic-bert-moe carries XLM-R's SentencePiece unigram model: "Hello world" is
  // <s> ▁Hello ▁world </s> = 0 35378 8999 2, as the XLM-R tokenizer gives it.
  const Tokenizer* ugm = vocab_tokenizer("nomic-bert-moe");
  ASSERT_NE(ugm, nullptr);
  EXPECT_EQ(ugm->kind(), TokenizerKind::kUnigram);
  EXPECT_EQ(encode(*ugm, "Hello world", true, false), (Ids{0, 35378, 8999, 2}));
  EXPECT_EQ(ugm->token_text(35378), "\xE2\x96\x81Hello");
  // The charsmap applies NFKC (full-width letters) and extra spaces collapse.
  EXPECT_EQ(encode(*ugm, "\xEF\xBC\xA8\xEF\xBD\x85\xEF\xBD\x8C\xEF\xBD\x8C\xEF\xBD\x8F world", false, false),
            (Ids{35378, 8999}));
  EXPECT_EQ(encode(*ugm, "  Hello   world  ", false, false), (Ids{35378, 8999}));
  EXPECT_EQ(ugm->decode(Ids{35378, 8999}, false).value(), "Hello world");
  // <mask> strips the whitespace before it (llama.cpp's rule for this architecture).
  EXPECT_EQ(encode(*ugm, "Hello <mask>", false, true), (Ids{35378, 250001}));
}

}  // namespace
}  // namespace ox::tok
