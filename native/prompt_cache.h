// `run --prompt-cache FILE` (llama.cpp's flag): a saved session state (core/session/state_file.h)
// that lets a later run with the same prompt prefix skip evaluating it. If FILE exists it is loaded
// and the prompt reuses its matching prefix; the state after the prompt is written back unless the
// prompt matched entirely or --prompt-cache-ro; --prompt-cache-all also saves the generated tokens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/session/session.h"
#include "native/args.h"

namespace ox::cli {

class PromptCache {
 public:
  // --prompt-cache FILE, --prompt-cache-ro, --prompt-cache-all; inactive without --prompt-cache.
  static Result<PromptCache> from_args(Args& args);

  // Before generating: loads FILE into the session when it exists and is not empty (an error names
  // FILE and the problem: another model, other cache types, a damaged file), says on stderr how much
  // of `prompt` it matches, and decides whether to save.
  Status load(Session& session, std::span<const int32_t> prompt);
  // Call with every generated token: saves once, while the session holds exactly the prompt (the
  // first sampled token is not evaluated until the next step).
  Status after_token(const Session& session);
  // After generating: the reuse line on stderr; saves what after_token could not (no token came
  // out), and everything the session holds with --prompt-cache-all.
  Status finish(const Session& session, const GenerateStats& stats);

 private:
  Status save(const Session& session);

  std::string path_;
  bool read_only_ = false;
  bool save_all_ = false;
  bool save_prompt_ = false;  // still to be saved once the session holds the prompt
  std::vector<int32_t> prompt_;
};

}  // namespace ox::cli
