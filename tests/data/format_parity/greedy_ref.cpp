// llama.cpp's greedy reference for one model, in the zoo's reference format (../shared/zoo/README.md):
// prompt ids (tokenized with add_special = true, parse_special = false), the top-5 logits of the
// first N_TOP positions, N_GEN greedy ids (ties to the lower id) and their pieces. Built against the
// llama.cpp that bench/build_llama_cpp.sh builds, by make_reference.sh beside this file; the model
// runs with llama.cpp's CPU defaults (f16 KV cache, flash attention auto), n_ctx 512, 1 thread.
// With N_CTX and N_BATCH (tests/data/sliding_window): that context, the prompt in batches of
// N_BATCH (n_batch = n_ubatch) and sliding-window layers in llama.cpp's window-only cache
// (swa_full off, llama-completion's default).
// Usage: greedy_ref MODEL PROMPT N_GEN N_TOP [N_CTX N_BATCH]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

namespace {

std::string piece(const llama_vocab* vocab, llama_token id) {
  char buf[256];
  const int n = llama_token_to_piece(vocab, id, buf, sizeof(buf), 0, true);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

llama_token argmax(const float* logits, int n) {
  return static_cast<llama_token>(std::max_element(logits, logits + n) - logits);  // first of equals
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 7) {
    std::fprintf(stderr, "usage: greedy_ref MODEL PROMPT N_GEN N_TOP [N_CTX N_BATCH]\n");
    return 2;
  }
  const std::string path = argv[1], prompt = argv[2];
  const int n_gen = std::atoi(argv[3]), n_top = std::atoi(argv[4]);
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(path.c_str(), llama_model_default_params());
  if (model == nullptr) return 1;
  llama_context_params cparams = llama_context_default_params();
  cparams.n_ctx = 512;
  cparams.n_batch = 512;
  cparams.n_threads = 1;
  cparams.n_threads_batch = 1;
  if (argc == 7) {
    cparams.n_ctx = static_cast<uint32_t>(std::atoi(argv[5]));
    cparams.n_batch = cparams.n_ubatch = static_cast<uint32_t>(std::atoi(argv[6]));
    cparams.swa_full = false;
  }
  llama_context* ctx = llama_init_from_model(model, cparams);
  if (ctx == nullptr) return 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);

  std::vector<llama_token> ids(prompt.size() + 8);
  const int n = llama_tokenize(vocab, prompt.data(), static_cast<int32_t>(prompt.size()), ids.data(),
                               static_cast<int32_t>(ids.size()), true, false);
  if (n < 0) return 1;
  ids.resize(static_cast<size_t>(n));
  std::printf("model: %s\nprompt: \"%s\"\nprompt_ids:", path.substr(path.rfind('/') + 1).c_str(), prompt.c_str());
  for (llama_token id : ids) std::printf(" %d", id);
  std::printf("\n");

  for (size_t done = 0; done < ids.size(); done += cparams.n_batch) {
    const int32_t n_eval = static_cast<int32_t>(std::min<size_t>(cparams.n_batch, ids.size() - done));
    if (llama_decode(ctx, llama_batch_get_one(ids.data() + done, n_eval)) != 0) return 1;
  }
  std::vector<llama_token> gen;
  for (int step = 0; step < n_gen; ++step) {
    const float* logits = llama_get_logits_ith(ctx, -1);
    if (step < n_top) {
      std::vector<llama_token> order(static_cast<size_t>(n_vocab));
      for (int v = 0; v < n_vocab; ++v) order[static_cast<size_t>(v)] = v;
      std::stable_sort(order.begin(), order.end(), [&](llama_token a, llama_token b) { return logits[a] > logits[b]; });
      std::printf("pos %d top5 logits:", step);
      for (int r = 0; r < 5; ++r) {
        std::printf(" [%d %s %f]", order[static_cast<size_t>(r)], piece(vocab, order[static_cast<size_t>(r)]).c_str(),
                    logits[order[static_cast<size_t>(r)]]);
      }
      std::printf("\n");
    }
    llama_token next = argmax(logits, n_vocab);
    gen.push_back(next);
    if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) return 1;
  }
  std::printf("gen_ids:");
  for (llama_token id : gen) std::printf(" %d", id);
  std::printf("\ngen_text: ");
  for (llama_token id : gen) std::printf("%s", piece(vocab, id).c_str());
  std::printf("\n");
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
