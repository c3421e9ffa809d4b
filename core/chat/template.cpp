// Public entry points: parse a template once, render it with a JSON context the way
// transformers' apply_chat_template builds it.
#include "core/chat/template.h"

#include "core/chat/builtins.h"
#include "core/chat/interp.h"
#include "core/chat/json_io.h"
#include "core/chat/parser.h"

namespace ox::chat {

namespace {

template <typename Json>
Result<std::string> render_impl(const StmtList& body, const Json& context, const RenderOptions& options) {
  if (!context.is_object() && !context.is_null()) {
    return error(ErrorCode::kInvalidArgument, "template context must be a JSON object");
  }
  auto globals = std::make_shared<Scope>();
  add_globals(globals.get());
  auto root = std::make_shared<Scope>();
  root->parent = globals;
  if (context.is_object()) {
    for (auto it = context.begin(); it != context.end(); ++it) {
      Result<Value> v = value_from_json(it.value());
      if (!v.ok()) return v.status().with_context("context key '" + it.key() + "'");
      root->set(it.key(), std::move(*v));
    }
  }
  std::string out;
  {
    Interp interp(options);
    OX_TRY(interp.run(body, root, &out));
  }
  return out;
}

template <typename Json>
Result<std::string> apply_impl(std::string_view source, const Json& messages, bool add_generation_prompt,
                               std::string_view bos, std::string_view eos, const Json& extra,
                               const RenderOptions& options) {
  if (!extra.is_object() && !extra.is_null()) {
    return error(ErrorCode::kInvalidArgument, "extra template variables must be a JSON object");
  }
  Json context = extra.is_object() ? extra : Json::object();
  context["messages"] = messages;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = std::string(bos);
  context["eos_token"] = std::string(eos);
  OX_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::parse(source));
  return t.render(context, options);
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  OX_ASSIGN_OR_RETURN(StmtList body, parse_template(source));
  ChatTemplate t;
  t.body_ = std::make_shared<const StmtList>(std::move(body));
  return t;
}

Result<std::string> ChatTemplate::render(const nlohmann::json& context, const RenderOptions& options) const {
  if (!body_) return error(ErrorCode::kInvalidArgument, "render() on an empty ChatTemplate");
  return render_impl(*body_, context, options);
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!body_) return error(ErrorCode::kInvalidArgument, "render() on an empty ChatTemplate");
  return render_impl(*body_, context, options);
}

Result<std::string> render_template(std::string_view source, const nlohmann::json& context,
                                    const RenderOptions& options) {
  OX_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::parse(source));
  return t.render(context, options);
}

Result<std::string> render_template_ordered(std::string_view source, const nlohmann::ordered_json& context,
                                            const RenderOptions& options) {
  OX_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::parse(source));
  return t.render(context, options);
}

Result<std::string> apply_chat_template(std::string_view source, const nlohmann::json& messages,
                                        bool add_generation_prompt, std::string_view bos, std::string_view eos,
                                        const nlohmann::json& extra, const RenderOptions& options) {
  return apply_impl(source, messages, add_generation_prompt, bos, eos, extra, options);
}

Result<std::string> apply_chat_template_ordered(std::string_view source, const nlohmann::ordered_json& messages,
                                                bool add_generation_prompt, std::string_view bos,
                                                std::string_view eos, const nlohmann::ordered_json& extra,
                                                const RenderOptions& options) {
  return apply_impl(source, messages, add_generation_prompt, bos, eos, extra, options);
}

}  // namespace ox::chat
