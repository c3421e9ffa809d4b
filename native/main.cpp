// oxidize: the native (and node-wasm) command line. `oxidize COMMAND [flags]`; the commands and
// their flags are the tables in native/options.cpp.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "native/args.h"
#include "native/options.h"

namespace {

// Output that did not reach its destination (a full disk, a closed pipe) is a failure: a script
// must not take a truncated answer for a complete one.
int finish_output(const char* command) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "oxidize %s: error: writing to standard output failed: %s\n", command,
                 std::strerror(errno != 0 ? errno : EIO));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using ox::cli::Args;
  using ox::cli::CommandDef;
  const std::string_view first = argc < 2 ? std::string_view() : std::string_view(argv[1]);
  if (argc < 2 || first == "-h" || first == "--help") {
    const std::string text = ox::cli::usage_text();
    std::fputs(text.c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : finish_output("--help");
  }
  if (first == "--version") {
    std::printf("%s\n", ox::cli::version_text());
    return finish_output("--version");
  }
  const CommandDef* command = ox::cli::find_command(first);
  if (command == nullptr) {
    std::fprintf(stderr, "oxidize: error: unknown command '%s'\n%s", argv[1], ox::cli::usage_text().c_str());
    return 1;
  }
  Args args(*command, argc, argv, 2);
  if (args.help_requested()) {
    std::fputs(ox::cli::command_help(*command).c_str(), stdout);
    return finish_output(command->name);
  }
  ox::Status status = args.parse_status();
  if (status.is_ok()) {
    for (const std::string& w : args.warnings()) std::fprintf(stderr, "oxidize %s: warning: %s\n", command->name, w.c_str());
    status = command->run(args);
  }
  if (!status.is_ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "oxidize %s: error: %s\n", command->name, status.message().c_str());
    return 1;
  }
  return finish_output(command->name);
}
