// The tensor plan: every tensor an architecture's file holds, with its GGUF shape, derived once
// from the ArchSpec and the hyperparameters. The loader loads it, `oxidize synth` writes it, and
// neither spells a tensor name or shape of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/arch_spec.h"
#include "core/model/hparams.h"

namespace ox {

struct PlannedTensor {
  Tn role;
  int layer = -1;      // -1 for model-level tensors
  bool bias = false;   // the ".bias" of the role (else ".weight")
  Has presence = Has::kYes;
  std::vector<int64_t> dims;  // GGUF order: dims[0] = elements per row ({n} for vectors)
  std::string name() const { return tensor_name(role, layer, bias ? "bias" : "weight"); }
  bool vector() const { return bias || tensor_row(role).vector; }
};

std::vector<PlannedTensor> plan_tensors(const ArchSpec& spec, const HParams& hp);

}  // namespace ox
