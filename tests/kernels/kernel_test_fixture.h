// The parameterised suite every kernel table runs through (kernels_test.cpp defines the tests;
// each file that has tables to check instantiates it: all_kernels(), emulated AVX-512, ...).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/kernels.h"
#include "tests/support/float_bits.h"

namespace ox::kernels {

using test::float_bits;

class KernelTableTest : public ::testing::TestWithParam<const KernelTable*> {
 protected:
  const KernelTable& table() const { return *GetParam(); }
};

// gtest parameter names must be alphanumeric: "neon-dotprod" -> "neon_dotprod".
inline std::string table_param_name(const ::testing::TestParamInfo<const KernelTable*>& info) {
  std::string name = info.param->isa;
  for (char& c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  }
  return name;
}

}  // namespace ox::kernels
