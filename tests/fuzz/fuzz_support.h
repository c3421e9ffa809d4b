// Helpers shared by the libFuzzer targets: the shared data folder (tests/support's rule) and whole-file
// reads. An invariant of the code under test is checked with OX_CHECK: its abort is a finding.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "tests/support/shared_data.h"

namespace ox::fuzz {

// Whole file; exits with a message if it cannot be read (a fuzzer without its data is useless).
inline std::string read_file_or_die(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "fuzz: cannot open %s (set OXIDIZE_SHARED to the shared data folder)\n", path.c_str());
    std::exit(1);
  }
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
  std::fclose(f);
  return bytes;
}

}  // namespace ox::fuzz
