// The server's request table: every field OpenAI defines that the server does not implement is
// refused by name, unknown fields too, types and ranges are checked; the API key comparison; the
// sampler mapping.
#include "native/server/params.h"

#include <gtest/gtest.h>

#include "core/base/status.h"
#include "native/server/auth.h"
#include "native/server/sampling_params.h"

namespace ox::server {
namespace {

std::string base_body(Endpoint e) {
  return e == Endpoint::kChat ? R"("messages": [{"role": "user", "content": "hi"}])" : R"("prompt": "hi")";
}

ApiError refuse(Endpoint e, const std::string& extra) {
  CompletionRequest r;
  ApiError err;
  std::string body = "{";
  body += base_body(e);
  body += ", ";
  body += extra;
  body += "}";
  EXPECT_FALSE(parse_completion_request(body, e, &r, &err)) << extra;
  EXPECT_EQ(err.status, 400);
  return err;
}

TEST(ServerParams, EveryUnimplementedFieldIsRefusedByName) {
  for (const FieldInfo& f : request_fields()) {
    if (f.implemented) continue;
    for (Endpoint e : {Endpoint::kChat, Endpoint::kCompletion}) {
      if ((f.endpoints & static_cast<unsigned>(e)) == 0) continue;
      const ApiError err = refuse(e, strfmt("\"%s\": 1", f.name));
      EXPECT_EQ(err.param, f.name);
      EXPECT_NE(err.message.find(f.name), std::string::npos) << err.message;
    }
  }
}

TEST(ServerParams, UnknownAndWrongEndpointFieldsAreRefused) {
  EXPECT_EQ(refuse(Endpoint::kChat, R"("temprature": 0.5)").code, "unknown_parameter");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("prompt": "x")").param, "prompt");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("messages": [])").param, "messages");
}

TEST(ServerParams, TypesAndRanges) {
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("max_tokens": -1)").param, "max_tokens");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("max_tokens": 0)").param, "max_tokens");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("max_tokens": true)").code, "invalid_type");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("max_tokens": 18446744073709551615)").param, "max_tokens");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("top_p": 1.5)").param, "top_p");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("seed": -2)").param, "seed");
  // n: 1 to kMaxChoices (the route then refuses more than the server's slots)
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("n": 0)").param, "n");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("n": 257)").param, "n");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("n": 2.5)").code, "invalid_type");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("n_keep": -2)").param, "n_keep");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("n_discard": -1)").param, "n_discard");
  // logprobs: a boolean on chat (with top_logprobs 0-20), a count on completions (OpenAI's two shapes)
  EXPECT_EQ(refuse(Endpoint::kChat, R"("logprobs": 3)").param, "logprobs");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("logprobs": true)").param, "logprobs");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("top_logprobs": 3)").param, "top_logprobs");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("logprobs": true, "top_logprobs": 21)").param, "top_logprobs");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("stream_options": {"include_usage": true})").param, "stream_options");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("stream": true, "stream_options": {"x": 1})").param, "stream_options.x");
}

TEST(ServerParams, MessagesAreChecked) {
  CompletionRequest r;
  ApiError err;
  EXPECT_FALSE(parse_completion_request(R"({"messages": [{"role": "user"}, {"content": "x"}]})", Endpoint::kChat, &r, &err));
  EXPECT_EQ(err.param, "messages[1].role");
  EXPECT_FALSE(parse_completion_request(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
                                        Endpoint::kChat, &r, &err));
  EXPECT_EQ(err.param, "messages[0].content[0].type");
  ASSERT_TRUE(parse_completion_request(
      R"({"messages": [{"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})",
      Endpoint::kChat, &r, &err)) << err.message;
  EXPECT_EQ(r.messages[0]["role"], "system");
  EXPECT_EQ(r.messages[0]["content"], "ab");
}

TEST(ServerParams, ToolsToolChoiceAndToolMessages) {
  CompletionRequest r;
  ApiError err;
  ASSERT_TRUE(parse_completion_request(R"({"messages": [{"role": "user", "content": "x"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "2"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "tool_choice": {"type": "function", "function": {"name": "f"}}, "parallel_tool_calls": false})",
                                       Endpoint::kChat, &r, &err)) << err.message;
  EXPECT_TRUE(r.tools.active());
  EXPECT_EQ(r.tools.choice.mode, chat::ToolChoice::Mode::kNamed);
  EXPECT_EQ(r.tools.choice.name, "f");
  EXPECT_FALSE(r.tools.parallel_tool_calls);
  EXPECT_EQ(r.messages[1]["content"], "");
  EXPECT_EQ(r.messages[1]["tool_calls"][0]["function"]["arguments"], "{\"a\": 1}");
  EXPECT_EQ(r.messages[2]["tool_call_id"], "c1");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("tool_choice": "required")").param, "tool_choice");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("tool_choice": "sometimes")").param, "tool_choice");
  EXPECT_EQ(refuse(Endpoint::kChat, R"("tools": [{"type": "function", "function": {}}])").param, "tools[0].function.name");
  EXPECT_EQ(refuse(Endpoint::kCompletion, R"("tools": [])").code, "unknown_parameter");  // chat only
}

TEST(ServerParams, NullIsAbsentAndValuesAreRead) {
  CompletionRequest r;
  ApiError err;
  ASSERT_TRUE(parse_completion_request(
      R"({"prompt": [1, 2, 3], "max_tokens": 7, "temperature": 0, "top_k": 5, "seed": 9, "stop": "x",
          "stream": true, "stream_options": {"include_usage": true}, "response_format": null, "n": 1, "logprobs": null})",
      Endpoint::kCompletion, &r, &err)) << err.message;
  EXPECT_TRUE(r.has_prompt_ids);
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_TRUE(r.stream && r.include_usage);
  EXPECT_EQ(r.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(r.n_choices, 1);
  EXPECT_FALSE(r.n_keep.has_value());  // absent: the server's --keep
  CompletionRequest r2;
  ASSERT_TRUE(parse_completion_request(R"({"prompt": "x", "n": 4, "n_keep": -1, "n_discard": 8})", Endpoint::kCompletion,
                                       &r2, &err)) << err.message;
  EXPECT_EQ(r2.n_choices, 4);
  EXPECT_EQ(r2.n_keep, -1);
  EXPECT_EQ(r2.n_discard, 8);
  const SamplerParams p = to_sampler_params(r);
  EXPECT_EQ(p.temperature, 0.0f);
  EXPECT_EQ(p.top_k, 5);
  EXPECT_EQ(p.seed, 9u);
  EXPECT_EQ(p.top_p, SamplerParams{}.top_p);  // left out: the default
}

TEST(ServerParams, BodiesThatAreNotObjects) {
  CompletionRequest r;
  ApiError err;
  for (const char* body : {"", "[1]", "{\"prompt\": \"x\",", "\"x\"", "{\"prompt\": \"\xff\"}", "{\"prompt\": \"\\ud800\"}"}) {
    EXPECT_FALSE(parse_completion_request(body, Endpoint::kCompletion, &r, &err)) << body;
    EXPECT_EQ(err.status, 400);
  }
}

TEST(ServerAuth, BearerMatchesOnlyTheKey) {
  EXPECT_TRUE(bearer_matches("Bearer secret", "secret"));
  EXPECT_FALSE(bearer_matches("Bearer secre", "secret"));
  EXPECT_FALSE(bearer_matches("Bearer secrets", "secret"));
  EXPECT_FALSE(bearer_matches("bearer secret", "secret"));
  EXPECT_FALSE(bearer_matches("secret", "secret"));
  EXPECT_FALSE(bearer_matches("", "secret"));
  EXPECT_FALSE(bearer_matches("Bearer ", ""));
}

TEST(ServerAuth, CorsOrigins) {
  EXPECT_EQ(allowed_origin({"http://a"}, "http://a"), "http://a");
  EXPECT_EQ(allowed_origin({"http://a"}, "http://b"), "");
  EXPECT_EQ(allowed_origin({}, "http://a"), "");
  EXPECT_EQ(allowed_origin({"*"}, "http://b"), "*");
}

}  // namespace
}  // namespace ox::server
