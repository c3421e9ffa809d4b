// `oxidize chat`: an interactive conversation on stdin/stdout, as llama.cpp's conversation mode.
// Each turn renders the whole conversation with the model's chat template (message text stays
// text: no control tokens from what the user types); the session reuses the cached prefix, so only
// the new turn is evaluated. Ctrl-C stops a reply (a second one, or one at the prompt, exits); a line
// ending in '\' continues on the next; /help lists the commands. When the conversation outgrows the
// context, the KV cache shifts (llama.cpp's context shift): the system message's tokens stay, the
// oldest half of the rest goes, and the new turn is evaluated on top of what is left. A model that
// cannot shift (learned positions) drops its oldest turns and evaluates the conversation again.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/tokenizer/unicode.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

std::atomic<int> g_interrupts{0};

void on_sigint(int) {
  // A second Ctrl-C before the first was handled: the user wants out now.
  if (g_interrupts.fetch_add(1) >= 1) std::_Exit(130);
}

void install_sigint() {
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a Ctrl-C at the prompt interrupts the read
  sigaction(SIGINT, &sa, nullptr);
}

enum class ReadResult { kLine, kEnd, kInterrupted };

// One input, joined over lines that end in '\' (the '\' becomes a newline).
ReadResult read_input(std::string* out) {
  out->clear();
  std::string line;
  for (;;) {
    line.clear();
    int c;
    while ((c = std::fgetc(stdin)) != EOF && c != '\n') line.push_back(static_cast<char>(c));
    if (c == EOF) {
      if (g_interrupts.load() > 0 || (std::ferror(stdin) && errno == EINTR)) return ReadResult::kInterrupted;
      if (line.empty() && out->empty()) return ReadResult::kEnd;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (c != EOF && !line.empty() && line.back() == '\\') {
      line.pop_back();
      *out += line + "\n";
      std::fprintf(stderr, ". ");
      continue;
    }
    *out += line;
    return ReadResult::kLine;
  }
}

// True if every string in `j` is valid UTF-8 (what JSON can hold without replacement).
bool all_valid_utf8(const nlohmann::ordered_json& j) {
  if (j.is_string()) return tok::is_valid_utf8(j.get_ref<const std::string&>());
  if (!j.is_array() && !j.is_object()) return true;  // (a primitive iterates as itself)
  for (const auto& item : j) {
    if (!all_valid_utf8(item)) return false;
  }
  return true;
}

constexpr const char* kChatHelp =
    "  /help         this list\n"
    "  /clear        forget the conversation (the system message stays)\n"
    "  /system TEXT  set the system message (and start over)\n"
    "  /save FILE    write the conversation as a JSON array of messages\n"
    "  /load FILE    read a conversation written by /save (or any OpenAI-style messages array)\n"
    "  /tool ID TEXT with --tools-file: answer the tool call ID with TEXT (the model replies to it)\n"
    "  /exit         quit (so do end of input and Ctrl-C at the prompt)\n"
    "  a line ending in \\ continues on the next; Ctrl-C stops a reply\n";

struct Chat {
  LoadedSession& ls;
  GenerateOptions gen;
  std::string system;
  nlohmann::ordered_json turns = nlohmann::ordered_json::array();  // user/assistant/tool messages
  ToolOptions tools;   // --tools-file: rendered in every turn, replies parsed for tool calls
  ToolChatTurn tool_turn;  // the last prompt's format and tool-call constraint

  // The prompt of a conversation (with the tools when there are some).
  Result<std::vector<int32_t>> prompt_of(nlohmann::ordered_json m) {
    if (!tools.active()) return ls.model->chat_prompt(std::move(m), true);
    OX_ASSIGN_OR_RETURN(tool_turn, prepare_tool_chat(*ls.model, m, tools));
    return std::move(tool_turn.prompt);
  }

  nlohmann::ordered_json messages(size_t first_turn) const {
    nlohmann::ordered_json m = nlohmann::ordered_json::array();
    if (!system.empty()) m.push_back({{"role", "system"}, {"content", system}});
    for (size_t i = first_turn; i < turns.size(); ++i) m.push_back(turns[i]);
    return m;
  }

  // Tokens of the conversation that context shifts (and prompt cuts) took out of the session, all
  // right after its first n_keep: held position i >= n_keep is the conversation's token i + dropped.
  int dropped = 0;

  void forget() {
    dropped = 0;
    ls.session->reset();
  }

  // Room to leave for a reply: a quarter of the context, or -n if smaller.
  int reserve() const {
    const int n_ctx = ls.session->n_ctx();
    return gen.max_tokens > 0 ? std::min(gen.max_tokens, n_ctx / 4) : n_ctx / 4;
  }

  // Tokens a shift keeps: the system message's (where the template renders it on its own), or BOS.
  Result<int> keep_count(const std::vector<int32_t>& full) const {
    const int bos = resolve_n_keep(0, full, ls.model->tokenizer().bos_id());
    if (system.empty()) return bos;
    nlohmann::ordered_json only_system = nlohmann::ordered_json::array();
    only_system.push_back({{"role", "system"}, {"content", system}});
    OX_ASSIGN_OR_RETURN(std::vector<int32_t> head, ls.model->chat_prompt(std::move(only_system), false));
    size_t common = 0;
    while (common < head.size() && common < full.size() && head[common] == full[common]) ++common;
    return std::max(bos, static_cast<int>(common));
  }

  // The prompt for a conversation rendered as `full`: the longest part of what the session holds
  // that `full` continues (held position i >= n_keep stands for full[i + dropped]), then the rest
  // of `full`, after shifting the cache to leave room for a reply. Where the held part and `full`
  // part ways (a template that rewrites past turns, a reply cut by a stop string), the session's
  // tail is dropped and evaluated again from `full`.
  Result<std::vector<int32_t>> next_prompt(const std::vector<int32_t>& full, int n_keep) {
    const std::vector<int32_t>& held = ls.session->tokens();
    size_t k = 0;  // held[0, k) matches
    while (k < held.size()) {
      const size_t at = k < static_cast<size_t>(n_keep) ? k : k + static_cast<size_t>(dropped);
      if (at >= full.size() || held[k] != full[at]) break;
      ++k;
    }
    if (k < static_cast<size_t>(n_keep)) {  // nothing to build on: start over from `full`
      dropped = 0;
      return full;
    }
    OX_TRY(ls.session->truncate(static_cast<int>(k)));
    const int n_ctx = ls.session->n_ctx();
    const size_t n_new = full.size() - (k + static_cast<size_t>(dropped));
    int shifted = 0;
    while (static_cast<int>(ls.session->tokens().size() + n_new) + reserve() > n_ctx) {
      const int n_discard = (ls.session->n_past() - n_keep) / 2;
      if (n_discard < 1) break;
      OX_TRY(ls.session->shift(n_keep, n_discard));
      dropped += n_discard;
      shifted += n_discard;
    }
    if (shifted > 0) std::fprintf(stderr, "[context full: shifted out %d tokens of the oldest turns]\n", shifted);
    std::vector<int32_t> prompt = ls.session->tokens();
    prompt.insert(prompt.end(), full.end() - static_cast<std::ptrdiff_t>(n_new), full.end());
    if (static_cast<int>(prompt.size()) >= n_ctx) {
      return error(ErrorCode::kOutOfRange, strfmt("the message is %zu tokens, more than the context (%d) holds after "
                                                  "the kept %d; not sent", n_new, n_ctx, n_keep));
    }
    return prompt;
  }

  // A model that cannot shift: the conversation's prompt, dropping the oldest turns until it leaves
  // room for a reply.
  Result<std::vector<int32_t>> fitted_prompt() {
    const int n_ctx = ls.session->n_ctx();
    for (size_t first = 0; first < turns.size(); ++first) {
      OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, prompt_of(messages(first)));
      if (static_cast<int>(ids.size()) + reserve() <= n_ctx || first + 1 == turns.size()) {
        if (static_cast<int>(ids.size()) >= n_ctx) {
          return error(ErrorCode::kOutOfRange, strfmt("the message is %zu tokens, more than the context (%d); "
                                                      "not sent", ids.size(), n_ctx));
        }
        if (first > 0) {
          std::fprintf(stderr, "[context full: dropped the %zu oldest messages]\n", first);
          turns.erase(turns.begin(), turns.begin() + static_cast<std::ptrdiff_t>(first));
        }
        return ids;
      }
    }
    return error(ErrorCode::kInternal, "empty conversation");
  }

  // Runs a slash command; false if `line` is not one.
  Result<bool> command(const std::string& line, bool* quit) {
    if (line.empty() || line[0] != '/') return false;
    const size_t space = line.find(' ');
    const std::string name = line.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : line.substr(space + 1);
    if (name == "/help") {
      std::fputs(kChatHelp, stderr);
    } else if (name == "/exit" || name == "/quit") {
      *quit = true;
    } else if (name == "/clear") {
      turns = nlohmann::ordered_json::array();
      forget();
      std::fprintf(stderr, "[conversation cleared]\n");
    } else if (name == "/system") {
      system = arg;
      turns = nlohmann::ordered_json::array();
      forget();
      std::fprintf(stderr, "[system message set; conversation cleared]\n");
    } else if (name == "/save") {
      if (arg.empty()) return error(ErrorCode::kInvalidArgument, "/save needs a file name");
      const nlohmann::ordered_json m = messages(0);
      const std::string text = m.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
      if (!all_valid_utf8(m)) {
        std::fprintf(stderr, "[warning: text that is not valid UTF-8 was saved as U+FFFD]\n");
      }
      FILE* f = std::fopen(arg.c_str(), "wb");
      if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot write '%s'", arg.c_str()));
      const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
      if (std::fclose(f) != 0 || !ok) return error(ErrorCode::kIo, strfmt("error writing '%s'", arg.c_str()));
      std::fprintf(stderr, "[saved %zu messages to %s]\n", m.size(), arg.c_str());
    } else if (name == "/load") {
      if (arg.empty()) return error(ErrorCode::kInvalidArgument, "/load needs a file name");
      OX_ASSIGN_OR_RETURN(std::string text, read_text_file(arg));
      nlohmann::ordered_json m = nlohmann::ordered_json::parse(text, nullptr, false);
      if (m.is_discarded() || !m.is_array()) {
        return error(ErrorCode::kInvalidFile, strfmt("'%s' is not a JSON array of messages", arg.c_str()));
      }
      nlohmann::ordered_json loaded = nlohmann::ordered_json::array();
      std::string loaded_system = system;
      for (size_t i = 0; i < m.size(); ++i) {
        const auto& msg = m[i];
        if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string() || !msg.contains("content")) {
          return error(ErrorCode::kInvalidFile, strfmt("'%s': message %zu has no role and content", arg.c_str(), i));
        }
        if (msg["role"] == "system" && msg["content"].is_string()) {
          loaded_system = msg["content"].get<std::string>();
        } else {
          loaded.push_back(msg);
        }
      }
      system = loaded_system;
      turns = std::move(loaded);
      forget();
      std::fprintf(stderr, "[loaded %zu messages from %s]\n", m.size(), arg.c_str());
    } else if (name == "/tool") {
      const size_t sp = arg.find(' ');
      if (!tools.active()) return error(ErrorCode::kInvalidArgument, "/tool needs --tools-file");
      if (arg.empty() || sp == std::string::npos) return error(ErrorCode::kInvalidArgument, "/tool needs an id and a text");
      OX_TRY(respond({{"role", "tool"}, {"tool_call_id", arg.substr(0, sp)}, {"content", arg.substr(sp + 1)}}));
    } else {
      return error(ErrorCode::kInvalidArgument, strfmt("unknown command '%s' (/help lists them)", name.c_str()));
    }
    return true;
  }

  Status turn(const std::string& text) { return respond({{"role", "user"}, {"content", text}}); }

  // Adds `message` (the user's, a tool result) and the model's reply to the conversation.
  Status respond(nlohmann::ordered_json message) {
    turns.push_back(std::move(message));
    const bool can_shift = gen.context_shift && ls.model->model().can_shift();
    std::vector<int32_t> full;
    Result<std::vector<int32_t>> ids = can_shift ? prompt_of(messages(0)) : fitted_prompt();
    if (ids.ok() && can_shift) {
      full = ids.value();
      Result<int> n_keep = keep_count(full);
      if (!n_keep.ok()) {
        ids = n_keep.status();
      } else {
        gen.n_keep = n_keep.value();
        ids = next_prompt(full, gen.n_keep);
      }
    }
    if (!ids.ok()) {
      turns.erase(turns.end() - 1);
      return ids.status();
    }
    GenerateOptions options = gen;
    if (tools.active()) OX_TRY(use_tool_constraint(tool_turn, &options));
    g_interrupts.store(0);
    auto on_event = [&](const GenerateEvent& e) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      return g_interrupts.load() == 0;
    };
    OX_ASSIGN_OR_RETURN(GenerateStats stats, ls.session->generate(ids.value(), options, on_event));
    std::printf("\n");
    std::fflush(stdout);
    const bool interrupted = g_interrupts.exchange(0) > 0;
    std::fprintf(stderr, "[prompt: %d new, %d cached, %.1f ms | %d tokens, %.1f t/s%s]\n", stats.n_prompt,
                 stats.n_prompt_cached, stats.prompt_ms, stats.n_generated,
                 stats.generate_ms > 0 ? stats.n_generated * 1000.0 / stats.generate_ms : 0.0,
                 interrupted ? ", stopped" : "");
    if (tools.active()) {
      // The reply parsed: its tool calls printed as one JSON line, and kept in the conversation.
      ToolReply reply(tool_turn.format, tools, tool_turn.thinking_forced_open, std::random_device{}());
      reply.append(stats.text);
      reply.finish();
      nlohmann::ordered_json m = reply.message().to_json();
      if (m.contains("tool_calls")) {
        const nlohmann::ordered_json calls = {{"tool_calls", m["tool_calls"]}};
        std::printf("%s\n", calls.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        std::fflush(stdout);
      }
      if (m["content"].is_null()) m["content"] = "";
      turns.push_back(std::move(m));
    } else {
      turns.push_back({{"role", "assistant"}, {"content", stats.text}});
    }
    if (can_shift) dropped += stats.n_shifted_out + stats.n_prompt_dropped;
    return Status::ok();
  }
};

}  // namespace

Status cmd_chat(Args& args) {
  OX_ASSIGN_OR_RETURN(LoadedSession ls, open_session(args, {.chat_template = true}));
  Chat chat{ls, {}, {}};
  OX_ASSIGN_OR_RETURN(chat.gen, generate_options(args, *ls.model, 512));
  OX_ASSIGN_OR_RETURN(chat.system, args.string({"--system", "-sys"}, ""));
  OX_ASSIGN_OR_RETURN(chat.tools, tool_options(args));
  OX_TRY(args.finish());
  install_sigint();
  std::fprintf(stderr,
               "chat with %s (chat template: %s): /help for commands, Ctrl-C stops a reply, end of input quits\n",
               ls.model->file().name().c_str(), describe_chat_template(ls.model->chat_template()).c_str());
  std::string line;
  for (bool quit = false; !quit;) {
    std::fprintf(stderr, "> ");
    const ReadResult r = read_input(&line);
    if (r != ReadResult::kLine) {
      std::fprintf(stderr, "\n");
      break;
    }
    if (line.empty()) continue;
    Result<bool> was_command = chat.command(line, &quit);
    Status status = was_command.ok() ? Status::ok() : was_command.status();
    if (status.is_ok() && !was_command.value()) status = chat.turn(line);
    // A failed turn (a message too long, a bad /load) is reported and the chat goes on.
    if (!status.is_ok()) std::fprintf(stderr, "error: %s\n", status.message().c_str());
  }
  return Status::ok();
}

}  // namespace ox::cli
