// The stage and parameter tables (llama.cpp's common/sampling.cpp and common/arg.cpp facts:
// names, letters, flags, defaults) and what iterates them: parsing, validation, value text.
#include "core/sampler/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace ox {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIntMax = 1 << 30;

const DryBreakers kNoBreakers;

void stage_penalties(Candidates& c, ChainState& s) {
  const SamplerParams& p = *s.params;
  apply_penalties(c, s.history, p.repeat_last_n, p.repeat_penalty, p.frequency_penalty, p.presence_penalty);
}
void stage_dry(Candidates& c, ChainState& s) {
  const SamplerParams& p = *s.params;
  apply_dry(c, s.history, {p.dry_multiplier, p.dry_base, p.dry_allowed_length, p.dry_penalty_last_n},
            s.dry_breakers != nullptr ? *s.dry_breakers : kNoBreakers);
}
size_t min_keep(const ChainState& s) { return static_cast<size_t>(std::max(0, s.params->min_keep)); }
void stage_top_n_sigma(Candidates& c, ChainState& s) { apply_top_n_sigma(c, s.params->top_n_sigma); }
void stage_top_k(Candidates& c, ChainState& s) { apply_top_k(c, s.params->top_k); }
void stage_typical(Candidates& c, ChainState& s) { apply_typical(c, s.params->typical_p, min_keep(s)); }
void stage_top_p(Candidates& c, ChainState& s) { apply_top_p(c, s.params->top_p, min_keep(s)); }
void stage_min_p(Candidates& c, ChainState& s) { apply_min_p(c, s.params->min_p, min_keep(s)); }
void stage_xtc(Candidates& c, ChainState& s) {
  apply_xtc(c, s.params->xtc_probability, s.params->xtc_threshold, min_keep(s), *s.xtc_rng);
}
void stage_temperature(Candidates& c, ChainState& s) {
  apply_temperature(c, s.params->temperature, s.params->dynatemp_range, s.params->dynatemp_exponent);
}

// In llama.cpp's default order (common_params_sampling::samplers).
constexpr StageDef kStages[] = {
    {Stage::kPenalties, "penalties", 'e',
     {"--repeat-last-n", "--repeat-penalty", "--frequency-penalty", "--presence-penalty"}, stage_penalties},
    {Stage::kDry, "dry", 'd', {"--dry-multiplier", "--dry-base", "--dry-allowed-length", "--dry-penalty-last-n"},
     stage_dry},
    {Stage::kTopNSigma, "top_n_sigma", 's', {"--top-nsigma"}, stage_top_n_sigma},
    {Stage::kTopK, "top_k", 'k', {"--top-k"}, stage_top_k},
    {Stage::kTypicalP, "typ_p", 'y', {"--typical"}, stage_typical},
    {Stage::kTopP, "top_p", 'p', {"--top-p"}, stage_top_p},
    {Stage::kMinP, "min_p", 'm', {"--min-p"}, stage_min_p},
    {Stage::kXtc, "xtc", 'x', {"--xtc-probability", "--xtc-threshold"}, stage_xtc},
    {Stage::kTemperature, "temperature", 't', {"--temp", "--dynatemp-range", "--dynatemp-exp"}, stage_temperature},
};

using P = SamplerParams;
using T = ParamType;

// Flags as llama.cpp's common/arg.cpp spells them; ranges are ours (llama.cpp checks few).
constexpr ParamDef kParams[] = {
    {{"-s", "--seed"}, "seed", "SEED", T::kSeed, nullptr, nullptr, -1, 4294967295.0, false,
     "RNG seed (-1: a random one)"},
    {{"--samplers"}, "samplers", "SAMPLERS", T::kStages, nullptr, nullptr, 0, 0, false,
     "samplers used for generation, in order, separated by ';'"},
    {{"--sampler-seq", "--sampling-seq"}, "", "SEQUENCE", T::kStageChars, nullptr, nullptr, 0, 0, false,
     "simplified sequence for the samplers, one letter each"},
    {{"--temp", "--temperature"}, "temperature", "N", T::kFloat, &P::temperature, nullptr, -kInf, kInf, false,
     "temperature (<= 0: greedy)"},
    {{"--top-k"}, "top_k", "N", T::kInt, nullptr, &P::top_k, -1, kIntMax, false, "top-k sampling (0 = disabled)"},
    {{"--top-p"}, "top_p", "N", T::kFloat, &P::top_p, nullptr, 0, 1, false, "top-p sampling (1.0 = disabled)"},
    {{"--min-p"}, "min_p", "N", T::kFloat, &P::min_p, nullptr, 0, 1, false, "min-p sampling (0.0 = disabled)"},
    {{"--top-nsigma", "--top-n-sigma"}, "top_n_sigma", "N", T::kFloat, &P::top_n_sigma, nullptr, -kInf, kInf, false,
     "top-n-sigma sampling (<= 0 = disabled)"},
    {{"--xtc-probability"}, "xtc_probability", "N", T::kFloat, &P::xtc_probability, nullptr, 0, 1, false,
     "xtc probability (0.0 = disabled)"},
    {{"--xtc-threshold"}, "xtc_threshold", "N", T::kFloat, &P::xtc_threshold, nullptr, 0, 1, false,
     "xtc threshold (> 0.5 = disabled)"},
    {{"--typical", "--typical-p"}, "typical_p", "N", T::kFloat, &P::typical_p, nullptr, 0, 1, false,
     "locally typical sampling, parameter p (1.0 = disabled)"},
    {{"--repeat-last-n"}, "repeat_last_n", "N", T::kInt, nullptr, &P::repeat_last_n, -1, kIntMax, false,
     "last n tokens to consider for the penalties (0 = disabled, -1 = all of them)"},
    {{"--repeat-penalty"}, "repeat_penalty", "N", T::kFloat, &P::repeat_penalty, nullptr, 0, kInf, true,
     "penalize repeat sequence of tokens (1.0 = disabled)"},
    {{"--presence-penalty"}, "presence_penalty", "N", T::kFloat, &P::presence_penalty, nullptr, -kInf, kInf, false,
     "repeat alpha presence penalty (0.0 = disabled)"},
    {{"--frequency-penalty"}, "frequency_penalty", "N", T::kFloat, &P::frequency_penalty, nullptr, -kInf, kInf,
     false, "repeat alpha frequency penalty (0.0 = disabled)"},
    {{"--dry-multiplier"}, "dry_multiplier", "N", T::kFloat, &P::dry_multiplier, nullptr, 0, kInf, false,
     "DRY sampling multiplier (0.0 = disabled)"},
    {{"--dry-base"}, "dry_base", "N", T::kFloat, &P::dry_base, nullptr, 1, kInf, false, "DRY sampling base value"},
    {{"--dry-allowed-length"}, "dry_allowed_length", "N", T::kInt, nullptr, &P::dry_allowed_length, 0, kIntMax,
     false, "allowed length for DRY sampling"},
    {{"--dry-penalty-last-n"}, "dry_penalty_last_n", "N", T::kInt, nullptr, &P::dry_penalty_last_n, -1, kIntMax,
     false, "DRY penalty for the last n tokens (0 = disabled, -1 = all of them)"},
    {{"--dry-sequence-breaker"}, "dry_sequence_breakers", "STRING", T::kBreakers, nullptr, nullptr, 0, 0, false,
     "add a sequence breaker for DRY sampling, clearing out the defaults; \"none\" for no breakers"},
    {{"--dynatemp-range"}, "dynatemp_range", "N", T::kFloat, &P::dynatemp_range, nullptr, 0, kInf, false,
     "dynamic temperature range (0.0 = disabled)"},
    {{"--dynatemp-exp"}, "dynatemp_exponent", "N", T::kFloat, &P::dynatemp_exponent, nullptr, 0, kInf, false,
     "dynamic temperature exponent"},
    {{"--mirostat"}, "mirostat", "N", T::kInt, nullptr, &P::mirostat, 0, 2, false,
     "use Mirostat sampling (0 = disabled, 1 = Mirostat, 2 = Mirostat 2.0); replaces the samplers"},
    {{"--mirostat-lr"}, "mirostat_eta", "N", T::kFloat, &P::mirostat_eta, nullptr, 0, kInf, false,
     "Mirostat learning rate, parameter eta"},
    {{"--mirostat-ent"}, "mirostat_tau", "N", T::kFloat, &P::mirostat_tau, nullptr, 0, kInf, false,
     "Mirostat target entropy, parameter tau"},
    {{"-l", "--logit-bias"}, "logit_bias", "TOKEN_ID(+/-)BIAS", T::kLogitBias, nullptr, nullptr, 0, 0, false,
     "modifies the likelihood of a token, e.g. `--logit-bias 15043+1` or `15043-inf` (repeatable)"},
    {{"--n-probs"}, "n_probs", "N", T::kInt, nullptr, &P::n_probs, 0, 1 << 20, false,
     "print the probabilities of the top N tokens for each generated token (0 = off)"},
    {{}, "min_keep", "N", T::kInt, nullptr, &P::min_keep, 0, kIntMax, false,
     "truncating samplers keep at least this many tokens (0 = no minimum)"},
};

// The long spelling (--logit-bias rather than -l), or the JSON key of a row without a flag.
std::string display_name(const ParamDef& d) {
  for (std::string_view n : d.names) {
    if (n.substr(0, 2) == "--") return std::string(n);
  }
  return std::string(d.names[0].empty() ? d.key : d.names[0]);
}

std::string range_text(const ParamDef& d) {
  if (d.min == -kInf && d.max == kInf) return "any finite number";
  if (d.max == kInf || (d.type == T::kInt && d.max >= kIntMax)) return strfmt("%s %g", d.min_open ? ">" : ">=", d.min);
  if (d.type == T::kInt && d.max - d.min == 2) return strfmt("%g, %g or %g", d.min, d.min + 1, d.max);
  return strfmt("%g to %g", d.min, d.max);
}

bool in_range(const ParamDef& d, double v) {
  return (d.min_open ? v > d.min : v >= d.min) && v <= d.max;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  return out;
}

std::string valid_stage_names() {
  std::string out;
  for (const StageDef& s : kStages) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

Result<double> parse_double(const ParamDef& d, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: '%s' is not a number", display_name(d).c_str(), text.c_str()));
  }
  return v;
}

Result<int64_t> parse_int(const ParamDef& d, const std::string& text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: '%s' is not an integer", display_name(d).c_str(), text.c_str()));
  }
  return v;
}

}  // namespace

std::vector<Stage> default_stages() {
  std::vector<Stage> out;
  for (const StageDef& s : kStages) out.push_back(s.stage);
  return out;
}

std::span<const StageDef> all_stages() { return kStages; }

const StageDef& stage_def(Stage stage) {
  for (const StageDef& s : kStages) {
    if (s.stage == stage) return s;
  }
  OX_CHECK(false);
  return kStages[0];
}

std::span<const ParamDef> sampler_params() { return kParams; }

const ParamDef* find_param(std::string_view name) {
  for (const ParamDef& d : kParams) {
    if (name == d.key) return &d;
    for (std::string_view n : d.names) {
      if (!n.empty() && n == name) return &d;
    }
  }
  return nullptr;
}

Status validate(const SamplerParams& params) {
  for (const ParamDef& d : kParams) {
    const std::string name = display_name(d);
    if (d.type == T::kFloat) {
      const float v = params.*d.f;
      if (!std::isfinite(v)) {
        return error(ErrorCode::kInvalidArgument, strfmt("%s: %g is not a finite number", name.c_str(), v));
      }
      if (!in_range(d, v)) {
        return error(ErrorCode::kInvalidArgument,
                     strfmt("%s: %g is out of range (valid: %s)", name.c_str(), v, range_text(d).c_str()));
      }
    } else if (d.type == T::kInt) {
      const int v = params.*d.i;
      if (!in_range(d, v)) {
        return error(ErrorCode::kInvalidArgument,
                     strfmt("%s: %d is out of range (valid: %s)", name.c_str(), v, range_text(d).c_str()));
      }
    } else if (d.type == T::kLogitBias) {
      for (const LogitBias& b : params.logit_bias) {
        if (b.token < 0) {
          return error(ErrorCode::kInvalidArgument, strfmt("%s: token id %d is negative", name.c_str(), b.token));
        }
        if (std::isnan(b.bias) || b.bias == INFINITY) {
          return error(ErrorCode::kInvalidArgument,
                       strfmt("%s: the bias of token %d is %g (valid: a finite number, or -inf to ban it)",
                              name.c_str(), b.token, b.bias));
        }
      }
    }
  }
  // llama.cpp's common_sampler_init: the penalty divides, so its reciprocal must be finite too.
  if (!std::isfinite(1.0f / params.repeat_penalty)) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("--repeat-penalty: %g is too small (1/%g is not finite)", params.repeat_penalty,
                        params.repeat_penalty));
  }
  return Status::ok();
}

Status set_param(SamplerParams& params, const ParamDef& d, std::span<const std::string> values) {
  if (values.empty()) return Status::ok();
  const std::string& text = values.back();
  const std::string name = display_name(d);
  switch (d.type) {
    case T::kFloat: {
      OX_ASSIGN_OR_RETURN(double v, parse_double(d, text));
      params.*d.f = static_cast<float>(v);
      return Status::ok();
    }
    case T::kInt: {
      OX_ASSIGN_OR_RETURN(int64_t v, parse_int(d, text));
      if (v < d.min || v > d.max) {
        return error(ErrorCode::kInvalidArgument,
                     strfmt("%s: %s is out of range (valid: %s)", name.c_str(), text.c_str(), range_text(d).c_str()));
      }
      params.*d.i = static_cast<int>(v);
      return Status::ok();
    }
    case T::kSeed: {
      OX_ASSIGN_OR_RETURN(int64_t v, parse_int(d, text));
      if (v < -1 || v > 0xFFFFFFFFll) {
        return error(ErrorCode::kInvalidArgument,
                     strfmt("%s: %s is out of range (valid: -1 for a random seed, or 0 to 4294967295)", name.c_str(),
                            text.c_str()));
      }
      params.seed = v < 0 ? kRandomSeed : static_cast<uint64_t>(v);
      return Status::ok();
    }
    case T::kStages: {
      OX_ASSIGN_OR_RETURN(params.samplers, parse_samplers(text));
      return Status::ok();
    }
    case T::kStageChars: {
      OX_ASSIGN_OR_RETURN(params.samplers, parse_sampler_chars(text));
      return Status::ok();
    }
    case T::kLogitBias:
      for (const std::string& v : values) {
        Result<LogitBias> b = parse_logit_bias(v);
        if (!b.ok()) return b.status().with_context(name);
        params.logit_bias.push_back(*b);
      }
      return Status::ok();
    case T::kBreakers:
      params.dry_sequence_breakers.clear();
      for (const std::string& v : values) {
        if (v == "none") {
          params.dry_sequence_breakers.clear();
        } else {
          params.dry_sequence_breakers.push_back(v);
        }
      }
      return Status::ok();
  }
  return Status::ok();
}

Result<std::vector<Stage>> parse_samplers(std::string_view text) {
  std::vector<Stage> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string name = lower(text.substr(start, end - start));
    start = end + 1;
    if (name.empty()) continue;
    const StageDef* found = nullptr;
    for (const StageDef& s : kStages) {
      // The canonical name, its kebab-case and no-dash forms (llama.cpp's aliases).
      std::string kebab = s.name, nodash;
      std::replace(kebab.begin(), kebab.end(), '_', '-');
      for (const char* p = s.name; *p != '\0'; ++p) {
        if (*p != '_') nodash += *p;
      }
      if (name == s.name || name == kebab || name == nodash) found = &s;
    }
    if (name == "nucleus") found = &stage_def(Stage::kTopP);
    if (name == "temp") found = &stage_def(Stage::kTemperature);
    if (name == "typ") found = &stage_def(Stage::kTypicalP);
    if (found == nullptr) {
      return error(ErrorCode::kInvalidArgument, strfmt("--samplers: unknown sampler '%s' (valid: %s)", name.c_str(),
                                                       valid_stage_names().c_str()));
    }
    out.push_back(found->stage);
  }
  return out;
}

Result<std::vector<Stage>> parse_sampler_chars(std::string_view text) {
  std::vector<Stage> out;
  for (char ch : text) {
    const StageDef* found = nullptr;
    for (const StageDef& s : kStages) {
      if (s.chr == ch) found = &s;
    }
    if (found == nullptr) {
      return error(ErrorCode::kInvalidArgument, strfmt("--sampler-seq: unknown sampler letter '%c' (valid: %s)", ch,
                                                       sampler_chars(default_stages()).c_str()));
    }
    out.push_back(found->stage);
  }
  return out;
}

Result<LogitBias> parse_logit_bias(std::string_view text) {
  const std::string s(text);
  int32_t token = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), token);
  const size_t sign_at = static_cast<size_t>(end - s.data());
  if (ec != std::errc() || sign_at >= s.size() || (s[sign_at] != '+' && s[sign_at] != '-') ||
      sign_at + 1 >= s.size()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("'%s' is not TOKEN_ID(+/-)BIAS (e.g. 15043+1 or 15043-inf)", s.c_str()));
  }
  const std::string rest = s.substr(sign_at + 1);
  char* rest_end = nullptr;
  const double bias = std::strtod(rest.c_str(), &rest_end);
  if (rest_end != rest.c_str() + rest.size() || rest[0] == '+' || rest[0] == '-') {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("'%s' is not TOKEN_ID(+/-)BIAS (e.g. 15043+1 or 15043-inf)", s.c_str()));
  }
  return LogitBias{token, static_cast<float>(s[sign_at] == '-' ? -bias : bias)};
}

std::string samplers_text(std::span<const Stage> stages) {
  std::string out;
  for (Stage s : stages) {
    if (!out.empty()) out += ';';
    out += stage_def(s).name;
  }
  return out;
}

std::string sampler_chars(std::span<const Stage> stages) {
  std::string out;
  for (Stage s : stages) out += stage_def(s).chr;
  return out;
}

std::string param_value_text(const SamplerParams& params, const ParamDef& d) {
  switch (d.type) {
    case T::kFloat: return strfmt("%.2f", params.*d.f);
    case T::kInt: return strfmt("%d", params.*d.i);
    case T::kSeed: return params.seed == kRandomSeed ? "-1" : strfmt("%llu", static_cast<unsigned long long>(params.seed));
    case T::kStages: return samplers_text(params.samplers);
    case T::kStageChars: return sampler_chars(params.samplers);
    case T::kLogitBias: {
      std::string out;
      for (const LogitBias& b : params.logit_bias) out += strfmt("%s%d%+g", out.empty() ? "" : ", ", b.token, b.bias);
      return out.empty() ? "none" : out;
    }
    case T::kBreakers: {
      std::string out;
      for (const std::string& b : params.dry_sequence_breakers) {
        out += (out.empty() ? "'" : ", '") + (b == "\n" ? std::string("\\n") : b) + "'";
      }
      return out.empty() ? "none" : out;
    }
  }
  return "";
}

}  // namespace ox
