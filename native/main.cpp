// oxidize: the native (and node-wasm) command line. `oxidize COMMAND [flags]`.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "native/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: oxidize COMMAND [flags]\n"
    "  run       -m MODEL [-p PROMPT | -f FILE] [-n N] [-t THREADS] [-c CTX] [--temp T] [--top-k K]\n"
    "            [--top-p P] [--min-p P] [--repeat-penalty R] [--repeat-last-n N] [--seed S] [--ids]\n"
    "            [--chat [--system TEXT]] [--stop S]... [--isa scalar|avx2|avx512|...]\n"
    "  chat      -m MODEL [--system TEXT] [-n N] [--temp T]   interactive, with the model's chat template\n"
    "  logits    -m MODEL [-p PROMPT] [--top K]          top-K `id logit` after the prompt\n"
    "  inspect   MODEL.gguf                              metadata and tensor table\n"
    "  tokenize  -m MODEL (-p TEXT | -f FILE | --stdin) [--ids] [--no-bos] [--no-parse-special]\n"
    "            [--bench R [--no-warmup]]   with --bench: JSON of R timed encodes (MB/s), no ids\n"
    "  template  (-m MODEL | --template FILE.jinja) --messages FILE.json [--add-generation-prompt]\n"
    "            [--bos S] [--eos S]\n"
    "  quantize  IN.gguf OUT.gguf TYPE [-t THREADS]     TYPE: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_M\n"
    "                                                  Q4_K_M Q5_K_M Q6_K IQ4_NL\n"
    "  bench     -m MODEL [-p 512] [-n 128] [-t 1,2] [-r 5] [-o md|json]   prompt/generation t/s\n"
    "  synth     --shape tiny-256|tiny-15M|0.5B|1B --type TYPE -o OUT.gguf [--vocab VOCAB.gguf] [--seed S]\n";

struct Command {
  const char* name;
  ox::Status (*run)(ox::cli::Args&);
};

constexpr Command kCommands[] = {
    {"run", ox::cli::cmd_run},           {"logits", ox::cli::cmd_logits},     {"inspect", ox::cli::cmd_inspect},
    {"tokenize", ox::cli::cmd_tokenize}, {"template", ox::cli::cmd_template}, {"quantize", ox::cli::cmd_quantize},
    {"synth", ox::cli::cmd_synth},       {"bench", ox::cli::cmd_bench},
    {"chat", ox::cli::cmd_chat},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  const std::string_view name = argv[1];
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    ox::cli::Args args(argc, argv, 2);
    const ox::Status status = c.run(args);
    std::fflush(stdout);
    if (!status.is_ok()) {
      std::fprintf(stderr, "oxidize %s: error: %s\n", c.name, status.message().c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "oxidize: error: unknown command '%s'\n%s", argv[1], kUsage);
  return 1;
}
