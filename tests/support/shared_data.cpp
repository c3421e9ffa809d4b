// Locates and reads shared test data.
#include "tests/support/shared_data.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace ox::test {

std::string shared_path(const std::string& relative) {
  const char* env = std::getenv("OXIDIZE_SHARED");
  std::string root = (env != nullptr && *env != '\0') ? std::string(env) : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
  return root + "/" + relative;
}

std::string source_path(const std::string& relative) { return std::string(OXIDIZE_SOURCE_DIR) + "/" + relative; }

bool file_exists(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::vector<uint8_t> bytes;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    ADD_FAILURE() << "cannot open " << path;
    return bytes;
  }
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

}  // namespace ox::test
