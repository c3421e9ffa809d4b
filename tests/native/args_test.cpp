// The CLI's flag parser against the option tables: values are never taken for flags, a repeated
// flag keeps its last value, unknown flags are named, help comes from the same tables.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>

#include "core/sampler/registry.h"
#include "native/args.h"
#include "native/options.h"

namespace ox::cli {
namespace {

const CommandDef& command(const char* name) {
  const CommandDef* c = find_command(name);
  EXPECT_NE(c, nullptr) << name;
  return *c;
}

TEST(Args, RepeatedFlagKeepsTheLastValue) {
  Args args(command("run"), {"-n", "2", "-n", "3"});
  ASSERT_TRUE(args.parse_status().is_ok()) << args.parse_status().message();
  Result<int64_t> n = args.integer({"-n", "--n-predict"}, -1, -1, 100);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value(), 3);
  EXPECT_TRUE(args.finish().is_ok());
}

TEST(Args, AValueThatLooksLikeAFlagIsAValue) {
  Args args(command("run"), {"-p", "-n", "-n", "3"});
  ASSERT_TRUE(args.parse_status().is_ok()) << args.parse_status().message();
  EXPECT_EQ(args.string({"-p", "--prompt"}, "").value(), "-n");
  EXPECT_EQ(args.integer({"-n", "--n-predict"}, -1, -1, 100).value(), 3);
}

TEST(Args, SpellingsAndInlineValuesAreOneOption) {
  Args args(command("run"), {"--n-predict=7", "--prompt", "x", "-n", "9"});
  ASSERT_TRUE(args.parse_status().is_ok()) << args.parse_status().message();
  EXPECT_EQ(args.integer({"-n", "--n-predict"}, -1, -1, 100).value(), 9);
  EXPECT_EQ(args.string({"-p"}, "").value(), "x");
}

TEST(Args, RepeatableOptionsKeepEveryValue) {
  Args args(command("run"), {"--stop", "a", "-r", "b", "--stop", "c"});
  ASSERT_TRUE(args.parse_status().is_ok());
  EXPECT_EQ(args.strings({"--stop"}).value(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(args.strings({"-r", "--reverse-prompt"}).value(), (std::vector<std::string>{"b"}));
}

TEST(Args, UnknownFlagIsNamed) {
  Args args(command("run"), {"-m", "x.gguf", "--flash-attn"});
  ASSERT_FALSE(args.parse_status().is_ok());
  EXPECT_NE(args.parse_status().message().find("'--flash-attn'"), std::string::npos) << args.parse_status().message();
}

TEST(Args, MissingValueIsNamed) {
  Args args(command("run"), {"-m"});
  ASSERT_FALSE(args.parse_status().is_ok());
  EXPECT_NE(args.parse_status().message().find("-m needs a value"), std::string::npos);
}

TEST(Args, FlagOfAnotherCommandIsUnknown) {
  Args args(command("inspect"), {"--temp", "0"});
  EXPECT_FALSE(args.parse_status().is_ok());
}

TEST(Args, UnexpectedPositionalIsAnError) {
  Args args(command("run"), {"-m", "x.gguf", "stray"});
  ASSERT_TRUE(args.parse_status().is_ok());
  Status s = args.finish();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("'stray'"), std::string::npos);
}

TEST(Args, GpuLayersAndMmapFlagsAreAcceptedWithOneWarningEach) {
  Args args(command("run"), {"-ngl", "99", "--mlock", "--no-mmap"});
  ASSERT_TRUE(args.parse_status().is_ok()) << args.parse_status().message();
  ASSERT_EQ(args.warnings().size(), 3u);
  EXPECT_NE(args.warnings()[0].find("no GPU backend"), std::string::npos);
}

TEST(Args, HelpIsRequestedAnywhere) {
  EXPECT_TRUE(Args(command("chat"), {"-m", "x", "--help"}).help_requested());
  EXPECT_TRUE(Args(command("bench"), {"-h"}).help_requested());
}

TEST(Args, EveryCommandsHelpListsEveryOptionSpelling) {
  for (const CommandDef& c : all_commands()) {
    const std::string help = command_help(c);
    EXPECT_NE(help.find(std::string("usage: oxidize ") + c.name), std::string::npos);
    for (const OptionGroup* g : c.groups) {
      for (const OptionDef& o : g->options) {
        for (std::string_view n : o.names) EXPECT_NE(help.find(n), std::string::npos) << c.name << " " << n;
      }
    }
    EXPECT_NE(usage_text().find(c.name), std::string::npos);
  }
}

TEST(Args, NoCommandRegistersASpellingTwice) {
  for (const CommandDef& c : all_commands()) {
    std::vector<std::string_view> seen;
    for (const OptionGroup* g : c.groups) {
      for (const OptionDef& o : g->options) {
        for (std::string_view n : o.names) {
          EXPECT_EQ(std::find(seen.begin(), seen.end(), n), seen.end()) << c.name << " " << n;
          seen.push_back(n);
        }
      }
    }
  }
}

TEST(Escapes, AsLlamaCpp) {
  EXPECT_EQ(process_escapes("a\\nb\\tc\\\\d\\\"e\\'f"), "a\nb\tc\\d\"e'f");
  EXPECT_EQ(process_escapes("\\x41\\x4a\\xzz"), "AJ\\xzz");
  EXPECT_EQ(process_escapes("keep \\q and trailing \\"), "keep \\q and trailing \\");
}

TEST(ReadTextFile, DirectoryAndMissingFileAreNamed) {
  Result<std::string> dir = read_text_file("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos) << dir.status().message();
  Result<std::string> missing = read_text_file("/nonexistent/prompt.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos) << missing.status().message();
}

TEST(Args, EverySamplerParameterIsAFlagOfRunAndChat) {
  // The sampler registry is the one list: each row with a spelling is a flag of run (and chat,
  // which prints no --n-probs).
  for (const ParamDef& d : sampler_params()) {
    for (std::string_view n : d.names) {
      if (n.empty()) continue;
      EXPECT_TRUE(Args(command("run"), {}).accepts(n)) << n;
      if (d.i != &SamplerParams::n_probs) {
        EXPECT_TRUE(Args(command("chat"), {}).accepts(n)) << n;
      }
    }
  }
}

}  // namespace
}  // namespace ox::cli
