// libFuzzer target: the input is the chat-messages JSON a caller hands to
// chat::apply_chat_template (an array of messages, or an object {"messages": [...], "tools": ...,
// other template variables}). It is rendered with real chat templates from ../shared/templates
// (tool calls, reasoning, role checks, content parts): whatever the JSON's shape, the result must be
// text or an error (raise_exception, a type error), never a crash.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/chat/template.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

constexpr const char* kTemplates[] = {"Qwen-Qwen3-0.6B.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
                                      "google-gemma-2-2b-it.jinja"};

const std::vector<std::string>& templates() {
  static const std::vector<std::string> loaded = [] {
    std::vector<std::string> out;
    for (const char* name : kTemplates) {
      out.push_back(fuzz::read_file_or_die(test::shared_path(std::string("templates/") + name)));
    }
    return out;
  }();
  return loaded;
}

chat::RenderOptions limits() {
  chat::RenderOptions o;
  o.now = chat::DateTime{};
  o.max_output_bytes = 1 << 18;
  o.max_steps = 50'000;
  o.max_evals = 500'000;
  o.max_string_work = 1 << 24;
  o.max_list_items = 1 << 14;
  return o;
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ox::templates();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  static const chat::RenderOptions options = limits();
  nlohmann::ordered_json input =
      nlohmann::ordered_json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size,
                                    nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return 0;
  nlohmann::ordered_json messages = input, extra = nlohmann::ordered_json::object();
  if (input.is_object() && input.contains("messages")) {
    messages = input["messages"];
    extra = input;
    extra.erase("messages");
  }
  for (const std::string& source : templates()) {
    Result<std::string> text =
        chat::apply_chat_template_ordered(source, messages, /*add_generation_prompt=*/true, "<s>", "</s>", extra, options);
    if (text.ok()) OX_CHECK(text->size() <= options.max_output_bytes);
  }
  return 0;
}
