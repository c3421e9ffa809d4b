// The tables behind the CLI: option groups and the commands that use them.
#include "native/options.h"

#include <string>
#include <vector>

#include "core/sampler/registry.h"
#include "native/commands.h"

#ifndef OXIDIZE_VERSION
#define OXIDIZE_VERSION "0.0.0"
#endif
#ifndef OXIDIZE_GIT_COMMIT
#define OXIDIZE_GIT_COMMIT "unknown"
#endif

namespace ox::cli {
namespace {

const OptionDef kModelOptions[] = {
    {{"-m", "--model"}, "FILE", "GGUF model to load"},
    {{"-c", "--ctx-size"}, "N", "context size in tokens (0: the model's, at most 4096)"},
    {{"-t", "--threads"}, "N", "threads (default: the number of physical cores)"},
    {{"-b", "--batch-size"}, "N", "prompt tokens per forward pass (default 512)"},
    {{"--isa"}, "NAME", "kernel table to use: scalar, avx2, avx512, ... (default: the best this CPU runs)"},
    {{"-ctk", "--cache-type-k"}, "TYPE", "KV cache type for K: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 "
                                         "(default f16)"},
    {{"-ctv", "--cache-type-v"}, "TYPE", "KV cache type for V (same types; default f16)"},
    {{"--swa-full"}, nullptr, "sliding-window layers keep the whole context (default: only their window, as llama.cpp)"},
    {{"-ngl", "--n-gpu-layers", "--gpu-layers"}, "N", "accepted for llama.cpp scripts; ignored", false,
     "oxidize has no GPU backend: -ngl is ignored, every layer runs on the CPU"},
    {{"--mlock"}, nullptr, "accepted for llama.cpp scripts; ignored", false,
     "--mlock is ignored: the model stays mapped and the OS may page it out"},
    {{"--no-mmap"}, nullptr, "accepted for llama.cpp scripts; ignored", false,
     "--no-mmap is ignored: the model is always memory-mapped natively"},
};

const OptionDef kPromptOptions[] = {
    {{"-p", "--prompt"}, "TEXT", "prompt; \\n \\t \\\\ \\\" \\' \\xHH escapes are processed unless --no-escape"},
    {{"-f", "--file"}, "FILE", "read the prompt from FILE (verbatim, no escapes)"},
    {{"--stdin"}, nullptr, "read the prompt from standard input"},
    {{"--no-escape"}, nullptr, "take -p literally"},
    {{"--escape", "-e"}, nullptr, "process escapes in -p (the default)"},
};

const OptionDef kGenerationOptions[] = {
    {{"-n", "--n-predict"}, "N", "tokens to generate (-1: until end of generation or a full context)"},
    {{"--stop"}, "TEXT", "stop when TEXT is generated (repeatable)", true},
    {{"-r", "--reverse-prompt"}, "TEXT", "stop when TEXT is generated (repeatable; llama.cpp's spelling)", true},
    {{"--ignore-eos"}, nullptr, "ignore end-of-generation tokens and go on (implies --logit-bias EOS-inf)"},
    {{"--keep"}, "N", "prompt tokens kept when the context shifts (default 0, -1: the whole prompt; BOS is always kept)"},
    {{"--context-shift"}, nullptr, "when the context fills, drop half of what follows the kept tokens and go on (default)"},
    {{"--no-context-shift"}, nullptr, "when the context fills, stop (finish: length); a prompt longer than it is an error"},
    {{"--grammar"}, "GBNF", "constrain the output to this grammar (llama.cpp's GBNF)"},
    {{"--grammar-file"}, "FILE", "the same from a file"},
    {{"-j", "--json-schema"}, "SCHEMA", "constrain the output to JSON matching this JSON Schema ({}: any JSON value)"},
    {{"-jf", "--json-schema-file"}, "FILE", "the same from a file"},
};

// The sampler's flags, one per row of core/sampler/registry.h (help with the default appended);
// with_n_probs: whether the command prints --n-probs (run does, chat does not).
std::span<const OptionDef> sampler_options(bool with_n_probs) {
  struct Table {
    std::vector<std::string> help;
    std::vector<OptionDef> options;
  };
  auto build = [](bool n_probs) {
    Table t;
    const SamplerParams defaults;
    std::vector<const ParamDef*> rows;
    for (const ParamDef& d : sampler_params()) {
      if (d.names[0].empty() || (!n_probs && d.i == &SamplerParams::n_probs)) continue;
      rows.push_back(&d);
      t.help.push_back(strfmt("%s (default: %s)", d.help, param_value_text(defaults, d).c_str()));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool repeatable = rows[i]->type == ParamType::kLogitBias || rows[i]->type == ParamType::kBreakers;
      t.options.push_back(OptionDef{OptionNames(rows[i]->names), rows[i]->value, t.help[i].c_str(), repeatable});
    }
    return t;
  };
  static const Table with = build(true);
  static const Table without = build(false);
  return with_n_probs ? std::span<const OptionDef>(with.options) : std::span<const OptionDef>(without.options);
}

const OptionDef kRunOptions[] = {
    {{"--ids"}, nullptr, "print token ids instead of text"},
    {{"--chat", "-cnv", "--conversation"}, nullptr, "render -p as a user message with the model's chat template"},
    {{"-no-cnv", "--no-conversation"}, nullptr, "plain completion of -p (the default)"},
    {{"--system", "-sys", "--system-prompt"}, "TEXT", "system message (with --chat)"},
    {{"--display-prompt"}, nullptr, "print the prompt before the generated text"},
    {{"--no-display-prompt"}, nullptr, "print only the generated text (the default)"},
    {{"--prompt-cache"}, "FILE", "load the state saved in FILE (if it exists) so the prompt reuses its matching "
                                 "prefix; save the state after the prompt to FILE"},
    {{"--prompt-cache-all"}, nullptr, "with --prompt-cache: save the generated tokens too"},
    {{"--prompt-cache-ro"}, nullptr, "with --prompt-cache: load FILE but never write it"},
};

const OptionDef kChatOptions[] = {
    {{"--system", "-sys", "--system-prompt"}, "TEXT", "system message"},
};

// Tool calls (OpenAI's tools / tool_choice / parallel_tool_calls). llama.cpp's CLI has none;
// its --tools means llama-server's built-in agent tools, so these spellings differ on purpose.
const OptionDef kToolOptions[] = {
    {{"--tools-file"}, "FILE", "JSON array of OpenAI function tools ({type: function, function: {name, description, "
                               "parameters}}) rendered by the chat template; the reply is printed as one JSON "
                               "assistant message with its tool_calls parsed (run: needs --chat)"},
    {{"--tool-choice"}, "MODE", "auto (default: the model may call tools), none, required (a call is forced by a "
                                "grammar), or a function's name (a call to it is forced)"},
    {{"--no-parallel-tool-calls"}, nullptr, "at most one tool call per reply (default: one or more)"},
};

const OptionDef kChatTemplateOptions[] = {
    {{"--chat-template"}, "NAME|FILE", "render chats with this template instead of the model's: a built-in name "
                                       "(llama.cpp's: chatml, llama3, mistral-v7, gemma, phi3, ...) or a Jinja file"},
};

const OptionDef kLogitsOptions[] = {
    {{"--top"}, "K", "how many of the highest logits to print (default 5)"},
};

const OptionDef kInspectOptions[] = {
    {{"-m", "--model"}, "FILE", "GGUF file (or give it as the argument)"},
};

const OptionDef kArchsOptions[] = {
    {{"--names"}, nullptr, "only the names, one per line"},
    {{"--generative"}, nullptr, "only the architectures that generate text (causal attention), not the encoders"},
};

const OptionDef kFormatsOptions[] = {
    {{"--coverage"}, nullptr, "only the SIMD coverage columns (what scripts/formats-table merges)"},
};

const OptionDef kTokenizeOptions[] = {
    {{"-m", "--model"}, "FILE", "GGUF file with a vocabulary"},
    {{"--ids"}, nullptr, "print the ids as a list"},
    {{"--no-bos"}, nullptr, "do not add BOS/EOS"},
    {{"--no-parse-special"}, nullptr, "read control-token texts as plain text"},
    {{"--bench"}, "R", "time R encodes and print JSON (MB/s) instead of ids"},
    {{"--no-warmup"}, nullptr, "with --bench: no untimed first encode"},
};

const OptionDef kTemplateOptions[] = {
    {{"-m", "--model"}, "FILE", "take the chat template and BOS/EOS from this GGUF"},
    {{"--template"}, "FILE", "a Jinja chat template file"},
    {{"--messages"}, "FILE", "JSON array of {role, content} messages"},
    {{"--add-generation-prompt"}, nullptr, "end with the assistant turn's opening"},
    {{"--bos"}, "TEXT", "bos_token"},
    {{"--eos"}, "TEXT", "eos_token"},
};

const OptionDef kQuantizeOptions[] = {
    {{"-t", "--threads"}, "N", "threads (0: the number of physical cores; also the 4th argument, as llama-quantize)"},
    {{"--imatrix"}, "FILE", "importance matrix (GGUF or .dat, from `oxidize imatrix` or llama-imatrix) for the "
                            "quantizers that use one"},
    {{"--include-weights"}, "NAME", "use the imatrix only for tensors whose name contains NAME (repeatable)", true},
    {{"--exclude-weights"}, "NAME", "do not use the imatrix for tensors whose name contains NAME (repeatable)", true},
    {{"--allow-requantize"}, nullptr, "allow quantizing tensors that are already quantized (loses quality)"},
    {{"--leave-output-tensor"}, nullptr, "leave output.weight as it is"},
    {{"--output-tensor-type"}, "TYPE", "type of output.weight (q8_0, q6_k, f16, ...)"},
    {{"--token-embedding-type"}, "TYPE", "type of token_embd.weight"},
    {{"--pure"}, nullptr, "no per-tensor mixes: every quantized tensor gets the preset's type (row-length "
                          "fallbacks still apply)"},
    {{"--tensor-type"}, "PATTERN=TYPE", "tensors whose name PATTERN (a POSIX extended regular expression, searched "
                                        "as llama.cpp does) matches get TYPE; the first match wins (repeatable)", true},
    {{"--tensor-type-file"}, "FILE", "--tensor-type PATTERN=TYPE entries, separated by spaces or newlines"},
    {{"--override-kv"}, "KEY=TYPE:VALUE", "set metadata KEY in the output (TYPE: int, float, bool, str) (repeatable)",
     true},
    {{"--prune-layers"}, "L0,L1,...", "leave these layers out (later ones are renumbered, block_count lowered)"},
    {{"--keep-split"}, nullptr, "a split input (NAME-00001-of-0000N.gguf) gives OUT-00001-of-0000N.gguf .. as "
                                "llama-quantize (without it: one file)"},
    {{"--dry-run"}, nullptr, "print each tensor's type and size and the totals; write nothing (OUT.gguf may be "
                             "left out)"},
    {{"--max-buffer-size"}, "MiB", "at most this much memory for the rows of one tensor being converted (default: "
                                   "8192); the output is the same"},
};

const OptionDef kImatrixOptions[] = {
    {{"-f", "--file"}, "FILE", "the text to collect over (read verbatim)"},
    {{"-o", "--output", "--output-file"}, "FILE", "output file (default imatrix.gguf)"},
    {{"--output-format"}, "gguf|dat", "file format (default gguf; dat: llama.cpp's legacy format)"},
    {{"--chunks"}, "N", "evaluate at most N chunks of -c tokens (default -1: every whole chunk)"},
    {{"--chunk", "--from-chunk"}, "N", "skip the first N chunks of the text (default 0)"},
    {{"--process-output"}, nullptr, "collect output.weight too"},
    {{"--ppl"}, nullptr, "print the perplexity of each chunk's second half (the default)"},
    {{"--no-ppl"}, nullptr, "do not compute the perplexity"},
    {{"--parse-special"}, nullptr, "read special-token texts in the text as control tokens"},
    {{"--in-file"}, "FILE", "start from this imatrix (GGUF or .dat; repeatable: they are summed); without -f the "
                            "files are only combined and saved, the model not loaded", true},
    {{"--show-statistics"}, nullptr, "print per-tensor and per-layer statistics of one --in-file and exit"},
};

const OptionDef kBenchOptions[] = {
    {{"-m", "--model"}, "FILE", "GGUF model"},
    {{"-p", "--n-prompt"}, "N[,N...]", "prompt lengths (default 512; 0 skips)", true},
    {{"-n", "--n-gen"}, "N[,N...]", "generation lengths (default 128; 0 skips)", true},
    {{"-t", "--threads"}, "N[,N...]", "thread counts (default: the number of physical cores)", true},
    {{"-d", "--n-depth"}, "N[,N...]", "tokens already in the context before each test, filled untimed (default 0)",
     true},
    {{"-r", "--repetitions"}, "N", "timed repetitions (default 5)"},
    {{"-b", "--batch-size"}, "N", "prompt tokens per forward pass (default 512)"},
    {{"-ctk", "--cache-type-k"}, "TYPE", "KV cache type for K (default f16; see `oxidize run --help`)"},
    {{"-ctv", "--cache-type-v"}, "TYPE", "KV cache type for V (default f16)"},
    {{"--swa-full"}, nullptr, "sliding-window layers keep the whole context (default: only their window)"},
    {{"-o", "--output"}, "md|json|jsonl", "output format (default md; jsonl: one JSON object per line)"},
    {{"--no-warmup"}, nullptr, "no untimed first run"},
    {{"--isa"}, "NAME", "kernel table to use"},
    {{"-ngl", "--n-gpu-layers"}, "N", "accepted for llama.cpp scripts; ignored", false,
     "oxidize has no GPU backend: -ngl is ignored, every layer runs on the CPU"},
};

const OptionDef kPerplexityOptions[] = {
    {{"-f", "--file"}, "FILE", "the text to score (read verbatim; e.g. wiki.test.raw)"},
    {{"--chunks"}, "N", "score at most N chunks of -c tokens (default -1: every whole chunk)"},
};

const OptionDef kGgufSplitOptions[] = {
    {{"--split-max-tensors"}, "N", "tensors per shard (default 128, as llama-gguf-split)"},
    {{"--split"}, nullptr, "(the only operation; accepted as llama-gguf-split takes it)"},
};

const OptionDef kSynthOptions[] = {
    {{"--arch"}, "NAME", "a tiny parity model of this architecture, every optional feature on (shape tiny-arch)"},
    {{"--variant"}, "NAME", "with --arch: a second layout of the architecture (deepseek2: kv_b; A@mtp: mtp; fused_qkv, fused_gate_up_exps)"},
    {{"--shape"}, "NAME", "tiny-256, tiny-arch, tiny-15M, 0.5B, 1B, bge-small or bge-base (embeddings: with --arch bert); moe-16x64 (qwen3moe) or lfm2-1.2B (lfm2), without --arch"},
    {{"--type"}, "TYPE", "weight type (a quantize preset or F32/F16)"},
    {{"-o", "--output"}, "FILE", "output GGUF"},
    {{"--vocab"}, "FILE", "take the vocabulary from this GGUF"},
    {{"--vocab-size"}, "N", "keep only the vocabulary's first N tokens (not BPE; 0: all)"},
    {{"-s", "--seed"}, "S", "weights seed (default 1)"},
    {{"-t", "--threads"}, "N", "threads (0: the number of physical cores)"},
    {{"--layers"}, "N", "layer count (0: the shape's)"},
    {{"--weight-std"}, "S", "standard deviation of the weight matrices (default 0.02)"},
};

const OptionDef kServeOptions[] = {
    {{"--host"}, "HOST", "address to listen on (default 127.0.0.1; 0.0.0.0: every interface)"},
    {{"--port"}, "N", "port (default 8080; 0: any free port, printed when ready)"},
    {{"-np", "--parallel"}, "N", "slots decoded together in one batch (default 1); each gets -c / N positions"},
    {{"--api-key"}, "KEY", "require 'Authorization: Bearer KEY' on every route but /health"},
    {{"--api-key-file"}, "FILE", "read the API key from the first line of FILE"},
    {{"--timeout", "-to"}, "S", "socket read/write timeout in seconds (default 600)"},
    {{"--cors"}, "ORIGIN", "send CORS headers to this origin (repeatable; * for any; default: none)", true},
    {{"--queue"}, "N", "requests that may wait for a free slot (default 64); beyond: 503 with Retry-After"},
    {{"--max-body"}, "BYTES", "largest request body (default 8388608); larger ones get 413"},
    {{"--context-shift"}, nullptr, "a slot whose context fills keeps --keep tokens, drops half of the rest and goes "
                                   "on (default off, as llama-server; then the reply ends with finish_reason length)"},
    {{"--no-context-shift"}, nullptr, "a slot whose context fills ends its reply (finish_reason length; the default)"},
    {{"--keep"}, "N", "prompt tokens a context shift keeps after BOS, for requests without n_keep (default 0, -1: all)"},
    {{"--embeddings", "--embedding"}, nullptr, "serve /v1/embeddings: the model is loaded as an embedder "
                                               "(the completion routes then answer 501, as llama-server)"},
    {{"--rerank", "--reranking"}, nullptr, "serve /v1/rerank: the model is loaded as a reranker (rank pooling)"},
    {{"--pooling"}, "TYPE", "with --embeddings: mean, cls, last, none or rank (default: the model's pooling_type)"},
};

const OptionDef kEmbedModelOptions[] = {
    {{"-m", "--model"}, "FILE", "GGUF model to load (an embedding model, or a generative one with --pooling)"},
    {{"-c", "--ctx-size"}, "N", "positions per forward pass: the longest input, and how many tokens are packed "
                                "together (0: the model's, at most 8192)"},
    {{"-t", "--threads"}, "N", "threads (default: the number of physical cores)"},
    {{"--isa"}, "NAME", "kernel table to use: scalar, avx2, avx512, ... (default: the best this CPU runs)"},
    {{"--truncate"}, nullptr, "cut inputs longer than the context instead of refusing them"},
};

const OptionDef kEmbedOptions[] = {
    {{"--pooling"}, "TYPE", "none, mean, cls, last or rank (default: the model's pooling_type)"},
    {{"--embd-normalize"}, "N", "normalisation: -1 none, 0 max-abs int16, 1 taxicab, 2 euclidean (default), "
                                ">2 p-norm"},
    {{"--embd-separator"}, "TEXT", "separator of the inputs in the prompt (default: a newline)"},
    {{"--cls-separator"}, "TEXT", "with --pooling rank: an input 'QUERY<TEXT>DOCUMENT' is scored as that pair "
                                  "(default: a tab)"},
    {{"--embd-output-format"}, "FORMAT", "array ([[...],...]), json (OpenAI's list), json+ (json and the cosine "
                                         "similarity matrix) or raw (one vector a line); default: a summary"},
};

const OptionDef kRerankOptions[] = {
    {{"--query"}, "TEXT", "the query the documents are scored against"},
    {{"-f", "--file"}, "FILE", "the documents, one per line"},
};

const OptionGroup kModel{"model", kModelOptions};
const OptionGroup kEmbedModel{"model", kEmbedModelOptions};
const OptionGroup kEmbed{"embeddings", kEmbedOptions};
const OptionGroup kRerank{"rerank", kRerankOptions};
const OptionGroup kPrompt{"prompt", kPromptOptions};
const OptionGroup kGeneration{"generation", kGenerationOptions};
const OptionGroup kRunSampling{"sampling", sampler_options(true)};
const OptionGroup kChatSampling{"sampling", sampler_options(false)};
const OptionGroup kRun{"output", kRunOptions};
const OptionGroup kChat{"chat", kChatOptions};
const OptionGroup kChatTemplate{"chat template", kChatTemplateOptions};
const OptionGroup kTools{"tool calls", kToolOptions};
const OptionGroup kLogits{"logits", kLogitsOptions};
const OptionGroup kInspect{"inspect", kInspectOptions};
const OptionGroup kFormats{"formats", kFormatsOptions};
const OptionGroup kArchs{"archs", kArchsOptions};
const OptionGroup kTokenize{"tokenize", kTokenizeOptions};
const OptionGroup kTemplate{"template", kTemplateOptions};
const OptionGroup kQuantize{"quantize", kQuantizeOptions};
const OptionGroup kBench{"bench", kBenchOptions};
const OptionGroup kPerplexity{"perplexity", kPerplexityOptions};
const OptionGroup kSynth{"synth", kSynthOptions};
const OptionGroup kGgufSplit{"gguf-split", kGgufSplitOptions};
const OptionGroup kImatrix{"imatrix", kImatrixOptions};
const OptionGroup kServe{"server", kServeOptions};

const CommandDef kCommands[] = {
    {"run", "-m MODEL [-p PROMPT | -f FILE] [options]", "generate text (streamed to stdout)",
     {&kModel, &kPrompt, &kGeneration, &kRunSampling, &kRun, &kChatTemplate, &kTools}, cmd_run},
    {"chat", "-m MODEL [options]", "interactive chat with the model's template (/help inside)",
     {&kModel, &kGeneration, &kChatSampling, &kChat, &kChatTemplate, &kTools}, cmd_chat},
    {"logits", "-m MODEL [-p PROMPT] [--top K]", "top-K `id logit` after the prompt",
     {&kModel, &kPrompt, &kLogits}, cmd_logits},
    {"inspect", "MODEL.gguf", "metadata and tensor table", {&kInspect}, cmd_inspect},
    {"tokenize", "-m MODEL (-p TEXT | -f FILE | --stdin) [options]", "token ids and pieces of a text",
     {&kTokenize, &kPrompt}, cmd_tokenize},
    {"template", "(-m MODEL [--chat-template NAME|FILE] | --chat-template NAME|FILE | --template FILE.jinja) "
                 "--messages FILE.json [options]",
     "render a chat template", {&kTemplate, &kChatTemplate}, cmd_template},
    {"quantize", "[options] IN.gguf [OUT.gguf] TYPE [THREADS]",
     "convert a model's weights to TYPE (a preset name or llama.cpp's ftype number; without OUT.gguf the output is "
     "ggml-model-TYPE.gguf beside IN.gguf)", {&kQuantize},
     cmd_quantize},
    {"imatrix", "-m MODEL -f TEXT [-o imatrix.gguf] [-c 512] [--chunks N] [options]",
     "importance matrix of a model over a text, as llama-imatrix computes it", {&kModel, &kImatrix}, cmd_imatrix},
    {"bench", "-m MODEL [options]", "prompt/generation t/s in llama-bench's shape", {&kBench}, cmd_bench},
    {"perplexity", "-m MODEL -f FILE [-c 512] [--chunks N] [options]",
     "perplexity of a text, as llama-perplexity computes it (here -c defaults to 512)",
     {&kModel, &kPerplexity}, cmd_perplexity},
    {"formats", "[--coverage]", "the weight formats: sizes, quantizers, and which ISAs accelerate each",
     {&kFormats}, cmd_formats},
    {"archs", "[--names]", "the model architectures this engine runs, with what each switches on", {&kArchs}, cmd_archs},
    {"synth", "--shape NAME --type TYPE -o OUT.gguf [options]", "write a random-weight model of a known shape",
     {&kSynth}, cmd_synth},
    {"gguf-split", "[--split-max-tensors N] IN.gguf OUT_PREFIX",
     "split a model into OUT_PREFIX-00001-of-0000N.gguf .., as llama-gguf-split --split-max-tensors writes them "
     "(load or quantize it by its first shard)", {&kGgufSplit}, cmd_gguf_split},
    {"embed", "-m MODEL (-p TEXT | -f FILE) [--pooling TYPE] [--embd-normalize N] [--embd-output-format F]",
     "embeddings of each line of the input, as llama-embedding prints them", {&kEmbedModel, &kPrompt, &kEmbed},
     cmd_embed},
    {"rerank", "-m MODEL --query TEXT -f DOCS", "relevance score of each document line to the query (a reranker model)",
     {&kEmbedModel, &kRerank}, cmd_rerank},
    {"serve", "-m MODEL [--host H] [--port N] [-np N] [-c CTX] [options]",
     "OpenAI-compatible HTTP server, N slots batched together (native only)", {&kModel, &kServe, &kChatTemplate},
     cmd_serve},
};

std::string names_text(const OptionDef& o) {
  std::string out;
  for (std::string_view n : o.names) out += (out.empty() ? "" : ", ") + std::string(n);
  if (o.value != nullptr) out += std::string(" ") + o.value;
  return out;
}

}  // namespace

std::span<const CommandDef> all_commands() { return kCommands; }

const CommandDef* find_command(std::string_view name) {
  for (const CommandDef& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string usage_text() {
  std::string out = "usage: oxidize COMMAND [options]   (oxidize COMMAND --help for its options)\n\ncommands:\n";
  for (const CommandDef& c : kCommands) out += strfmt("  %-10s %s\n", c.name, c.summary);
  out += "\n  --version   print the version\n";
  return out;
}

std::string command_help(const CommandDef& c) {
  std::string out = strfmt("usage: oxidize %s %s\n%s\n", c.name, c.synopsis, c.summary);
  for (const OptionGroup* g : c.groups) {
    out += strfmt("\n%s options:\n", g->title);
    for (const OptionDef& o : g->options) out += strfmt("  %-34s %s\n", names_text(o).c_str(), o.help);
  }
  out += "\n  -h, --help                         this text\n";
  return out;
}

const char* version_text() { return "oxidize " OXIDIZE_VERSION " (" OXIDIZE_GIT_COMMIT ")"; }

}  // namespace ox::cli
