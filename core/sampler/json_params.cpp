// set_param_json: a JSON value turned into the CLI texts set_param() reads, so both front ends share
// one parser and one set of ranges.
#include "core/sampler/json_params.h"

#include <cmath>
#include <string>
#include <vector>

namespace ox {
namespace {

using Json = nlohmann::ordered_json;

Status type_error(const ParamDef& d, const char* what) {
  return error(ErrorCode::kInvalidArgument, strfmt("'%s' must be %s", d.key, what));
}

Result<std::vector<std::string>> strings(const ParamDef& d, const Json& v) {
  if (v.is_string()) return std::vector<std::string>{v.get<std::string>()};
  if (!v.is_array()) return type_error(d, "a string or an array of strings");
  std::vector<std::string> out;
  for (const Json& s : v) {
    if (!s.is_string()) return type_error(d, "a string or an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

Result<std::string> bias_text(const ParamDef& d, const std::string& id, const Json& bias) {
  if (bias.is_boolean() && !bias.get<bool>()) return id + "-inf";  // llama-server: false bans the token
  if (!bias.is_number() || !std::isfinite(bias.get<double>())) return type_error(d, "a map of token ids to finite numbers");
  return strfmt("%s%+.9g", id.c_str(), bias.get<double>());
}

Result<std::vector<std::string>> logit_bias(const ParamDef& d, const Json& v) {
  std::vector<std::string> out;
  if (v.is_object()) {
    for (const auto& [id, bias] : v.items()) {
      OX_ASSIGN_OR_RETURN(std::string t, bias_text(d, id, bias));
      out.push_back(std::move(t));
    }
    return out;
  }
  if (!v.is_array()) return type_error(d, "an object {token id: bias} or an array of [token id, bias] pairs");
  for (const Json& pair : v) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer()) {
      return type_error(d, "an object {token id: bias} or an array of [token id, bias] pairs");
    }
    OX_ASSIGN_OR_RETURN(std::string t, bias_text(d, std::to_string(pair[0].get<int64_t>()), pair[1]));
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<std::string>> texts(const ParamDef& d, const Json& v) {
  switch (d.type) {
    case ParamType::kFloat:
    case ParamType::kInt:
    case ParamType::kSeed:
      if (!v.is_number()) return type_error(d, "a number");
      return std::vector<std::string>{strfmt("%.17g", v.get<double>())};
    case ParamType::kStages: {
      OX_ASSIGN_OR_RETURN(std::vector<std::string> names, strings(d, v));
      std::string joined;
      for (const std::string& s : names) joined += (joined.empty() ? "" : ";") + s;
      return std::vector<std::string>{joined};
    }
    case ParamType::kStageChars:
      if (!v.is_string()) return type_error(d, "a string");
      return std::vector<std::string>{v.get<std::string>()};
    case ParamType::kLogitBias: return logit_bias(d, v);
    case ParamType::kBreakers: {
      OX_ASSIGN_OR_RETURN(std::vector<std::string> b, strings(d, v));
      if (b.empty()) b.push_back("none");
      return b;
    }
  }
  return type_error(d, "a value");
}

}  // namespace

const ParamDef* find_json_param(std::string_view key) {
  const ParamDef* d = find_param(key);
  return d != nullptr && key == d->key ? d : nullptr;
}

Status set_param_json(SamplerParams& params, const ParamDef& def, const Json& value) {
  OX_ASSIGN_OR_RETURN(std::vector<std::string> t, texts(def, value));
  return set_param(params, def, t);
}

}  // namespace ox
