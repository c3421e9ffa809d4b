// read_xielu: scalar-or-array keys as llama_model_loader::get_key_or_arr reads them.
#include "core/model/xielu_params.h"

#include <cmath>

namespace ox {
namespace {

// The key's value for each of n_layer layers.
Result<std::vector<float>> per_layer(const gguf::GgufFile& f, const std::string& key, int n_layer) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s'", f.name().c_str(), key.c_str()));
  std::vector<float> out(static_cast<size_t>(n_layer));
  if (v->type == gguf::ValueType::ARRAY) {
    if (v->count != static_cast<uint64_t>(n_layer) || v->raw == nullptr || v->elem_type == gguf::ValueType::STRING ||
        v->elem_type == gguf::ValueType::ARRAY || v->elem_type == gguf::ValueType::BOOL) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' must hold one number per layer (%d)", f.name().c_str(),
                                                   key.c_str(), n_layer));
    }
    for (int l = 0; l < n_layer; ++l) out[static_cast<size_t>(l)] = v->f32_at(static_cast<uint64_t>(l));
  } else {
    OX_ASSIGN_OR_RETURN(const float value, f.get_f32(key));
    for (float& o : out) o = value;
  }
  for (float o : out) {
    if (!std::isfinite(o)) return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' is not finite", f.name().c_str(), key.c_str()));
  }
  return out;
}

}  // namespace

Status read_xielu(const gguf::GgufFile& file, const HParams& hp, std::vector<LayerWeights>& layers) {
  OX_ASSIGN_OR_RETURN(const std::vector<float> alpha_n, per_layer(file, "xielu.alpha_n", hp.n_layer));
  OX_ASSIGN_OR_RETURN(const std::vector<float> alpha_p, per_layer(file, "xielu.alpha_p", hp.n_layer));
  OX_ASSIGN_OR_RETURN(const std::vector<float> beta, per_layer(file, "xielu.beta", hp.n_layer));
  OX_ASSIGN_OR_RETURN(const std::vector<float> eps, per_layer(file, "xielu.eps", hp.n_layer));
  for (size_t l = 0; l < layers.size(); ++l) layers[l].xielu = xielu_params(alpha_n[l], alpha_p[l], beta[l], eps[l]);
  return Status::ok();
}

}  // namespace ox
