// Chat templates: a Jinja interpreter for the subset Hugging Face chat templates use, rendering
// like transformers' apply_chat_template (sandboxed jinja2, trim_blocks, lstrip_blocks, loop
// controls, tojson without ASCII escaping, raise_exception, strftime_now), plus built-in
// templates for GGUF files that carry none.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/chat/builtin_templates.h"

namespace ox::chat {

struct Stmt;

// Wall-clock time as strftime_now() sees it (local time, no zone).
struct DateTime {
  int32_t year = 2026;
  int32_t month = 1;  // 1-12
  int32_t day = 15;   // 1-31
  int32_t hour = 12;
  int32_t minute = 0;
  int32_t second = 0;
};

// Bounds that make hostile templates finish with an error instead of hanging or exhausting
// memory. The defaults are far above what real chat templates need.
struct RenderOptions {
  std::optional<DateTime> now;                // strftime_now() time; nullopt: the system clock
  uint64_t max_output_bytes = 64ull << 20;    // the rendered text, and any single string value
  uint64_t max_steps = 2'000'000;             // loop iterations, plus 4 per macro call
  uint64_t max_evals = 10'000'000;            // expression evaluations
  uint64_t max_string_work = 2ull << 30;      // bytes of string values built during one render
  uint64_t max_list_items = 4'000'000;        // items of any single list
  uint32_t max_call_depth = 48;               // nested macro calls
  uint32_t max_stack_bytes = 512u << 10;      // C++ stack the interpreter may use (recursion)
};

// A parsed template; render it many times with different contexts.
class ChatTemplate {
 public:
  // Errors (kInvalidFile) read "line L, column C: expected ..., got ...".
  static Result<ChatTemplate> parse(std::string_view source);

  // The context's top-level keys become template variables. Runtime errors read "line L: ...";
  // raise_exception(msg) gives kInvalidArgument with msg in the message; limits give kTooLarge.
  Result<std::string> render(const nlohmann::json& context, const RenderOptions& options = {}) const;
  // ordered_json keeps object keys in document order (what Python dicts and tojson show).
  Result<std::string> render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;

  ChatTemplate() = default;

 private:
  std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
};

Result<std::string> render_template(std::string_view source, const nlohmann::json& context,
                                    const RenderOptions& options = {});
Result<std::string> render_template_ordered(std::string_view source, const nlohmann::ordered_json& context,
                                            const RenderOptions& options = {});

// Renders with the context transformers builds: messages, add_generation_prompt, bos_token,
// eos_token, plus every key of `extra` (an object: tools, documents, enable_thinking, ...).
Result<std::string> apply_chat_template(std::string_view source, const nlohmann::json& messages,
                                        bool add_generation_prompt, std::string_view bos, std::string_view eos,
                                        const nlohmann::json& extra = {}, const RenderOptions& options = {});
Result<std::string> apply_chat_template_ordered(std::string_view source, const nlohmann::ordered_json& messages,
                                                bool add_generation_prompt, std::string_view bos,
                                                std::string_view eos, const nlohmann::ordered_json& extra = {},
                                                const RenderOptions& options = {});

}  // namespace ox::chat
