// The registry: every validation error names its flag and range, --samplers / --sampler-seq /
// --logit-bias parsing, set_param's CLI rules, and the tables' own consistency.
#include "core/sampler/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace ox {
namespace {

std::string validate_message(const std::function<void(SamplerParams&)>& change) {
  SamplerParams p;
  change(p);
  const Status s = validate(p);
  return s.is_ok() ? "ok" : s.message();
}

TEST(SamplerRegistry, DefaultsAreValid) { EXPECT_TRUE(validate(SamplerParams()).is_ok()); }

TEST(SamplerRegistry, EveryValidationErrorNamesTheFlagAndRange) {
  struct Case {
    std::function<void(SamplerParams&)> change;
    const char* expect;
  };
  const Case cases[] = {
      {[](SamplerParams& p) { p.temperature = NAN; }, "--temp: nan is not a finite number"},
      {[](SamplerParams& p) { p.temperature = INFINITY; }, "--temp: inf is not a finite number"},
      {[](SamplerParams& p) { p.top_p = 2; }, "--top-p: 2 is out of range (valid: 0 to 1)"},
      {[](SamplerParams& p) { p.top_p = -0.1f; }, "--top-p: -0.1 is out of range"},
      {[](SamplerParams& p) { p.min_p = 1.5f; }, "--min-p: 1.5 is out of range (valid: 0 to 1)"},
      {[](SamplerParams& p) { p.typical_p = NAN; }, "--typical: nan"},
      {[](SamplerParams& p) { p.top_k = -2; }, "--top-k: -2 is out of range (valid: >= -1)"},
      {[](SamplerParams& p) { p.repeat_penalty = 0; }, "--repeat-penalty: 0 is out of range (valid: > 0)"},
      {[](SamplerParams& p) { p.repeat_penalty = 1e-39f; }, "--repeat-penalty: "},
      {[](SamplerParams& p) { p.repeat_last_n = -2; }, "--repeat-last-n: -2 is out of range (valid: >= -1)"},
      {[](SamplerParams& p) { p.frequency_penalty = NAN; }, "--frequency-penalty: nan"},
      {[](SamplerParams& p) { p.presence_penalty = -INFINITY; }, "--presence-penalty: -inf"},
      {[](SamplerParams& p) { p.dry_multiplier = -1; }, "--dry-multiplier: -1 is out of range (valid: >= 0)"},
      {[](SamplerParams& p) { p.dry_base = 0.5f; }, "--dry-base: 0.5 is out of range (valid: >= 1)"},
      {[](SamplerParams& p) { p.dry_allowed_length = -1; }, "--dry-allowed-length: -1"},
      {[](SamplerParams& p) { p.dry_penalty_last_n = -5; }, "--dry-penalty-last-n: -5"},
      {[](SamplerParams& p) { p.xtc_probability = 1.5f; }, "--xtc-probability: 1.5 is out of range"},
      {[](SamplerParams& p) { p.xtc_threshold = -1; }, "--xtc-threshold: -1 is out of range"},
      {[](SamplerParams& p) { p.top_n_sigma = NAN; }, "--top-nsigma: nan"},
      {[](SamplerParams& p) { p.dynatemp_range = -1; }, "--dynatemp-range: -1 is out of range"},
      {[](SamplerParams& p) { p.dynatemp_exponent = INFINITY; }, "--dynatemp-exp: inf"},
      {[](SamplerParams& p) { p.mirostat = 3; }, "--mirostat: 3 is out of range (valid: 0, 1 or 2)"},
      {[](SamplerParams& p) { p.mirostat_eta = -0.1f; }, "--mirostat-lr: -0.1 is out of range"},
      {[](SamplerParams& p) { p.mirostat_tau = NAN; }, "--mirostat-ent: nan"},
      {[](SamplerParams& p) { p.n_probs = -1; }, "--n-probs: -1 is out of range"},
      {[](SamplerParams& p) { p.min_keep = -1; }, "min_keep: -1 is out of range"},
      {[](SamplerParams& p) { p.logit_bias = {{-3, 1.0f}}; }, "--logit-bias: token id -3 is negative"},
      {[](SamplerParams& p) { p.logit_bias = {{3, NAN}}; }, "--logit-bias: the bias of token 3 is nan"},
      {[](SamplerParams& p) { p.logit_bias = {{3, INFINITY}}; }, "--logit-bias: the bias of token 3 is inf"},
  };
  for (const Case& c : cases) {
    const std::string message = validate_message(c.change);
    EXPECT_EQ(message.rfind(c.expect, 0), 0u) << "got: " << message << "\nwant: " << c.expect;
  }
  // Values at the edges and the documented disable values are fine.
  for (auto ok : std::vector<std::function<void(SamplerParams&)>>{
           [](SamplerParams& p) { p.top_k = -1; }, [](SamplerParams& p) { p.top_k = 0; },
           [](SamplerParams& p) { p.top_p = 1; }, [](SamplerParams& p) { p.temperature = -1; },
           [](SamplerParams& p) { p.top_n_sigma = -1; }, [](SamplerParams& p) { p.repeat_last_n = -1; },
           [](SamplerParams& p) { p.mirostat = 2; }, [](SamplerParams& p) { p.logit_bias = {{2, -INFINITY}}; },
           [](SamplerParams& p) { p.xtc_threshold = 1; }}) {
    EXPECT_EQ(validate_message(ok), "ok");
  }
}

TEST(SamplerRegistry, ParseSamplersAcceptsLlamaCppNamesAndAliases) {
  Result<std::vector<Stage>> r = parse_samplers("penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, default_stages());
  r = parse_samplers("Top-K;minp;nucleus;temp;typ;top-n-sigma");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<Stage>{Stage::kTopK, Stage::kMinP, Stage::kTopP, Stage::kTemperature, Stage::kTypicalP,
                                    Stage::kTopNSigma}));
  r = parse_samplers("top_k;bogus");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--samplers: unknown sampler 'bogus' (valid: penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, "
            "temperature)");
  r = parse_sampler_chars("kt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<Stage>{Stage::kTopK, Stage::kTemperature}));
  EXPECT_FALSE(parse_sampler_chars("kq").ok());
}

TEST(SamplerRegistry, ParseLogitBias) {
  Result<LogitBias> b = parse_logit_bias("15043+1");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->token, 15043);
  EXPECT_EQ(b->bias, 1.0f);
  b = parse_logit_bias("7-2.5");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bias, -2.5f);
  b = parse_logit_bias("2-inf");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bias, -INFINITY);
  for (const char* bad : {"", "15043", "15043+", "x+1", "15043*1", "15043+1x", "15043+-1"}) {
    EXPECT_FALSE(parse_logit_bias(bad).ok()) << bad;
  }
}

TEST(SamplerRegistry, SetParamFollowsTheCliRules) {
  SamplerParams p;
  const std::vector<std::string> seed = {"-1"};
  ASSERT_TRUE(set_param(p, *find_param("--seed"), seed).is_ok());
  EXPECT_EQ(p.seed, kRandomSeed);
  const std::vector<std::string> big_seed = {"4294967296"};
  EXPECT_FALSE(set_param(p, *find_param("-s"), big_seed).is_ok());
  const std::vector<std::string> temps = {"0.5", "0.25"};  // the last wins
  ASSERT_TRUE(set_param(p, *find_param("--temperature"), temps).is_ok());
  EXPECT_EQ(p.temperature, 0.25f);
  const std::vector<std::string> not_number = {"warm"};
  const Status s = set_param(p, *find_param("--temp"), not_number);
  EXPECT_EQ(s.message(), "--temp: 'warm' is not a number");
  const std::vector<std::string> biases = {"1+1", "2-inf"};  // repeatable: every one kept
  ASSERT_TRUE(set_param(p, *find_param("-l"), biases).is_ok());
  EXPECT_EQ(p.logit_bias.size(), 2u);
  const std::vector<std::string> breakers = {"x", "y"};  // replace the defaults
  ASSERT_TRUE(set_param(p, *find_param("--dry-sequence-breaker"), breakers).is_ok());
  EXPECT_EQ(p.dry_sequence_breakers, (std::vector<std::string>{"x", "y"}));
  const std::vector<std::string> none = {"x", "none"};
  ASSERT_TRUE(set_param(p, *find_param("--dry-sequence-breaker"), none).is_ok());
  EXPECT_TRUE(p.dry_sequence_breakers.empty());
  const std::vector<std::string> order = {"top_k;temp"};
  ASSERT_TRUE(set_param(p, *find_param("--samplers"), order).is_ok());
  EXPECT_EQ(p.samplers, (std::vector<Stage>{Stage::kTopK, Stage::kTemperature}));
  const std::vector<std::string> seq = {"edt"};
  ASSERT_TRUE(set_param(p, *find_param("--sampling-seq"), seq).is_ok());
  EXPECT_EQ(p.samplers, (std::vector<Stage>{Stage::kPenalties, Stage::kDry, Stage::kTemperature}));
}

TEST(SamplerRegistry, TablesAreConsistent) {
  // Every stage once, with a distinct name and letter; every parameter a distinct key and flag.
  std::set<std::string> names;
  std::set<char> chars;
  for (const StageDef& s : all_stages()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_TRUE(chars.insert(s.chr).second) << s.chr;
    EXPECT_EQ(&stage_def(s.stage), &s);
    for (std::string_view flag : s.params) {
      if (!flag.empty()) {
        EXPECT_NE(find_param(flag), nullptr) << flag;
      }
    }
  }
  std::set<std::string> flags;
  for (const ParamDef& d : sampler_params()) {
    for (std::string_view n : d.names) {
      if (!n.empty()) {
        EXPECT_TRUE(flags.insert(std::string(n)).second) << n;
      }
    }
    EXPECT_TRUE(d.type != ParamType::kFloat || d.f != nullptr) << d.key;
    EXPECT_TRUE(d.type != ParamType::kInt || d.i != nullptr) << d.key;
  }
  EXPECT_EQ(param_value_text(SamplerParams(), *find_param("--dry-sequence-breaker")), "'\\n', ':', '\"', '*'");
}

}  // namespace
}  // namespace ox
