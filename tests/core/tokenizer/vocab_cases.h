// Test helpers: llama.cpp's tokenizer test vectors from ../shared/vocab and tests/data/tokenizer
// (.inp holds texts separated by "\n__ggml_vocab_test__\n", .out one line of ids per text, no BOS)
// and a cache of loaded tokenizers so each vocabulary is parsed once per test binary.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/tokenizer/tokenizer.h"
#include "tests/support/shared_data.h"

namespace ox::test {

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::string vocab_path(const std::string& name) { return shared_path("vocab/ggml-vocab-" + name + ".gguf"); }

// Cases of an .inp/.out pair (`what` names them in failures); empty when either file is missing.
inline std::vector<VocabCase> read_cases(const std::string& inp, const std::string& out, const std::string& what) {
  std::vector<VocabCase> cases;
  if (!file_exists(inp) || !file_exists(out)) return cases;
  const std::vector<uint8_t> in_bytes = read_file_bytes(inp), out_bytes = read_file_bytes(out);
  std::string in(in_bytes.begin(), in_bytes.end());
  const std::string out_text(out_bytes.begin(), out_bytes.end());

  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t pos = 0;
  for (size_t hit; (hit = in.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
    texts.push_back(in.substr(pos, hit - pos));
  }
  // One file (gemma-4) ends its last text without the separator.
  if (pos < in.size()) texts.push_back(in.substr(pos));

  std::vector<std::vector<int32_t>> lines;
  size_t line_start = 0;
  while (line_start < out_text.size()) {
    size_t line_end = out_text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = out_text.size();
    std::vector<int32_t> ids;
    int64_t cur = -1;
    for (size_t k = line_start; k <= line_end; ++k) {
      const char c = k < line_end ? out_text[k] : ' ';
      if (c >= '0' && c <= '9') {
        cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      } else if (cur >= 0) {
        ids.push_back(static_cast<int32_t>(cur));
        cur = -1;
      }
    }
    lines.push_back(std::move(ids));
    line_start = line_end + 1;
  }
  EXPECT_EQ(texts.size(), lines.size()) << what << ": .inp and .out disagree on the number of cases";
  for (size_t i = 0; i < texts.size() && i < lines.size(); ++i) cases.push_back({texts[i], lines[i]});
  return cases;
}

// llama.cpp's vectors of one vocabulary (NAME.gguf.inp/.out); empty when it has none.
inline std::vector<VocabCase> read_vocab_cases(const std::string& name) {
  return read_cases(vocab_path(name) + ".inp", vocab_path(name) + ".out", name);
}

// Loaded tokenizers, by vocabulary name; nullptr (with a test failure) if loading failed.
inline const tok::Tokenizer* vocab_tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<tok::Tokenizer>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<tok::Tokenizer> tok;
  auto file = gguf::GgufFile::open(vocab_path(name));
  if (!file.ok()) {
    ADD_FAILURE() << name << ": " << file.status().message();
  } else {
    auto loaded = tok::Tokenizer::from_gguf(**file);
    if (!loaded.ok()) ADD_FAILURE() << name << ": " << loaded.status().message();
    else tok = std::move(loaded).value();
  }
  return cache.emplace(name, std::move(tok)).first->second.get();
}

inline std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

}  // namespace ox::test
