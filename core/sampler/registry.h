// The sampler registry: every stage `--samplers` can order and every SamplerParams field, each
// described once (spellings, JSON key, range, help). The chain builder, `--samplers` parsing,
// validate(), the CLI's flags and its --help iterate these tables.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/sampler/params.h"
#include "core/sampler/stages.h"

namespace ox {

struct StageDef {
  Stage stage;
  const char* name;  // as --samplers spells it (llama.cpp's common_sampler_type_to_str)
  char chr;          // as --sampler-seq spells it
  std::array<std::string_view, 4> params;  // the flags it reads (for help and docs)
  void (*apply)(Candidates& c, ChainState& state);
};

enum class ParamType : uint8_t {
  kFloat,       // float field, range-checked, never NaN or infinite
  kInt,         // int field, range-checked
  kSeed,        // -1 (random) or 0..4294967295
  kStages,      // "penalties;dry;top_k" (--samplers)
  kStageChars,  // "edkypmxt" (--sampler-seq)
  kLogitBias,   // TOKEN_ID(+/-)BIAS, repeatable
  kBreakers,    // DRY sequence breakers, repeatable; the first replaces the defaults, "none" clears
};

struct ParamDef {
  std::array<std::string_view, 3> names;  // CLI spellings; names[0] in errors and help
  const char* key;                        // JSON / embind field (llama-server's name)
  const char* value;                      // placeholder in --help
  ParamType type;
  float SamplerParams::*f = nullptr;
  int SamplerParams::*i = nullptr;
  double min = 0;  // valid range of kFloat / kInt
  double max = 0;
  bool min_open = false;  // min itself is not valid
  const char* help = "";
};

std::span<const StageDef> all_stages();
const StageDef& stage_def(Stage stage);
std::span<const ParamDef> sampler_params();
const ParamDef* find_param(std::string_view name);  // by CLI spelling or key

// Checks every field against its row: the error names the flag (`--top-p`), the value and the
// valid range. NaN and infinities are refused everywhere (a logit bias may be -inf: a ban).
[[nodiscard]] Status validate(const SamplerParams& params);

// Sets the field of `def` from its CLI text (every value given, for repeatable ones; the last
// wins otherwise). Range checks are validate()'s.
[[nodiscard]] Status set_param(SamplerParams& params, const ParamDef& def, std::span<const std::string> values);

// "penalties;dry;top_k" (any case; kebab-case, no-dash and llama.cpp's aliases accepted).
Result<std::vector<Stage>> parse_samplers(std::string_view text);
// "edkypmxt" (--sampler-seq).
Result<std::vector<Stage>> parse_sampler_chars(std::string_view text);
// "15043+1", "15043-1.5", "2-inf".
Result<LogitBias> parse_logit_bias(std::string_view text);

std::string samplers_text(std::span<const Stage> stages);  // "penalties;dry;..."
std::string sampler_chars(std::span<const Stage> stages);  // "edskypmxt"
// A field's current value as --help shows it ("0.95", "penalties;dry;...", "'\n', ':'").
std::string param_value_text(const SamplerParams& params, const ParamDef& def);

}  // namespace ox
