// The CLI's subcommands. Each parses its own flags and returns a Status; main() prints errors.
#pragma once

#include <memory>

#include "core/session/session.h"
#include "core/session/tool_chat.h"
#include "native/args.h"

namespace ox::cli {

Status cmd_run(Args& args);
Status cmd_logits(Args& args);
Status cmd_inspect(Args& args);
Status cmd_tokenize(Args& args);
// `tokenize --bench R` (cmd_tokenize hands over when --bench is given).
Status cmd_tokenize_bench(Args& args);
Status cmd_template(Args& args);
Status cmd_quantize(Args& args);
Status cmd_synth(Args& args);
Status cmd_gguf_split(Args& args);
Status cmd_bench(Args& args);
Status cmd_chat(Args& args);
Status cmd_perplexity(Args& args);
Status cmd_formats(Args& args);
Status cmd_archs(Args& args);
Status cmd_imatrix(Args& args);
Status cmd_serve(Args& args);
Status cmd_embed(Args& args);   // cmd_embed.cpp
Status cmd_rerank(Args& args);

// Shared by run/logits/chat/perplexity: -m, -c, -t, -b, --isa, -ctk, -ctv.
struct LoadedSession {
  std::shared_ptr<const LoadedModel> model;
  std::unique_ptr<Session> session;
};
struct OpenSessionOptions {
  int default_n_ctx = 0;             // -c when absent (0: the model's, capped as SessionOptions says)
  bool ctx_within_training = false;  // -c above the model's training context is an error
  bool chat_template = false;        // the command takes --chat-template (run, chat)
};
Result<LoadedSession> open_session(Args& args, const OpenSessionOptions& open = {});
// --chat-template NAME|FILE as LoadedModel::with_chat_template takes it: a built-in name as it is,
// else the Jinja text of the file; neither is an error listing the built-in names. Empty if absent.
Result<std::string> chat_template_arg(Args& args);
// -ctk / -ctv (default f16 each).
Status cache_types(Args& args, DType* type_k, DType* type_v);
// Prompt text from -p (escapes processed unless --no-escape), -f or --stdin (empty if none).
Result<std::string> prompt_text(Args& args);
// -n and the sampling, stop and EOS options (run and chat); --grammar / --grammar-file /
// -j / -jf compiled against the model's vocabulary.
Result<GenerateOptions> generate_options(Args& args, const LoadedModel& model, int64_t default_n_predict);
// --tools-file, --tool-choice, --no-parallel-tool-calls (run and chat); inactive without --tools-file.
Result<ToolOptions> tool_options(Args& args);
// A tool turn's constraint into `gen` (an error next to --grammar / --json-schema), and the
// control tokens' texts rendered so the reply's markers can be parsed.
Status use_tool_constraint(ToolChatTurn& turn, GenerateOptions* gen);


}  // namespace ox::cli
