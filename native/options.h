// The CLI's one registry of options and commands: every flag is described once (spellings, value,
// help, the commands whose groups hold it), and both the parser and `oxidize COMMAND --help` read
// these tables, so a flag cannot be parsed without being documented. Spellings follow llama.cpp's.
#pragma once

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ox::cli {

// An option's spellings (at most four): built from a braced list in the tables here, or from a
// registry row elsewhere (the sampler's parameters, core/sampler/registry.h).
class OptionNames {
 public:
  constexpr OptionNames(std::initializer_list<std::string_view> names) {  // NOLINT: implicit by design
    for (std::string_view n : names) add(n);
  }
  template <size_t N>
  constexpr explicit OptionNames(const std::array<std::string_view, N>& names) {
    for (std::string_view n : names) add(n);
  }
  const std::string_view* begin() const { return names_.data(); }
  const std::string_view* end() const { return names_.data() + n_; }

 private:
  constexpr void add(std::string_view n) {
    if (!n.empty() && n_ < names_.size()) names_[n_++] = n;
  }
  std::array<std::string_view, 4> names_{};
  size_t n_ = 0;
};

struct OptionDef {
  OptionNames names;    // first is the one help and errors show first
  const char* value;    // value placeholder ("N", "TEXT"); nullptr: a flag without a value
  const char* help;
  bool repeatable = false;   // every value is kept (--stop a --stop b); otherwise the last wins
  const char* warning = nullptr;  // accepted for llama.cpp scripts, with this one-line warning
};

struct OptionGroup {
  const char* title;
  std::span<const OptionDef> options;
};

class Args;

struct CommandDef {
  const char* name;
  const char* synopsis;  // after "oxidize NAME "
  const char* summary;   // one line
  std::initializer_list<const OptionGroup*> groups;
  Status (*run)(Args&);
};

std::span<const CommandDef> all_commands();
const CommandDef* find_command(std::string_view name);

// `oxidize --help` and `oxidize COMMAND --help`, generated from the tables.
std::string usage_text();
std::string command_help(const CommandDef& command);

// The version `--version` prints (CMake's project version plus the git commit when known).
const char* version_text();

}  // namespace ox::cli
