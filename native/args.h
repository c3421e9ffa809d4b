// Command-line flags in llama.cpp's spelling, parsed against the command's option tables
// (native/options.h): a flag's value is always the next argument (so `-p "-n"` is a prompt),
// a repeated flag keeps its last value (or every value, if repeatable), an unknown flag is an
// error naming it, and `--name=value` works for long names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "native/options.h"

namespace ox::cli {

class Args {
 public:
  // Parses argv[first..] for `command`; warnings for accepted-and-ignored flags go to `warnings`.
  Args(const CommandDef& command, int argc, char** argv, int first);
  // Parses a list (tests).
  Args(const CommandDef& command, std::vector<std::string> items);

  // The first problem the parse found (unknown flag, missing value), or ok.
  const Status& parse_status() const { return parse_status_; }
  bool help_requested() const { return help_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Getters take any spelling of a registered option (it must be in the command's tables).
  bool flag(std::initializer_list<std::string_view> names);
  Result<std::string> string(std::initializer_list<std::string_view> names, std::string fallback);
  Result<int64_t> integer(std::initializer_list<std::string_view> names, int64_t fallback, int64_t min, int64_t max);
  Result<double> number(std::initializer_list<std::string_view> names, double fallback);
  // Every value of a repeatable option, in order (--stop a --stop b).
  Result<std::vector<std::string>> strings(std::initializer_list<std::string_view> names);
  bool has(std::initializer_list<std::string_view> names) const;
  // Whether the command's tables hold this spelling (for options read from a registry).
  bool accepts(std::string_view name) const { return lookup(name) != nullptr; }

  // Positional arguments (anything that is not an option or its value; everything after "--").
  std::vector<std::string> positionals();
  // Error if positionals were given that the command did not take.
  Status finish();

 private:
  struct Given {
    const OptionDef* option;
    std::string spelling;  // as typed, for messages
    std::string value;
  };
  void parse(std::vector<std::string> items);
  const OptionDef* lookup(std::string_view name) const;
  const OptionDef* registered(std::initializer_list<std::string_view> names) const;
  const Given* last(const OptionDef* option) const;

  const CommandDef& command_;
  std::vector<Given> given_;
  std::vector<std::string> positionals_;
  bool positionals_taken_ = false;
  bool help_ = false;
  Status parse_status_;
  std::vector<std::string> warnings_;
};

// llama.cpp's escape processing of -p: \n \r \t \\ \' \" \? \a \b \f \v \xHH; other
// backslashes are kept as typed.
std::string process_escapes(std::string_view text);

// Reads a whole file (prompt files, JSON); the error names the path and the reason (a directory,
// no such file, permission).
Result<std::string> read_text_file(const std::string& path);
// Reads all of stdin without trimming.
std::string read_stdin();

}  // namespace ox::cli
