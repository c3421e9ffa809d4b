// gemma3n's shapes that llama.cpp fixes instead of reading them from the file (its
// llama_hparams defaults and the gemma3n graph's constants): the plan, the configure hook and the
// forward pass (forward_gemma3n.cpp) share them.
#pragma once

namespace ox::gemma3n {

inline constexpr int kAltup = 4;                 // AltUp streams (the first one active)
inline constexpr int kLaurelRank = 64;           // LAuReL's low rank
inline constexpr int kPerLayer = 256;            // per-layer input width
inline constexpr int kSparseLayers = 10;         // the first layers' feed-forwards are sparse
inline constexpr float kSparsityStdMul = 1.6448533535003662f;  // normal quantile 0.95: the cut-off in stds
inline constexpr int kFirstSharedKvLayer = 20;   // layers from here on reuse layer 18's or 19's K/V

}  // namespace ox::gemma3n
