// Helpers shared by the libFuzzer targets: where the shared data lives, whole-file reads, and a
// check that stops the run (a finding) when an invariant of the code under test does not hold.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ox::fuzz {

// $OXIDIZE_SHARED, else the folder `shared` beside the source tree (the rule tests/support uses).
inline std::string shared_path(const std::string& relative) {
  const char* env = std::getenv("OXIDIZE_SHARED");
  const std::string root =
      (env != nullptr && *env != '\0') ? std::string(env) : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
  return root + "/" + relative;
}

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

// An invariant the fuzzed code promises (ids in range, errors instead of crashes): a finding if broken.
#define OX_FUZZ_CHECK(cond)                                                        \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                \
    }                                                                              \
  } while (0)

}  // namespace ox::fuzz
