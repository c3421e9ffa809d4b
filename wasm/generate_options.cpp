// generate_options_from_js: each key of the options object dispatched to the generation field, the
// sampler registry row or the structured-output constraint it names; anything else is an
// "unsupported" error naming the key.
#include "wasm/generate_options.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/sampler/json_params.h"
#include "wasm/js_input.h"

namespace ox::web {
namespace {

using emscripten::val;

constexpr int kMaxTopLogprobs = 20;  // OpenAI's limit

bool is_array(const val& v) { return val::global("Array").call<bool>("isArray", v); }
// (Emscripten 3.1.6's val has no isObject.)
bool is_object(const val& v) { return !v.isNull() && v.typeOf().as<std::string>() == "object"; }

Status type_error(const std::string& key, const char* what) {
  return error(ErrorCode::kInvalidArgument, strfmt("%s must be %s", key.c_str(), what));
}

Result<double> number(const val& v, const std::string& key) {
  if (!v.isNumber() || !std::isfinite(v.as<double>())) return type_error(key, "a finite number");
  return v.as<double>();
}

Result<int> integer(const val& v, const std::string& key, int lo, int hi) {
  OX_ASSIGN_OR_RETURN(double d, number(v, key));
  if (d != std::floor(d) || d < lo || d > hi) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: %.17g is not an integer in [%d, %d]", key.c_str(), d, lo, hi));
  }
  return static_cast<int>(d);
}

Result<bool> boolean(const val& v, const std::string& key) {
  if (!v.isTrue() && !v.isFalse()) return type_error(key, "a boolean");
  return v.isTrue();
}

Result<std::vector<std::string>> strings(const val& v, const std::string& key) {
  if (v.isString()) return std::vector<std::string>{v.as<std::string>()};
  if (!is_array(v)) return type_error(key, "a string or an array of strings");
  std::vector<std::string> out;
  const int n = v["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    if (!v[i].isString()) return type_error(key, "a string or an array of strings");
    out.push_back(v[i].as<std::string>());
  }
  return out;
}

// A sampler field from its JS value: through JSON, so the server's reader (core/sampler/json_params.h)
// parses both front ends' values the same way.
Status set_sampler_field(SamplerParams& params, const ParamDef& d, const val& v) {
  const std::string text = val::global("JSON").call<std::string>("stringify", v);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return type_error(d.key, "a JSON value");
  return set_param_json(params, d, j);
}

// response_format: {type: "text" | "json_object" [, schema] | "json_schema", json_schema: {schema}}.
Result<std::shared_ptr<TokenConstraint>> response_format(const val& v, const LoadedModel& model) {
  if (!is_object(v) || !v["type"].isString()) return type_error("response_format", "an object with a string type");
  const std::string type = v["type"].as<std::string>();
  const val json = val::global("JSON");
  if (type == "text") return std::shared_ptr<TokenConstraint>();
  if (type == "json_object") {
    const val schema = v["schema"];
    return model.json_schema_constraint(schema.isUndefined() ? "" : json.call<std::string>("stringify", schema));
  }
  if (type == "json_schema") {
    const val spec = v["json_schema"];
    if (!is_object(spec) || !is_object(spec["schema"])) {
      return type_error("response_format.json_schema.schema", "a JSON Schema object");
    }
    if (spec["strict"].isFalse()) {
      return error(ErrorCode::kUnsupported, "response_format.json_schema.strict: false is not supported (the output always follows the schema)");
    }
    return model.json_schema_constraint(json.call<std::string>("stringify", spec["schema"]));
  }
  return error(ErrorCode::kInvalidArgument,
               strfmt("response_format.type: '%s' is not one of text, json_object, json_schema", type.c_str()));
}

}  // namespace

Result<GenerateOptions> generate_options_from_js(const val& options, const LoadedModel& model,
                                                 std::span<const int32_t> prompt) {
  GenerateOptions g;
  if (options.isUndefined() || options.isNull()) {
    OX_TRY(validate(g.sampling));
    return g;
  }
  int keep = 0;
  int max_tokens = -2;
  int logprobs = -1;      // >= 0: asked for (true: 0, or the legacy count of alternatives)
  int top_logprobs = -1;  // >= 0: given
  int constraints = 0;
  const val keys = val::global("Object").call<val>("keys", options);
  const int n_keys = keys["length"].as<int>();
  for (int i = 0; i < n_keys; ++i) {
    const std::string key = keys[i].as<std::string>();
    const val v = options[key];
    if (v.isUndefined() || v.isNull()) continue;
    if (key == "max_tokens" || key == "max_completion_tokens") {
      OX_ASSIGN_OR_RETURN(const int n, integer(v, key, -1, 1 << 24));
      if (max_tokens != -2 && max_tokens != n) {
        return error(ErrorCode::kInvalidArgument, "max_tokens and max_completion_tokens disagree: give one");
      }
      max_tokens = n;
    } else if (key == "stop") {
      OX_ASSIGN_OR_RETURN(g.stop, strings(v, key));
    } else if (key == "ignore_eos") {
      OX_ASSIGN_OR_RETURN(g.ignore_eos, boolean(v, key));
    } else if (key == "render_special") {
      OX_ASSIGN_OR_RETURN(g.render_special, boolean(v, key));
    } else if (key == "context_shift") {
      OX_ASSIGN_OR_RETURN(g.context_shift, boolean(v, key));
    } else if (key == "n_keep") {
      OX_ASSIGN_OR_RETURN(keep, integer(v, key, -1, 1 << 24));
    } else if (key == "response_format" || key == "grammar" || key == "json_schema") {
      if (++constraints > 1) {
        return error(ErrorCode::kInvalidArgument, "give one of response_format, grammar and json_schema");
      }
      if (key == "response_format") {
        OX_ASSIGN_OR_RETURN(g.constraint, response_format(v, model));
      } else if (key == "grammar") {
        if (!v.isString()) return type_error(key, "a GBNF grammar string");
        OX_ASSIGN_OR_RETURN(const std::string grammar, string_from_js(v, "grammar"));
        OX_ASSIGN_OR_RETURN(g.constraint, model.grammar_constraint(grammar));
      } else {
        OX_ASSIGN_OR_RETURN(g.constraint, model.json_schema_constraint(
                                              val::global("JSON").call<std::string>("stringify", v)));
      }
    } else if (key == "logprobs") {
      // chat: a boolean (alternatives from top_logprobs); completions: the legacy count.
      if (v.isTrue() || v.isFalse()) {
        logprobs = v.isTrue() ? std::max(logprobs, 0) : -1;
      } else {
        OX_ASSIGN_OR_RETURN(logprobs, integer(v, key, 0, kMaxTopLogprobs));
      }
    } else if (key == "top_logprobs") {
      OX_ASSIGN_OR_RETURN(top_logprobs, integer(v, key, 0, kMaxTopLogprobs));
    } else if (const ParamDef* d = find_json_param(key); d != nullptr) {
      OX_TRY(set_sampler_field(g.sampling, *d, v));
    } else {
      return error(ErrorCode::kUnsupported, strfmt("%s is not supported", key.c_str()));
    }
  }
  if (max_tokens != -2) g.max_tokens = max_tokens;
  if (top_logprobs >= 0 && logprobs < 0) {  // llama-server's rule
    return error(ErrorCode::kInvalidArgument, "top_logprobs requires logprobs: true");
  }
  // The probabilities are core/sampler's n_probs (the softmax of the raw logits, as llama-server's
  // default); 1 at least, for the chosen token's own. index.ts shapes them.
  if (logprobs >= 0) g.sampling.n_probs = std::max({logprobs, top_logprobs, 1});
  OX_TRY(validate(g.sampling));
  g.n_keep = resolve_n_keep(keep, prompt, model.tokenizer().bos_id());
  return g;
}

}  // namespace ox::web
