// A context, batch, text or embedding request too large for memory is refused before anything is
// allocated, with the numbers, both natively (was std::bad_alloc or a 31 GB zero-fill) and in wasm
// (was an abort).
#include <gtest/gtest.h>
#include <malloc.h>

#include <functional>
#include <new>
#include <string>

#include "core/base/memory.h"
#include "core/session/embedding.h"
#include "core/session/session.h"
#include "tests/support/shared_data.h"

#ifndef __EMSCRIPTEN__
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OX_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OX_TEST_ASAN 1
#endif
#if defined(OX_TEST_ASAN)
#include <sanitizer/allocator_interface.h>
#endif

namespace ox {
namespace {

// Bytes malloc has handed out and not had back.
uint64_t heap_in_use() {
#if defined(OX_TEST_ASAN)
  // ASan replaces malloc, so glibc's counters see none of it; its own count of live bytes does.
  return __sanitizer_get_current_allocated_bytes();
#elif defined(__EMSCRIPTEN__)
  const struct mallinfo mi = mallinfo();
  return static_cast<uint32_t>(mi.uordblks);  // an int holding dlmalloc's size_t (see memory.cpp)
#else
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<uint64_t>(mi.uordblks) + static_cast<uint64_t>(mi.hblkhd);  // arenas + mmapped blocks
#endif
}

// Runs `body` where memory is short: natively in a child process whose address space may grow by
// only `room` bytes (RLIMIT_AS), in wasm in this process, whose heap cannot pass 4 GiB. body sizes
// its request from memory_budget() and returns "" or what went wrong; an abort on a failed
// allocation (what these requests ended in before they were checked) fails the test too.
void with_little_memory(uint64_t room, const std::function<std::string()>& body) {
#ifdef __EMSCRIPTEN__
  (void)room;
  const std::string failure = body();
  EXPECT_EQ(failure, "");
#else
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit rl;
    getrlimit(RLIMIT_AS, &rl);
    // The address space mapped now (statm's first field, in pages), plus room.
    FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f == nullptr || std::fscanf(f, "%llu", &pages) != 1) _exit(3);
    std::fclose(f);
    rl.rlim_cur = static_cast<rlim_t>(pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + room);
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(4);
    // A failed operator new ends the child, as it ends the process in the engine's -fno-exceptions
    // builds (here gtest, built with exceptions, would catch std::bad_alloc and run on).
    std::set_new_handler([] {
      std::fputs("operator new failed: an allocation was not checked\n", stderr);
      _exit(5);
    });
    const std::string failure = body();
    if (!failure.empty()) std::fprintf(stderr, "%s\n", failure.c_str());
    std::fflush(nullptr);
    _exit(failure.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status) << " (an abort?)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's message above";
#endif
}

// "" if `status` is kTooLarge with every one of `words` in its message, else why not.
std::string too_large_naming(const Status& status, std::initializer_list<std::string> words) {
  if (status.code() != ErrorCode::kTooLarge) {
    return "expected too_large, got " + std::string(error_code_name(status.code())) + ": " + status.message();
  }
  for (const std::string& w : words) {
    if (status.message().find(w) == std::string::npos) return "no '" + w + "' in: " + status.message();
  }
  return "";
}

TEST(MemoryLimits, ContextLargerThanMemoryIsRefusedWithTheNumbers) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  SessionOptions options;
  options.n_ctx = 1 << 30;  // stories260K: 640 bytes of f16 KV per position, 640 GiB in all
  Result<std::unique_ptr<Session>> session = Session::create(model.value(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kTooLarge);
  EXPECT_NE(session.status().message().find("needs 640."), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("in f16/f16"), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("-ctk"), std::string::npos) << session.status().message();
  options.cache_type_k = options.cache_type_v = DType::F32;  // twice the bytes
  session = Session::create(model.value(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("needs 1280."), std::string::npos) << session.status().message();
  options.cache_type_k = options.cache_type_v = DType::F16;
  EXPECT_NE(session.status().message().find("GiB of memory is available"), std::string::npos);
  EXPECT_NE(session.status().message().find("smaller context"), std::string::npos);
  // And a context that fits still opens.
  options.n_ctx = 512;
  EXPECT_TRUE(Session::create(model.value(), options).ok());
}

TEST(MemoryLimits, BudgetIsKnownAndConsistent) {
  const MemoryBudget b = memory_budget();
  EXPECT_GT(b.total, uint64_t{1} << 20);
  EXPECT_GT(b.available, 0u);
  EXPECT_LE(b.available, b.total);
  EXPECT_TRUE(check_memory(1024, "a kibibyte", "").is_ok());
  Status s = check_memory(b.total + 1, "more than everything", "ask for less");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("more than everything needs"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("; ask for less"), std::string::npos) << s.message();
}

TEST(MemoryLimits, StateEstimateMatchesWhatIsAllocated) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Model& m = model.value()->model();
  const uint64_t slack = 64 * 1024;  // malloc's headers and ForwardState's own small fields
  // Sizes whose buffers are megabytes: malloc's counters miss small blocks (glibc's per-thread cache
  // hands back freed ones without counting them), which the slack below could not tell apart anyway.
  for (const auto& [n_ctx, n_batch] : {std::pair{4096, 512}, std::pair{512, 2048}}) {
    Result<StateBytes> need = m.state_bytes(n_ctx, n_batch, DType::F16, DType::F16);
    ASSERT_TRUE(need.ok()) << need.status().message();
    EXPECT_GT(need->buffers, static_cast<uint64_t>(n_batch) * m.hparams().n_embd * sizeof(float));
    ASSERT_GT(need->buffers, 16 * slack);
    const uint64_t before = heap_in_use();
    Result<std::unique_ptr<ForwardState>> st = m.new_state(n_ctx, n_batch, nullptr, nullptr);
    ASSERT_TRUE(st.ok()) << st.status().message();
    const uint64_t allocated = heap_in_use() - before;
    EXPECT_EQ((*st)->kv.bytes(), need->kv);
    // The KV cache is mapped outside malloc natively (BigBuffer) and calloc'd in wasm: malloc saw the
    // buffers and perhaps the cache.
    EXPECT_GE(allocated + slack, need->buffers) << n_ctx << " x " << n_batch;
    const uint64_t kv_in_heap = allocated + slack >= need->kv + need->buffers ? need->kv : 0;
    EXPECT_LE(allocated, kv_in_heap + need->buffers + slack) << n_ctx << " x " << n_batch;
  }
}

TEST(MemoryLimits, BatchLargerThanMemoryIsRefusedWithTheNumbers) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Model& m = model.value()->model();
  // A batch whose buffers alone (over 3 KiB a token for this model) pass a tebibyte.
  const int n_batch = 1 << 30;
  Result<StateBytes> need = m.state_bytes(64, n_batch, DType::F16, DType::F16);
  ASSERT_TRUE(need.ok());
  EXPECT_GT(need->buffers, uint64_t{1} << 40);
  Result<std::unique_ptr<ForwardState>> st = m.new_state(64, n_batch, nullptr, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(too_large_naming(st.status(), {"batches of 1073741824 tokens", "buffers", "-b / n_batch"}), "");
}

TEST(MemoryLimits, TextLargerThanMemoryCanTokenizeIsRefused) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  with_little_memory(uint64_t{128} << 20, [&]() -> std::string {
    // A sixteenth of what is left, as text: SentencePiece's symbols alone take 16 bytes a byte.
    const std::string text(static_cast<size_t>(memory_budget().available / 16), 'a');
    Result<std::vector<int32_t>> ids = model.value()->tokenizer().encode(text, true, false);
    if (ids.ok()) return "a text of " + std::to_string(text.size()) + " bytes was tokenized";
    return too_large_naming(ids.status(), {"tokenizing " + std::to_string(text.size()) + " bytes", "shorter text"});
  });
}

TEST(MemoryLimits, EmbeddingsLargerThanMemoryAreRefusedBeforeAnyPass) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  with_little_memory(uint64_t{128} << 20, [&]() -> std::string {
    EmbedderOptions options;
    options.n_ctx = 256;
    options.pooling = Pooling::kNone;  // a vector per token: 256 bytes of floats per 4-byte id here
    Result<std::unique_ptr<Embedder>> embedder = Embedder::create(model.value(), options);
    if (!embedder.ok()) return embedder.status().message();
    const uint64_t per_token = static_cast<uint64_t>(model.value()->hparams().n_embd) * sizeof(float);
    const uint64_t n_inputs = memory_budget().available / per_token / 256 + 1;
    const std::vector<std::vector<int32_t>> inputs(static_cast<size_t>(n_inputs), std::vector<int32_t>(256, 1));
    Result<EmbeddingResult> out = (*embedder)->embed_tokens(inputs);
    if (out.ok()) return "every embedding was computed";
    return too_large_naming(out.status(), {"embedding vectors of 64 floats", "pool them"});
  });
}

}  // namespace
}  // namespace ox
