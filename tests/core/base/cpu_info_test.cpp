// cpu_info: the CPU counts the thread pool and the default -t come from.
#include "core/base/cpu_info.h"

#include <gtest/gtest.h>

#include <thread>

namespace ox {
namespace {

// The counts can only be checked for consistency: the machine is whatever runs the test.
TEST(CpuInfo, CountsAreConsistent) {
  const int available = available_cpu_count();
  EXPECT_GE(available, 1);
  const unsigned online = std::thread::hardware_concurrency();  // 0: unknown
  if (online > 0) {
    EXPECT_LE(available, static_cast<int>(online));
  }
  const int physical = physical_core_count();
  EXPECT_GE(physical, 1);
  EXPECT_LE(physical, available);
  const int by_default = default_thread_count();
  EXPECT_GE(by_default, 1);
  EXPECT_LE(by_default, available);
}

}  // namespace
}  // namespace ox
