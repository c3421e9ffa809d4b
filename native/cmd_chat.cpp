// `oxidize chat`: an interactive conversation on stdin/stdout. Each turn re-renders the whole
// conversation with the model's chat template; the session reuses the cached prefix, so only the
// new turn is evaluated.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "native/commands.h"

namespace ox::cli {

Status cmd_chat(Args& args) {
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args));
  OX_ASSIGN_OR_RETURN(std::string system, args.string({"--system", "-sys"}, ""));
  GenerateOptions gen;
  OX_ASSIGN_OR_RETURN(int64_t n_predict, args.integer({"-n", "--n-predict"}, 512, -1, 1 << 24));
  OX_ASSIGN_OR_RETURN(double temp, args.number({"--temp"}, 0.8));
  OX_ASSIGN_OR_RETURN(int64_t seed, args.integer({"-s", "--seed"}, 0xFFFFFFFFll, 0, INT64_MAX));
  OX_TRY(args.finish());
  gen.max_tokens = static_cast<int>(n_predict);
  gen.sampling.temperature = static_cast<float>(temp);
  gen.sampling.seed = static_cast<uint64_t>(seed);

  nlohmann::json messages = nlohmann::json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  std::string line;
  std::fprintf(stderr, "chat with %s (empty line or EOF ends)\n", ls.model->file().name().c_str());
  while (true) {
    std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line.empty()) break;
    messages.push_back({{"role", "user"}, {"content", line}});
    OX_ASSIGN_OR_RETURN(std::string prompt, ls.model->apply_chat_template(messages.dump(), true));
    OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ls.session->tokenize(prompt, false, true));
    auto on_event = [&](const GenerateEvent& e) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    OX_ASSIGN_OR_RETURN(GenerateStats stats, ls.session->generate(ids, gen, on_event));
    std::printf("\n");
    std::fprintf(stderr, "[%d tokens, %.1f t/s]\n", stats.n_generated,
                 stats.generate_ms > 0 ? stats.n_generated * 1000.0 / stats.generate_ms : 0.0);
    messages.push_back({{"role", "assistant"}, {"content", stats.text}});
  }
  return Status::ok();
}

}  // namespace ox::cli
