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
  bool nextn = false;  // a multi-token-prediction block's (ArchSpec::nextn): checked, never loaded
  std::string name() const { return tensor_name(role, layer, bias ? "bias" : "weight"); }
  bool vector() const { return bias || tensor_row(role).vector; }
};

std::vector<PlannedTensor> plan_tensors(const ArchSpec& spec, const HParams& hp);

// Layer l's attention projections from d inputs to q, k and v rows, with biases per `bias`: attn_q,
// attn_k, attn_v, or one attn_qkv (rows [q | k | v]) where spec.fused_qkv; appended to out. Every
// planner of attention layers plans them here, so the file's layout (file_layout.h) reaches them all.
void plan_qkv(const ArchSpec& spec, int l, int64_t d, int64_t q, int64_t k, int64_t v, Has bias,
              std::vector<PlannedTensor>& out);
// The multi-token-prediction blocks after the trunk (layers n_layer .. n_layer + n_layer_nextn - 1),
// appended to out: what plan_tensors plans last.
void plan_nextn_blocks(const ArchSpec& spec, const HParams& hp, std::vector<PlannedTensor>& out);
// The tensors of recurrent layer l (its norm, its mixer, its feed-forward if any), appended to out:
// what plan_tensors plans for a layer when the spec has a recurrent mixer (tensor_plan_recurrent.cpp).
void plan_recurrent_layer(const ArchSpec& spec, const HParams& hp, int l, std::vector<PlannedTensor>& out);
// Only the mixer's tensors of layer l (falcon-h1: beside its attention).
void plan_recurrent_mixer(const ArchSpec& spec, const HParams& hp, int l, std::vector<PlannedTensor>& out);
// Whether layer l is recurrent: every layer of a recurrent spec, or a hybrid's layers without
// key/value heads.
bool is_recurrent_layer(const ArchSpec& spec, const HParams& hp, int l);
// The mixture-of-experts feed-forward of layer l (router, experts, shared expert, per the spec's
// MoeSpec), appended to out: what plan_tensors plans for an expert layer (qwen35moe's too).
void plan_moe_ffn(const ArchSpec& spec, const HParams& hp, int l, std::vector<PlannedTensor>& out);

}  // namespace ox
