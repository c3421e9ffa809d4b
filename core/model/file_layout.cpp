// read_file_layout: fused or separate q/k/v, fused or separate expert gate/up, off the file once.
#include "core/model/file_layout.h"

#include <vector>

#include "core/model/tensor_plan.h"

namespace ox {
namespace {

// The trunk's layers whose plan under `spec` holds the weight of `role`.
std::vector<int> layers_with(const ArchSpec& spec, const HParams& hp, Tn role) {
  std::vector<int> layers;
  for (const PlannedTensor& t : plan_tensors(spec, hp)) {
    if (t.role == role && !t.bias && !t.nextn && t.layer >= 0) layers.push_back(t.layer);
  }
  return layers;
}

// Whether the file holds `fused` in place of the separate tensors in every layer of `layers`
// (false when it holds it in none); an error naming the first layer that differs from the first.
Result<bool> fused_in_file(const gguf::GgufFile& file, const std::vector<int>& layers, Tn fused, const char* what) {
  if (layers.empty()) return false;
  auto has = [&](int l) { return file.find_tensor(tensor_name(fused, l, "weight")) != nullptr; };
  const int first = layers.front();
  const bool fused_first = has(first);
  for (int l : layers) {
    if (has(l) == fused_first) continue;
    const std::string name = tensor_name(fused, fused_first ? first : l, "weight");
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: tensor '%s' fuses %s in layer %d, but layer %d has them apart: files that fuse them "
                        "in some layers only are not supported",
                        file.name().c_str(), name.c_str(), what, fused_first ? first : l, fused_first ? l : first));
  }
  return fused_first;
}

}  // namespace

Status read_file_layout(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec) {
  if (spec.qkv_either) {
    ArchSpec separate = spec;
    separate.fused_qkv = false;
    OX_ASSIGN_OR_RETURN(spec.fused_qkv, fused_in_file(file, layers_with(separate, hp, Tn::kAttnQ), Tn::kAttnQkv,
                                                      "q, k and v"));
  }
  if (spec.moe && spec.experts.gate_up_either) {
    ArchSpec separate = spec;
    separate.experts.fused_gate_up = false;
    OX_ASSIGN_OR_RETURN(spec.experts.fused_gate_up,
                        fused_in_file(file, layers_with(separate, hp, Tn::kFfnUpExps), Tn::kFfnGateUpExps,
                                      "the experts' gate and up projections"));
  }
  return Status::ok();
}

}  // namespace ox
