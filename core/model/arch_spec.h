// ArchSpec: what sets one decoder-only transformer architecture apart from another, as data.
// Each architecture file (llama.cpp, qwen.cpp, gemma.cpp, phi.cpp, gpt.cpp) fills one in; the
// generic loader (decoder_load.cpp) and forward pass (decoder.cpp) read it.
#pragma once

#include <vector>

#include "core/ops/ops.h"

namespace ox {

enum class NormKind { kRms, kLayer };  // RMSNorm (weight) / LayerNorm (weight, optional bias)

// Feed-forward: silu(x Wgate) * (x Wup), gelu(x Wgate) * (x Wup), or ungated gelu(x Wup).
enum class FfnKind { kSwiGlu, kGeGlu, kGelu };

// How a block combines attention and feed-forward with the residual stream x:
//   kSequential:        x += attn(norm1(x)); x += ffn(norm2(x))
//   kParallel:          x += attn(norm1(x)) + ffn(norm1(x))      (one norm: phi2, falcon)
//   kParallelTwoNorms:  x += attn(norm1(x)) + ffn(norm2(x))      (gpt-neox)
enum class Residual { kSequential, kParallel, kParallelTwoNorms };

// Per-layer attention settings (sliding-window layers may use another rope base).
struct LayerAttention {
  int window = 0;  // > 0: each token sees only the last `window` positions (itself included)
  RopeParams rope;
};

struct ArchSpec {
  NormKind norm = NormKind::kRms;
  bool rope = true;  // false: learned absolute positions (position_embd) instead
  FfnKind ffn = FfnKind::kSwiGlu;
  Residual residual = Residual::kSequential;
  bool embd_scale = false;     // x = token_embd[t] * sqrt(n_embd) (gemma family)
  float attn_scale = 0.0f;     // multiplier of q.k; 0 means 1/sqrt(head_dim_k)
  // llama.cpp multiplies q by the scale before attention for some architectures; the same maths,
  // but q is rounded to f16 after scaling under Numerics::kLlamaCpp.
  bool scale_q_first = false;
  float attn_softcap = 0.0f;   // > 0: score = c * tanh(score / c)
  float final_softcap = 0.0f;  // > 0: logit = c * tanh(logit / c)

  // Tensor layout, for the loader (the forward pass only sees separate q/k/v and gate/up views).
  bool fused_qkv = false;      // attn_qkv.{weight,bias}: rows [q | k | v]
  bool fused_gate_up = false;  // ffn_up.weight: rows [gate | up] (phi3)
  bool qk_norm = false;        // attn_q_norm / attn_k_norm: RMSNorm of each head (qwen3, gemma3)
  bool post_norms = false;     // post_attention_norm / post_ffw_norm on sub-block outputs (gemma2/3)
  const char* ffn_norm_name = "ffn_norm";  // blk.L.<name>: the feed-forward's norm (falcon-40B: attn_norm_2)

  std::vector<LayerAttention> layers;  // [n_layer], filled by set_layer_attention()
};

}  // namespace ox
