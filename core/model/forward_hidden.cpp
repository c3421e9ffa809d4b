// Embedding passes: Model::forward_hidden (every sequence of the batch whole, packed into one
// cache sequence, the final hidden states out instead of logits) and rank pooling's
// classification head (llama.cpp's build_pooling).
#include <algorithm>
#include <cmath>

#include "core/model/decoder_load.h"

namespace ox {

bool Model::can_embed() const { return forward_ == &forward_decoder && spec_.recurrent == Recurrent::kNone; }

Status Model::forward_hidden(ForwardState& st, std::span<const BatchToken> batch, float* hidden) const {
  if (!can_embed()) {
    return error(ErrorCode::kUnsupported, strfmt("%s: architecture '%s' cannot compute embeddings in oxidize yet",
                                                 file_->name().c_str(), hparams_.arch.c_str()));
  }
  const int64_t n = static_cast<int64_t>(batch.size());
  if (n < 1 || n > st.max_batch || n > st.kv.n_ctx()) {
    return error(ErrorCode::kInvalidArgument, strfmt("an embedding batch of %lld tokens: it must hold 1 to %d",
                                                     static_cast<long long>(n), std::min(st.max_batch, st.kv.n_ctx())));
  }
  // Sequences whole and in order: each starts at position 0 and continues the previous token's.
  for (int64_t t = 0; t < n; ++t) {
    const BatchToken& b = batch[static_cast<size_t>(t)];
    if (b.token < 0 || b.token >= hparams_.n_vocab) {
      return error(ErrorCode::kInvalidArgument, strfmt("batch token %lld: id %d is out of range (vocabulary has %d tokens)",
                                                       static_cast<long long>(t), b.token, hparams_.n_vocab));
    }
    const BatchToken* prev = t > 0 ? &batch[static_cast<size_t>(t - 1)] : nullptr;
    const bool continues = prev != nullptr && prev->seq == b.seq;
    if (b.pos != (continues ? prev->pos + 1 : 0)) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("batch token %lld: an embedding pass takes each sequence whole from position 0 (got "
                          "position %lld of sequence %d)", static_cast<long long>(t), static_cast<long long>(b.pos), b.seq));
    }
    if (!spec_.rope && !weights_.position_embd.empty() && b.pos >= hparams_.n_ctx_train) {
      return error(ErrorCode::kOutOfRange, strfmt("batch token %lld: position %lld is past the %d learned positions",
                                                  static_cast<long long>(t), static_cast<long long>(b.pos), hparams_.n_ctx_train));
    }
  }
  st.kv.make_room(0, 0, n);
  st.hidden_output = true;
  // An encoder's products may sum in any order (KernelTable::gemm_wide): no one-token decode of it
  // has to agree with this pass bit for bit. A decoder's embedding pass keeps its decode's bits.
  st.ops.order_free = !spec_.causal_attention;
  forward_(*this, st, batch, hidden);
  st.ops.order_free = false;
  st.hidden_output = false;
  st.kv.set_n_pos(0, 0);  // nothing is kept
  return Status::ok();
}

int64_t Model::classify(OpContext& ops, const float* pooled, float* scratch, float* out, bool f16_gelu) const {
  const ModelWeights& w = weights_;
  const int64_t d = hparams_.n_embd;
  const float* cur = pooled;
  int64_t len = d;
  if (!w.cls.empty()) {  // tanh(cls x + b)
    matmul(ops, w.cls, cur, 1, scratch);
    if (!w.cls_b.empty()) add_bias(scratch, reinterpret_cast<const float*>(w.cls_b.data), w.cls.rows, 1);
    if (spec_.cls_head.gelu) {  // modern-bert
      f16_gelu ? gelu_f16(scratch, w.cls.rows) : gelu(scratch, w.cls.rows);
    } else {
      for (int64_t i = 0; i < w.cls.rows; ++i) scratch[i] = std::tanh(scratch[i]);
    }
    if (!w.cls_norm.empty()) {
      layer_norm(scratch, reinterpret_cast<const float*>(w.cls_norm.data), nullptr, w.cls.rows, 1, hparams_.norm_eps,
                 scratch);
    }
    cur = scratch;
    len = w.cls.rows;
  }
  if (!w.cls_out.empty()) {
    matmul(ops, w.cls_out, cur, 1, out);
    if (!w.cls_out_b.empty()) add_bias(out, reinterpret_cast<const float*>(w.cls_out_b.data), w.cls_out.rows, 1);
    len = w.cls_out.rows;
  } else {
    for (int64_t i = 0; i < len; ++i) out[i] = cur[i];
  }
  if (spec_.cls_head.softmax) {  // Qwen3-Reranker: p(yes), p(no), as ggml_soft_max (f32 sums)
    float max = out[0];
    for (int64_t i = 1; i < len; ++i) max = std::max(max, out[i]);
    double sum = 0;
    for (int64_t i = 0; i < len; ++i) sum += out[i] = std::exp(out[i] - max);
    for (int64_t i = 0; i < len; ++i) out[i] = static_cast<float>(out[i] / sum);
  }
  return len;
}

}  // namespace ox
