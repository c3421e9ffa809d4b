// The engine's public C++ API, shared by the native CLI and the wasm bindings.
//   LoadedModel: weights + tokenizer + chat template of one GGUF (immutable, shareable).
//   Session:     a context (KV cache) over a model: low-level eval/logits/KV access and
//                high-level generate() with sampling, stop strings and streaming text.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/gguf/gguf.h"
#include "core/model/model.h"
#include "core/sampler/sampler.h"
#include "core/sampler/token_trie.h"
#include "core/session/chat_template.h"
#include "core/session/generation.h"
#include "core/session/lazy_grammar.h"
#include "core/tokenizer/tokenizer.h"

namespace ox {

class LoadedModel {
 public:
  // Opens (maps) a GGUF file: validates it, the architecture, every tensor and the tokenizer.
  // Where the bytes are read into memory (wasm), weights are converted to the layouts the best
  // kernel table asks for (KernelTable::relayout).
  static Result<std::shared_ptr<const LoadedModel>> open(const std::string& path);
  // Same from bytes held by the caller (wasm: the buffer JS filled); `owner` keeps them alive.
  // `writable`: the caller gives the bytes over to be rewritten (the relayouts above).
  static Result<std::shared_ptr<const LoadedModel>> from_bytes(std::span<const uint8_t> bytes, std::string name,
                                                                std::shared_ptr<const void> owner,
                                                                bool writable = false);

  const gguf::GgufFile& file() const { return *file_; }
  const Model& model() const { return *model_; }
  const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  const HParams& hparams() const { return model_->hparams(); }

  // The chat template render_chat uses: the file's, a guessed built-in, or an override.
  const ChatTemplateInfo& chat_template() const { return chat_template_; }
  // The same model (weights, tokenizer shared) rendering chats with `name_or_source` instead: a
  // built-in name (chat::builtin_templates) or Jinja source (see override_chat_template).
  Result<std::shared_ptr<const LoadedModel>> with_chat_template(std::string_view name_or_source) const;

  // Renders chat messages (JSON array of {role, content}) with chat_template(). A built-in one
  // is preceded by the BOS text when the vocabulary adds BOS (as llama.cpp's tokenizer would).
  Result<std::string> apply_chat_template(std::string_view messages_json, bool add_generation_prompt) const;
  // `extra`: more template variables (tools, ...: chat::tool_template_context), an object or null.
  Result<std::string> render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                  const nlohmann::ordered_json& extra = {}) const;
  // The prompt tokens of a conversation: the messages rendered as above and tokenized so that only
  // the template's own markup becomes control tokens; control-token texts a message holds
  // ("<|im_end|>" typed by a user) stay text. Message strings may hold any bytes (invalid UTF-8 is
  // tokenized as the tokenizer does it). No BOS is added: templates write their own.
  Result<std::vector<int32_t>> chat_prompt_from_json(std::string_view messages_json, bool add_generation_prompt) const;
  Result<std::vector<int32_t>> chat_prompt(nlohmann::ordered_json messages, bool add_generation_prompt,
                                           nlohmann::ordered_json extra = {}) const;

  // Structured output (grammar.cpp): a sampler constraint from a GBNF grammar (--grammar), a JSON
  // schema (--json-schema; an empty text: any JSON object), over this vocabulary's token
  // trie, built on first use and shared by every constraint of the model.
  Result<std::shared_ptr<TokenConstraint>> grammar_constraint(std::string_view gbnf) const;
  Result<std::shared_ptr<TokenConstraint>> json_schema_constraint(std::string_view schema_json) const;
  // A lazy grammar (tool_choice auto): free until one of `triggers` appears in the reply.
  Result<std::shared_ptr<TokenConstraint>> lazy_grammar_constraint(std::string_view gbnf,
                                                                   std::vector<GrammarTrigger> triggers) const;
  std::shared_ptr<const TokenTrie> token_trie() const;

 private:
  static Result<std::shared_ptr<const LoadedModel>> build(std::shared_ptr<const gguf::GgufFile> file);
  std::shared_ptr<const gguf::GgufFile> file_;
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  ChatTemplateInfo chat_template_;
  mutable std::once_flag trie_once_;
  mutable std::shared_ptr<const TokenTrie> trie_;
};

struct SessionOptions {
  int n_ctx = 0;      // 0: the model's training context, capped at kDefaultMaxContext
  int n_threads = 1;  // threads of this session's pool, the caller's thread included
  int n_batch = 512;  // prompt tokens evaluated per forward pass
  // Element formats of the KV cache (kv_cache.h's kKvCacheTypes); f16 as llama.cpp's default.
  DType cache_type_k = DType::F16;
  DType cache_type_v = DType::F16;
  // Sliding-window layers keep n_ctx positions like the others (llama.cpp's --swa-full) instead of
  // their window only: more memory, but any cut back can continue without evaluating again.
  bool swa_full = false;
  static constexpr int kDefaultMaxContext = 4096;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const LoadedModel> model,
                                                 const SessionOptions& options);

  const LoadedModel& model() const { return *model_; }
  int n_ctx() const { return n_ctx_; }
  int n_threads() const { return pool_.n_threads(); }
  int n_batch() const { return n_batch_; }
  int n_past() const { return static_cast<int>(tokens_.size()); }
  // The KV cache: its element types and the bytes it holds for n_ctx positions.
  DType cache_type_k() const { return state_->kv.type_k(); }
  DType cache_type_v() const { return state_->kv.type_v(); }
  uint64_t kv_bytes() const { return state_->kv.bytes(); }
  const std::vector<int32_t>& tokens() const { return tokens_; }  // what the KV cache holds

  Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const;

  // Appends tokens to the context (prompt processing in batches of n_batch). Errors if an id is
  // out of range or the context would overflow; the session is unchanged then.
  Status eval(std::span<const int32_t> tokens);
  // Same, and the logits of every evaluated position: all_logits receives [tokens.size()][n_vocab]
  // (perplexity, scoring). logits() then holds the last row.
  Status eval(std::span<const int32_t> tokens, float* all_logits);
  // Logits of the next-token distribution after the last eval ([n_vocab]); empty before any eval.
  std::span<const float> logits() const;
  // Drops every position >= n_keep from the KV cache (n_keep <= n_past). Where the cache's
  // sliding-window layers no longer hold what continuing at n_keep sees (can_resume), the next
  // eval first evaluates the kept tokens again.
  Status truncate(int n_keep);
  // Whether the cache can continue after its first n positions as they are (n <= n_past): false
  // where sliding-window layers have moved past the window position n needs (llama.cpp then
  // evaluates the prompt again too). Callers reusing a prefix ask, to count what is reused.
  bool can_resume(int n) const { return state_->kv.can_resume(0, n); }
  // Whether sliding-window layers keep only their window (so a cut back may need can_resume).
  bool window_only_cache() const { return state_->kv.has_sliding() && !state_->kv.shape().swa_full; }
  // Context shift: drops positions [n_keep, n_keep + n_discard) and moves the rest down, re-rotating
  // their keys (Model::shift); tokens() follows. The logits stay those of the last token.
  Status shift(int n_keep, int n_discard);
  void reset() { (void)truncate(0); }
  // Shows every later forward pass's matmul inputs to `observer` (null: none, the default); the
  // observer must outlive its use. For importance matrices (core/tools/imatrix.h).
  void set_matmul_observer(MatmulObserver* observer) { state_->ops.observer = observer; }

  // Saved state (the format: state_file.h): the tokens, the logits of the last position and the KV
  // cache of positions [0, n_past), for another Session of the same model and cache types.
  // load_state checks everything (model, version, cache types, n_ctx, lengths, token ids) before
  // changing anything; on error the session is unchanged. A loaded state continues exactly as if
  // its tokens had been evaluated here.
  Result<std::vector<uint8_t>> save_state() const;
  Status load_state(std::span<const uint8_t> bytes);

  // Reuses the longest cached prefix of `prompt`, evaluates the rest, then samples up to
  // max_tokens, calling on_event for each token (return false to stop). A Generation (see
  // generation.h) runs the same loop step by step.
  Result<GenerateStats> generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                 FunctionRef<bool(const GenerateEvent&)> on_event);

 private:
  Session(std::shared_ptr<const LoadedModel> model, int n_threads);
  std::shared_ptr<const LoadedModel> model_;
  ThreadPool pool_;
  std::unique_ptr<ForwardState> state_;
  int n_ctx_ = 0;
  int n_batch_ = 512;
  std::vector<int32_t> tokens_;
  std::vector<float> logits_;
  bool logits_valid_ = false;
};

}  // namespace ox
