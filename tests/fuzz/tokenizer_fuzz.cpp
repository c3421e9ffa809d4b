// libFuzzer target: every tokenizer family of ../shared/vocab. The first input byte picks the
// vocabulary (low 5 bits, modulo the count) and the flags (0x20 render_special, 0x40 add_special,
// 0x80 parse_special); the rest is the text. Encode, check every id is in range, then decode the ids,
// turn each into its piece and stream them through StreamDecoder; the last 4 bytes also make one
// arbitrary id, which must give an error exactly when out of range.
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/tokenizer/stream_decoder.h"
#include "core/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

// Fixed order: a seed's first byte must keep meaning the same vocabulary. Every family the
// tokenizer implements: SentencePiece, byte-level BPE with each pre-tokenizer, WordPiece, Gemma 4.
constexpr const char* kVocabs[] = {"llama-spm", "phi-3",     "gemma-4",   "llama-bpe",      "qwen2",
                                   "qwen35",    "deepseek-llm", "deepseek-coder", "falcon", "gpt-2",
                                   "mpt",       "starcoder", "refact",    "command-r",      "bert-bge",
                                   "nomic-bert-moe", "gpt-neox", "aquila", "baichuan"};
constexpr size_t kNumVocabs = sizeof(kVocabs) / sizeof(kVocabs[0]);

struct Vocab {
  std::unique_ptr<gguf::GgufFile> file;  // kept: a tokenizer is independent of it, but cheap to hold
  std::unique_ptr<tok::Tokenizer> tokenizer;
};

const std::vector<Vocab>& vocabs() {
  static const std::vector<Vocab> loaded = [] {
    std::vector<Vocab> out;
    for (const char* name : kVocabs) {
      const std::string path = test::shared_path(std::string("vocab/ggml-vocab-") + name + ".gguf");
      Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::open(path);
      if (!file.ok()) {
        std::fprintf(stderr, "tokenizer_fuzz: %s (set OXIDIZE_SHARED)\n", file.status().message().c_str());
        std::exit(1);
      }
      Result<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::from_gguf(**file);
      if (!t.ok()) {
        std::fprintf(stderr, "tokenizer_fuzz: %s\n", t.status().message().c_str());
        std::exit(1);
      }
      out.push_back({std::move(file).value(), std::move(t).value()});
    }
    return out;
  }();
  return loaded;
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ox::vocabs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  if (size == 0) return 0;
  const uint8_t head = data[0];
  const tok::Tokenizer& t = *vocabs()[(head & 0x1f) % kNumVocabs].tokenizer;
  const bool render_special = head & 0x20, add_special = head & 0x40, parse_special = head & 0x80;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  Result<std::vector<int32_t>> ids = t.encode(text, add_special, parse_special);
  OX_CHECK(ids.ok());  // any bytes are accepted
  for (int32_t id : *ids) OX_CHECK(id >= 0 && id < t.n_vocab());
  OX_CHECK(t.decode(*ids, render_special).ok());

  tok::StreamDecoder stream(t, render_special);
  for (int32_t id : *ids) {
    OX_CHECK(t.token_to_piece(id, render_special).ok());
    OX_CHECK(stream.push(id).ok());
  }
  (void)stream.flush();

  // An id from the caller (JS passes them in): out of range must be an error, never a crash.
  if (size >= 5) {
    int32_t id;
    std::memcpy(&id, data + size - 4, 4);
    const bool in_range = id >= 0 && id < t.n_vocab();
    OX_CHECK(t.token_to_piece(id, render_special).ok() == in_range);
    OX_CHECK(t.decode(std::span<const int32_t>(&id, 1), render_special).ok() == in_range);
  }
  return 0;
}
