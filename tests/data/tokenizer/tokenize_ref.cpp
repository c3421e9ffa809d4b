// llama.cpp's token ids for a file of test texts, in llama.cpp's test-tokenizer-0 format: the texts
// are separated by "\n__ggml_vocab_test__\n" and each gets one line of space-separated ids
// (parse_special = false; the texts are raw bytes, NULs and bad UTF-8 kept). --special tokenizes
// with add_special = true; KEY=true|false overrides a boolean metadata key (llama.cpp's
// kv_overrides, which apply whether or not the file has the key).
// Built against the llama.cpp that bench/build_llama_cpp.sh builds, by make_reference.sh beside it.
// Usage: tokenize_ref VOCAB.gguf TEXTS.inp [--special] [KEY=true|false ...] > IDS.out
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tokenize_ref VOCAB.gguf TEXTS.inp [--special] [KEY=true|false ...]\n");
    return 2;
  }
  bool add_special = false;
  std::vector<llama_model_kv_override> overrides;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg == "--special") {
      add_special = true;
    } else if (eq != std::string::npos && eq < 127 && (arg.substr(eq + 1) == "true" || arg.substr(eq + 1) == "false")) {
      llama_model_kv_override o{};
      o.tag = LLAMA_KV_OVERRIDE_TYPE_BOOL;
      std::memcpy(o.key, arg.data(), eq);
      o.val_bool = arg.substr(eq + 1) == "true";
      overrides.push_back(o);
    } else {
      std::fprintf(stderr, "bad argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  overrides.push_back(llama_model_kv_override{});  // the list ends with an empty key
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t pos = 0;
  for (size_t hit; (hit = all.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
    texts.push_back(all.substr(pos, hit - pos));
  }
  if (pos < all.size()) texts.push_back(all.substr(pos));

  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model_params mparams = llama_model_default_params();
  mparams.vocab_only = true;
  mparams.kv_overrides = overrides.data();
  llama_model* model = llama_model_load_from_file(argv[1], mparams);
  if (model == nullptr) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  for (const std::string& text : texts) {
    std::vector<llama_token> ids(text.size() + 8);
    int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), ids.data(),
                           static_cast<int32_t>(ids.size()), add_special, false);
    if (n < 0) {
      ids.resize(static_cast<size_t>(-n));
      n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), ids.data(),
                         static_cast<int32_t>(ids.size()), add_special, false);
    }
    for (int i = 0; i < n; ++i) std::printf("%s%d", i ? " " : "", ids[static_cast<size_t>(i)]);
    std::printf("\n");
  }
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
