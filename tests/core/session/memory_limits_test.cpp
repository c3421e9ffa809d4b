// A context too large for memory is refused before anything is allocated, with the numbers, both
// natively (was std::bad_alloc or a 31 GB zero-fill) and in wasm (was an abort).
#include <gtest/gtest.h>

#include "core/base/memory.h"
#include "core/session/session.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

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

}  // namespace
}  // namespace ox
