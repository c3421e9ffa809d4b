// Command-line flags in llama.cpp's spelling: a tiny parser that reports unknown flags and bad
// values as errors instead of guessing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ox::cli {

class Args {
 public:
  Args(int argc, char** argv, int first);

  // Each getter consumes its flag (any of the spellings, e.g. {"-n", "--n-predict"}).
  bool flag(std::initializer_list<std::string_view> names);
  Result<std::string> string(std::initializer_list<std::string_view> names, std::string fallback);
  Result<int64_t> integer(std::initializer_list<std::string_view> names, int64_t fallback, int64_t min, int64_t max);
  Result<double> number(std::initializer_list<std::string_view> names, double fallback);
  // Every value of a repeatable flag (--stop a --stop b).
  Result<std::vector<std::string>> strings(std::initializer_list<std::string_view> names);
  bool has(std::initializer_list<std::string_view> names) const;

  // Positional arguments left once flags are consumed.
  std::vector<std::string> positionals();
  // Error naming the first argument no getter consumed.
  Status finish();

 private:
  int find(std::initializer_list<std::string_view> names) const;
  std::vector<std::string> items_;
  std::vector<bool> used_;
};

// Reads a whole file (prompt files, JSON); error names the path.
Result<std::string> read_text_file(const std::string& path);
// Reads all of stdin without trimming.
std::string read_stdin();

}  // namespace ox::cli
