// Sampler fields from JSON request bodies (the server; llama-server's field names, the registry's
// ParamDef::key): one conversion, so the server and any other JSON front end accept the same values.
#pragma once

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/sampler/registry.h"

namespace ox {

// The registry row whose JSON key is `key`, or null (a CLI-only spelling is not a JSON key).
const ParamDef* find_json_param(std::string_view key);

// Sets the field of `def` from a JSON value: numbers for float/int/seed fields, a string or an array
// of names for `samplers`, OpenAI's {"token id": bias} or llama-server's [[id, bias]] for logit_bias
// (a bias of false bans the token), strings for dry_sequence_breakers. Errors name `key`; ranges are
// validate()'s.
[[nodiscard]] Status set_param_json(SamplerParams& params, const ParamDef& def, const nlohmann::ordered_json& value);

}  // namespace ox
