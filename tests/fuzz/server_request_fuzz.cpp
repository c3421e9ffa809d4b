// libFuzzer target: the body of an HTTP request to /v1/chat/completions or /v1/completions (the first
// byte picks the endpoint). parse_completion_request must accept it or return a 4xx error naming the
// problem, never crash; what it accepts must turn into sampler settings, and a JSON schema it
// accepted into a grammar or a clear error (the route does the same before queueing a job).
#include <string>
#include <string_view>

#include "core/sampler/json_schema.h"
#include "native/server/params.h"
#include "native/server/sampling_params.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  using namespace ox::server;
  if (size == 0) return 0;
  const Endpoint endpoint = (data[0] & 1) != 0 ? Endpoint::kCompletion : Endpoint::kChat;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  CompletionRequest request;
  ApiError error;
  if (!parse_completion_request(body, endpoint, &request, &error)) {
    OX_CHECK(!error.message.empty());
    OX_CHECK(error.status >= 400 && error.status < 500);
    (void)json_text(error_json(error));  // the error object is always printable
    return 0;
  }
  OX_CHECK(request.endpoint == endpoint);
  (void)to_sampler_params(request);
  if (request.constraint.kind == OutputConstraint::Kind::kJsonSchema) {
    Result<std::string> gbnf = json_schema_to_gbnf(request.constraint.text.empty() ? "{}" : request.constraint.text);
    if (!gbnf.ok()) OX_CHECK(!gbnf.status().message().empty());
  }
  if (request.tools.active()) OX_CHECK(check_tools(request.tools.tools).is_ok());
  return 0;
}
