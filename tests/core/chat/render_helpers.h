// Helpers for the chat template tests: render a template with a JSON context given as text and
// get either the output or "ERROR: <message>".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/chat/template.h"

namespace ox::chat::test {

// The clock the expected renders used (transformers' strftime_now fixed at 2026-01-15 12:00).
inline RenderOptions fixed_clock() {
  RenderOptions o;
  o.now = DateTime{2026, 1, 15, 12, 0, 0};
  return o;
}

inline std::string render(const std::string& tmpl, const std::string& context_json = "{}",
                          const RenderOptions& options = fixed_clock()) {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(context_json, nullptr, false);
  if (ctx.is_discarded()) return "BAD TEST CONTEXT";
  Result<std::string> r = render_template_ordered(tmpl, ctx, options);
  if (!r.ok()) return "ERROR: " + r.status().message();
  return *r;
}

// A table row: template, context (JSON text), expected output (rendered by Python jinja2
// configured like transformers).
struct Case {
  const char* name;
  const char* tmpl;
  const char* context;
  const char* expected;
};

}  // namespace ox::chat::test
