// Sizes and checks of state-space layers, and the pieces every recurrent forward pass shares.
#include "core/model/recurrent.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ox {

RecurrentDims recurrent_dims(const ArchSpec& spec, const HParams& hp) {
  const int64_t d_inner = hp.ssm_d_inner, d_state = hp.ssm_d_state, keep = hp.ssm_d_conv - 1;
  const int64_t dt_rank = hp.ssm_dt_rank, n_group = hp.ssm_n_group;
  RecurrentDims r;
  switch (spec.recurrent) {
    case Recurrent::kNone:
      break;
    case Recurrent::kMamba:
      r.conv = keep * d_inner;
      r.ssm = d_state * d_inner;
      // xz, conv output, x_db, dt's input, dt, y
      r.scratch = 2 * d_inner + d_inner + (dt_rank + 2 * d_state) + dt_rank + d_inner + d_inner;
      break;
    case Recurrent::kMamba2: {
      const int64_t conv_dim = d_inner + 2 * n_group * d_state;
      r.conv = keep * conv_dim;
      r.ssm = d_state * d_inner;
      // z|xBC|dt, conv output, y
      r.scratch = (d_inner + conv_dim + dt_rank) + conv_dim + d_inner;
      break;
    }
    case Recurrent::kRwkv7: {
      const int64_t d = hp.n_embd;
      r.conv = 2 * d;                   // the token shifts of the time mix and the channel mix
      r.ssm = d * hp.wkv_head_size;     // a head_size x head_size state per head
      const int64_t lora = std::max({hp.n_lora_decay, hp.n_lora_iclr, hp.n_lora_value_res_mix, hp.n_lora_gate});
      // v_first, x_prev, 6 mixes, r w k v a g kk, the wkv output, a low-rank temporary
      r.scratch = 16 * d + lora;
      break;
    }
    case Recurrent::kDeltaNet: {
      const int64_t conv_dim = d_inner + 2 * n_group * d_state;  // q | k | v
      const int64_t n_v_head = dt_rank, head_v = d_inner / std::max<int64_t>(1, n_v_head);
      r.conv = keep * conv_dim;
      r.ssm = d_inner * head_v;  // an S x S matrix per value head
      // q k v, their convolution, the gate z, beta, alpha (decay), the output; attention layers: q|gate
      r.scratch = 2 * conv_dim + 2 * d_inner + 2 * n_v_head + 2 * int64_t{hp.n_head} * hp.head_dim_k;
      break;
    }
    case Recurrent::kShortConv:
      r.conv = int64_t{hp.shortconv_l_cache - 1} * hp.n_embd;
      // b | c | x, b * x, the convolution's output
      r.scratch = 5 * int64_t{hp.n_embd};
      break;
  }
  return r;
}

Status check_ssm_hparams(const gguf::GgufFile& file, const HParams& hp, Recurrent mixer) {
  const std::string p = hp.arch + ".ssm.";
  auto need = [&](int v, const char* key) -> Status {
    if (v > 0) return Status::ok();
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: missing or zero metadata key '%s%s'", file.name().c_str(), p.c_str(), key));
  };
  OX_TRY(need(hp.ssm_d_conv, "conv_kernel"));
  OX_TRY(need(hp.ssm_d_inner, "inner_size"));
  OX_TRY(need(hp.ssm_d_state, "state_size"));
  OX_TRY(need(hp.ssm_dt_rank, "time_step_rank"));
  if (mixer == Recurrent::kMamba && hp.ssm_d_inner != 2 * hp.n_embd) {
    // llama.cpp's limit too (src/models/mamba.cpp)
    return error(ErrorCode::kUnsupported, strfmt("%s: '%sinner_size' %d is not 2 x embedding_length (%d), the only "
                                                 "expansion factor Mamba models are run with",
                                                 file.name().c_str(), p.c_str(), hp.ssm_d_inner, hp.n_embd));
  }
  if (mixer == Recurrent::kMamba2) {
    OX_TRY(need(hp.ssm_n_group, "group_count"));
    if (hp.ssm_d_inner % hp.ssm_dt_rank != 0 || hp.ssm_d_inner % hp.ssm_n_group != 0 ||
        hp.ssm_dt_rank % hp.ssm_n_group != 0) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("%s: '%sinner_size' %d must be a multiple of the head count '%stime_step_rank' %d, which "
                          "must be a multiple of '%sgroup_count' %d",
                          file.name().c_str(), p.c_str(), hp.ssm_d_inner, p.c_str(), hp.ssm_dt_rank, p.c_str(),
                          hp.ssm_n_group));
    }
  }
  return Status::ok();
}

void reset_started_sequences(ForwardState& st, std::span<const SeqRun> runs) {
  for (const SeqRun& r : runs) {
    if (r.pos0 == 0) st.kv.rs().clear(r.seq);
  }
}

void output_logits(const Model& m, ForwardState& st, std::span<const BatchToken> batch, float* x, float* logits) {
  const HParams& hp = m.hparams();
  const ModelWeights& w = m.weights();
  const int64_t d = hp.n_embd;
  int64_t rows = 0;
  for (size_t t = 0; t < batch.size(); ++t) {
    if (!batch[t].logits) continue;
    if (rows != static_cast<int64_t>(t)) std::memcpy(x + rows * d, x + t * d, sizeof(float) * static_cast<size_t>(d));
    ++rows;
  }
  if (rows == 0) return;
  float* h = st.h.data();
  const float* norm_w = reinterpret_cast<const float*>(w.output_norm.data);
  if (m.spec().norm == NormKind::kRms) {
    rms_norm(x, norm_w, d, rows, hp.rms_eps, h);
  } else {
    const float* norm_b = w.output_norm_b.empty() ? nullptr : reinterpret_cast<const float*>(w.output_norm_b.data);
    layer_norm(x, norm_w, norm_b, d, rows, hp.norm_eps, h);
  }
  matmul(st.ops, w.output, h, rows, logits);
  if (!w.output_b.empty()) add_bias(logits, reinterpret_cast<const float*>(w.output_b.data), hp.n_vocab, rows);
  if (m.spec().final_softcap > 0) {
    const float c = m.spec().final_softcap;
    for (int64_t i = 0; i < rows * hp.n_vocab; ++i) logits[i] = c * std::tanh(logits[i] / c);
  }
}

}  // namespace ox
