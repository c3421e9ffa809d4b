// moe_ffn: routing (softmax / sigmoid / softmax of the chosen, choice bias, expert groups), the
// chosen experts run on the tokens gathered for each (so a decoded token reads only its experts'
// weights), and shared experts.
#include "core/model/moe.h"

#include "core/model/builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace ox {
namespace {

const float* f32(const Tensor& t) { return t.empty() ? nullptr : reinterpret_cast<const float*>(t.data); }

constexpr int64_t kGluCost = 16;

// The index of the largest of s[0..n) not yet in taken[0..k) (ties: the lower index).
int32_t best_not_taken(const float* s, int32_t n, const int32_t* taken, int k) {
  int32_t best = -1;
  for (int32_t e = 0; e < n; ++e) {
    if (std::find(taken, taken + k, e) != taken + k) continue;
    if (best < 0 || s[e] > s[best]) best = e;
  }
  return best;
}

// Deepseek v3's group-limited choice: a group scores the sum of its two best experts; the experts
// outside the n_group_used best groups are excluded (-inf). At most 64 groups (read_hparams).
void mask_groups(const HParams& hp, float* select) {
  const int n_groups = hp.n_expert_groups, per_group = hp.n_expert / n_groups;
  float group_score[64];
  int32_t chosen[64];
  for (int g = 0; g < n_groups; ++g) {
    const float* s = select + g * per_group;
    int32_t top[2] = {best_not_taken(s, per_group, nullptr, 0), -1};
    top[1] = per_group > 1 ? best_not_taken(s, per_group, top, 1) : -1;
    group_score[g] = s[top[0]] + (top[1] >= 0 ? s[top[1]] : 0.0f);
  }
  for (int k = 0; k < hp.n_group_used; ++k) chosen[k] = best_not_taken(group_score, n_groups, chosen, k);
  for (int32_t g = 0; g < n_groups; ++g) {
    if (std::find(chosen, chosen + hp.n_group_used, g) != chosen + hp.n_group_used) continue;
    std::fill(select + g * per_group, select + (g + 1) * per_group, -std::numeric_limits<float>::infinity());
  }
}

// One token: logits [n_expert] (overwritten) -> its n_used experts and their weights.
void route(const MoeSpec& ms, const HParams& hp, const float* probs_bias, float* logits, float* select, int32_t* chosen,
           float* weight) {
  const int n_exp = hp.n_expert, n_used = hp.n_expert_used;
  float* p = logits;
  if (ms.weight_input) std::copy(p, p + n_exp, select);  // llama4 chooses by the raw logits
  switch (ms.gating) {
    case MoeGating::kSoftmax: softmax(p, n_exp); break;
    case MoeGating::kSigmoid:
      for (int e = 0; e < n_exp; ++e) p[e] = 1.0f / (1.0f + std::exp(-p[e]));
      break;
    case MoeGating::kSoftmaxAfterTopK: break;
  }
  // Experts are chosen by the (biased, group-masked) scores but weighted by the unbiased ones.
  if (!ms.weight_input) std::copy(p, p + n_exp, select);
  if (probs_bias != nullptr) add(select, probs_bias, n_exp);
  if (hp.n_expert_groups > 1) mask_groups(hp, select);
  for (int k = 0; k < n_used; ++k) {
    chosen[k] = best_not_taken(select, n_exp, chosen, k);
    weight[k] = p[chosen[k]];
  }
  if (ms.gating == MoeGating::kSoftmaxAfterTopK) softmax(weight, n_used);
  if (ms.norm_w) {
    float sum = 0;
    for (int k = 0; k < n_used; ++k) sum += weight[k];
    sum = std::max(sum, 6.103515625e-5f);  // llama.cpp's clamp: the smallest normal f16
    for (int k = 0; k < n_used; ++k) weight[k] /= sum;
  }
  if (ms.weights_scale != 0.0f && ms.weights_scale != 1.0f) {
    for (int k = 0; k < n_used; ++k) weight[k] *= ms.weights_scale;
  }
}

// gpt-oss's SwiGLU: gate clamped above at 7, up clamped to [-7, 7], gate * sigmoid(1.702 gate) * (up + 1).
void swiglu_oai(float* g, const float* u, int64_t count) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (int64_t i = 0; i < count; ++i) {
    const float x = std::min(g[i], kLimit);
    const float y = std::clamp(u[i], -kLimit, kLimit);
    g[i] = x / (1.0f + std::exp(kAlpha * -x)) * (y + 1.0f);
  }
}

// An expert's three biases (gpt-oss), or none.
struct ExpertBiases {
  const float* gate = nullptr;
  const float* up = nullptr;
  const float* down = nullptr;
};

// out[n, d] = down(act(x gate^T, x up^T)) for the n rows of x: one expert, or the shared expert.
void expert_ffn(ForwardState& st, ExpertAct act, const Tensor& w_gate, const Tensor& w_up,
                const Tensor& w_down, const ExpertBiases& b, const float* x, int64_t n, float* out) {
  OpContext& ops = st.ops;
  const int64_t ff = w_up.rows;
  float* gate = st.moe_gate.data();
  float* up = st.moe_up.data();
  const bool f16_gelu = st.numerics == Numerics::kLlamaCpp;
  if (act == ExpertAct::kGelu) {  // ungated: down(gelu(x up^T))
    matmul(ops, w_up, x, n, gate);
    if (b.up != nullptr) add_bias(gate, b.up, ff, n);
    f16_gelu ? gelu_f16(gate, n * ff) : gelu(gate, n * ff);
  } else if (same_activations(w_gate, w_up)) {
    const MatmulOutput outs[2] = {{&w_gate, gate, ff}, {&w_up, up, ff}};
    matmul_many(ops, outs, x, n);
  } else {
    matmul(ops, w_gate, x, n, gate);
    matmul(ops, w_up, x, n, up);
  }
  if (b.gate != nullptr && act != ExpertAct::kGelu) {
    add_bias(gate, b.gate, ff, n);
    add_bias(up, b.up, ff, n);
  }
  auto glu = [&](int64_t r0, int64_t r1) {
    float* g = gate + r0 * ff;
    const float* u = up + r0 * ff;
    const int64_t count = (r1 - r0) * ff;
    switch (act) {
      case ExpertAct::kSwiGlu: silu_mul(*ops.kernels, g, u, count); break;
      case ExpertAct::kGeGlu: f16_gelu ? gelu_mul_f16(g, u, count) : gelu_mul(g, u, count); break;
      case ExpertAct::kSwiGluOai: swiglu_oai(g, u, count); break;
      case ExpertAct::kGelu: break;  // done above
    }
  };
  if (act != ExpertAct::kGelu) parallel_rows(ops, n, ff * kGluCost, glu);
  matmul(ops, w_down, gate, n, out);
  if (b.down != nullptr) add_bias(out, b.down, w_down.rows, n);
}

// out += shared expert(h), times sigmoid(h . ffn_gate_inp_shexp) where the spec gates it.
void shared_expert(const Model& m, ForwardState& st, const LayerWeights& L, const float* h, int64_t n, float* out) {
  const int64_t d = m.hparams().n_embd;
  float* y = st.moe_out.data();
  expert_ffn(st, ExpertAct::kSwiGlu, L.ffn_gate_shexp, L.ffn_up_shexp, L.ffn_down_shexp, {}, h, n, y);
  for (int64_t t = 0; t < n; ++t) {
    float g = 1.0f;
    if (m.spec().experts.shared_gate) {
      const float* w = f32(L.ffn_gate_inp_shexp);
      float dot = 0;
      for (int64_t j = 0; j < d; ++j) dot += h[t * d + j] * w[j];
      g = 1.0f / (1.0f + std::exp(-dot));
    }
    float* o = out + t * d;
    const float* yt = y + t * d;
    for (int64_t j = 0; j < d; ++j) o[j] += g * yt[j];
  }
}

}  // namespace

int expert_ff(const ArchSpec& s, const HParams& hp) {
  if (s.experts.ff == ExpertFf::kNffAlways) return hp.n_ff;
  if (hp.n_ff_exp > 0) return hp.n_ff_exp;
  switch (s.experts.ff) {
    case ExpertFf::kNff: return hp.n_ff;
    case ExpertFf::kNffOverUsed: return hp.n_expert_used > 0 ? hp.n_ff / hp.n_expert_used : 0;
    case ExpertFf::kRequired: return 0;
    case ExpertFf::kNffAlways: return hp.n_ff;
  }
  return 0;
}

int shared_ff(const ArchSpec& s, const HParams& hp) {
  switch (s.experts.shared) {
    case SharedFf::kNone: return 0;
    case SharedFf::kShexpOrNff: return hp.n_ff_shexp > 0 ? hp.n_ff_shexp : hp.n_ff;
    case SharedFf::kIfShexpKey: return hp.n_ff_shexp;
    case SharedFf::kExpTimesCount: return expert_ff(s, hp) * hp.n_expert_shared;
    case SharedFf::kExpertFf: return expert_ff(s, hp);
  }
  return 0;
}

bool moe_layer(const ArchSpec& s, const HParams& hp, int l) {
  if (!s.moe || hp.n_expert <= 0) return false;
  if (s.experts.leading_dense && l < hp.n_layer_dense_lead) return false;
  if (s.experts.every_n_layers) return hp.n_moe_every > 0 && l % hp.n_moe_every == 1;
  return hp.n_moe_layer_step <= 1 || (l + 1) % hp.n_moe_layer_step == 0;
}

Status read_moe_keys(const gguf::GgufFile& f, const HParams& hp, MoeKeys keys, MoeSpec& ms) {
  const std::string p = hp.arch + ".";
  if (keys.scale) {
    OX_ASSIGN_OR_RETURN(ms.weights_scale, f.get_f32_or(p + "expert_weights_scale", ms.weights_scale));
  }
  if (keys.norm) {
    OX_ASSIGN_OR_RETURN(ms.norm_w, f.get_bool_or(p + "expert_weights_norm", ms.norm_w));
  }
  if (keys.gating == MoeKeys::kIgnored) return Status::ok();
  OX_ASSIGN_OR_RETURN(const uint32_t gating, f.get_u32_or(p + "expert_gating_func", 0));
  switch (gating) {  // llama_expert_gating_func_type
    case 0:
      if (keys.gating == MoeKeys::kRequired) {
        return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%sexpert_gating_func'", f.name().c_str(), p.c_str()));
      }
      return Status::ok();
    case 1: ms.gating = MoeGating::kSoftmax; return Status::ok();
    case 2: ms.gating = MoeGating::kSigmoid; return Status::ok();
    case 3: ms.gating = MoeGating::kSoftmaxAfterTopK; return Status::ok();
    default:
      return error(ErrorCode::kUnsupported, strfmt("%s: '%sexpert_gating_func' = %u is not supported",
                                                   f.name().c_str(), p.c_str(), gating));
  }
}

void moe_ffn(const Model& m, ForwardState& st, const LayerWeights& L, const float* h, int64_t n, float* out,
             const float* router_in) {
  const HParams& hp = m.hparams();
  const MoeSpec& ms = m.spec().experts;
  const int n_exp = hp.n_expert, n_used = hp.n_expert_used;
  const int64_t d = hp.n_embd;
  float* logits = st.router.data();    // [n, n_expert]
  int32_t* chosen = st.routed.data();  // [n, n_used]
  float* weight = st.route_w.data();   // [n, n_used]
  matmul(st.ops, L.ffn_gate_inp, router_in != nullptr ? router_in : h, n, logits);
  if (ms.expert_biases) add_bias(logits, f32(L.ffn_gate_inp_b), n_exp, n);
  for (int64_t t = 0; t < n; ++t) {
    route(ms, hp, f32(L.exp_probs_b), logits + t * n_exp, st.moe_scores.data(), chosen + t * n_used,
          weight + t * n_used);
  }

  std::fill(out, out + n * d, 0.0f);
  for (int32_t e = 0; e < n_exp; ++e) {
    // Gather the tokens routed to expert e, run them as one batch, scatter back weighted.
    int64_t count = 0;
    for (int64_t t = 0; t < n; ++t) {
      for (int k = 0; k < n_used; ++k) {
        if (chosen[t * n_used + k] != e) continue;
        st.members[static_cast<size_t>(count)] = static_cast<int32_t>(t * n_used + k);
        float* in = st.moe_in.data() + count * d;
        std::memcpy(in, h + t * d, sizeof(float) * static_cast<size_t>(d));
        if (ms.weight_input) scale(in, weight[t * n_used + k], d);
        ++count;
      }
    }
    if (count == 0) continue;
    ExpertBiases b;
    if (ms.expert_biases) {
      b = {f32(L.ffn_gate_exps_b) + e * L.ffn_gate_exps_b.cols, f32(L.ffn_up_exps_b) + e * L.ffn_up_exps_b.cols,
           f32(L.ffn_down_exps_b) + e * L.ffn_down_exps_b.cols};
    }
    Tensor gate = ms.fused_gate_up ? Tensor{} : L.ffn_gate_exps.matrix(e), up = L.ffn_up_exps.matrix(e);
    if (ms.fused_gate_up) {  // ffn_gate_up_exps: expert e's rows [gate | up]
      const int64_t ff = up.rows / 2;
      gate = row_slice(up, 0, ff);
      up = row_slice(up, ff, ff);
    }
    expert_ffn(st, ms.act, gate, up, L.ffn_down_exps.matrix(e), b, st.moe_in.data(), count, st.moe_out.data());
    for (int64_t i = 0; i < count; ++i) {
      const int32_t slot = st.members[static_cast<size_t>(i)];
      float w = ms.weight_input ? 1.0f : weight[slot];
      if (!L.ffn_down_exps_s.empty()) w *= f32(L.ffn_down_exps_s)[e];
      float* o = out + (slot / n_used) * d;
      const float* y = st.moe_out.data() + i * d;
      for (int64_t j = 0; j < d; ++j) o[j] += w * y[j];
    }
  }
  if (!L.ffn_down_shexp.empty()) shared_expert(m, st, L, h, n, out);
}

// Whether a tensor is a block's past the trunk's n_layer ("blk.N.*", N >= n_layer).
static bool past_trunk(const std::string& name, int n_layer) {
  if (name.rfind("blk.", 0) != 0) return false;
  int l = -1;
  std::from_chars(name.data() + 4, name.data() + name.size(), l);
  return l >= n_layer;
}

uint64_t decode_weight_bytes(const Model& m) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const bool tied = w.output.data == w.token_embd.data;
  uint64_t total = 0;
  for (const gguf::TensorInfo& t : m.file().tensors()) {
    if (hp.n_layer_nextn > 0 && past_trunk(t.name, hp.n_layer)) continue;  // NextN blocks: never run
    // Expert tensors by name as well as shape: deepseek2's attn_k_b / attn_v_b are 3-D per head.
    const bool experts = t.name.find("_exps") != std::string::npos;
    if (experts && t.dims.size() == 3 && t.dims[2] > 1 && hp.n_expert > 0 && t.dims[2] == static_cast<uint64_t>(hp.n_expert)) {
      total += t.n_bytes / static_cast<uint64_t>(hp.n_expert) * static_cast<uint64_t>(hp.n_expert_used);
    } else if (t.name == "token_embd.weight" && !tied) {
      total += w.token_embd.row_bytes;
    } else {
      total += t.n_bytes;
    }
  }
  return total;
}

}  // namespace ox
