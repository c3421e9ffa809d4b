// The JS generate options ({max_tokens, temperature, ..., response_format}) as GenerateOptions:
// every key is either understood or refused by name, so no OpenAI / llama-server parameter is
// silently ignored; sampler fields come from the sampler registry (core/sampler/registry.h).
#pragma once

#include <emscripten/val.h>

#include <span>

#include "core/base/status.h"
#include "core/session/generation.h"
#include "core/session/session.h"

namespace ox::web {

Result<GenerateOptions> generate_options_from_js(const emscripten::val& options, const LoadedModel& model,
                                                 std::span<const int32_t> prompt);

}  // namespace ox::web
