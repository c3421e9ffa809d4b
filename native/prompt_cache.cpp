// --prompt-cache: load a saved state before the prompt, save it after (llama.cpp's tools/completion
// semantics; what is printed follows its messages).
#include "native/prompt_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ox::cli {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Writes FILE.tmp, then renames it over FILE: an interrupted run never leaves half a state behind.
Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot write '%s': %s", tmp.c_str(), std::strerror(errno)));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    return error(ErrorCode::kIo, strfmt("error writing '%s': %s", tmp.c_str(), std::strerror(written ? errno : err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp.c_str());
    return error(ErrorCode::kIo, strfmt("cannot replace '%s': %s", path.c_str(), std::strerror(rename_err)));
  }
  return Status::ok();
}

}  // namespace

Result<PromptCache> PromptCache::from_args(Args& args) {
  PromptCache cache;
  OX_ASSIGN_OR_RETURN(cache.path_, args.string({"--prompt-cache"}, ""));
  cache.read_only_ = args.flag({"--prompt-cache-ro"});
  cache.save_all_ = args.flag({"--prompt-cache-all"});
  if (cache.path_.empty() && (cache.read_only_ || cache.save_all_)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s needs --prompt-cache FILE", cache.read_only_ ? "--prompt-cache-ro" : "--prompt-cache-all"));
  }
  return cache;
}

Status PromptCache::load(Session& session, std::span<const int32_t> prompt) {
  if (path_.empty()) return Status::ok();
  prompt_.assign(prompt.begin(), prompt.end());
  const char* name = path_.c_str();
  size_t n_match = 0;
  struct stat st;
  if (::stat(name, &st) != 0 && errno == ENOENT) {
    std::fprintf(stderr, "prompt cache: %s does not exist%s\n", name, read_only_ ? "" : "; it will be created");
  } else {
    OX_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path_));
    if (bytes.empty()) {
      std::fprintf(stderr, "prompt cache: %s is empty; a new state will be saved\n", name);
    } else {
      const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
      OX_TRY(session.load_state(std::span<const uint8_t>(data, bytes.size())).with_context("--prompt-cache " + path_));
      n_match = common_prefix(session.tokens(), prompt);
      std::fprintf(stderr, "prompt cache: loaded %d tokens from %s; they match %zu of the prompt's %zu tokens\n",
                   session.n_past(), name, n_match, prompt.size());
    }
  }
  save_prompt_ = !read_only_ && n_match < prompt.size();
  return Status::ok();
}

Status PromptCache::after_token(const Session& session) {
  if (!save_prompt_ || session.tokens() != prompt_) return Status::ok();
  save_prompt_ = false;
  return save(session);
}

Status PromptCache::finish(const Session& session, const GenerateStats& stats) {
  if (path_.empty()) return Status::ok();
  std::fprintf(stderr, "prompt cache: reused %d of %d prompt tokens\n", stats.n_prompt_cached,
               stats.n_prompt_cached + stats.n_prompt);
  OX_TRY(after_token(session));  // no token came out (end of generation at once, -n 0)
  if (save_all_ && !read_only_) return save(session);
  return Status::ok();
}

Status PromptCache::save(const Session& session) {
  OX_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, session.save_state());
  OX_TRY(write_file_atomically(path_, bytes).with_context("--prompt-cache"));
  std::fprintf(stderr, "prompt cache: saved %d tokens to %s\n", session.n_past(), path_.c_str());
  return Status::ok();
}

}  // namespace ox::cli
