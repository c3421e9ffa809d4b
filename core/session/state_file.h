// Saved session state: the bytes Session::save_state writes and Session::load_state reads (the CLI's
// --prompt-cache file, the browser's engine.saveState()). All fields little-endian:
//
//   offset  bytes           field
//   0       8               magic "OXSTATE\0"
//   8       4   u32         format version (kStateFormatVersion)
//   12      4   u32         flags: bit 0 = the logits of the last position follow the token ids
//   16      8   u64         model fingerprint (model_fingerprint below)
//   24      4   u32         n_ctx of the session it was saved from (informative)
//   28      4   u32         K cache type (GGUF type id: 1 = f16, 8 = q8_0, ...)
//   32      4   u32         V cache type
//   36      4   u32         n_tokens
//   40      4   u32         window_first: the first position the sliding-window layers' rows hold
//                           (0 for models without; <= n_tokens)
//   44      4 * n_tokens    token ids (i32)
//   ...     4 * n_vocab     logits (f32), if flag bit 0
//   ...                     per layer: K rows of positions [0, n_tokens), then V rows (the cache's
//                           own row bytes, KvCache::ranges); a sliding-window layer's rows of
//                           positions [window_first, n_tokens) only
//   ...                     models with recurrent layers (mamba, hybrids): per layer, the sequence's
//                           recurrent state, conv then ssm floats (f32; RecurrentState::ranges)
// Version 2 added the recurrent state (a transformer's state is the same bytes as in version 1);
// version 3 window_first (sliding-window layers keep only their window).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gguf/gguf.h"

namespace ox {

inline constexpr char kStateMagic[8] = {'O', 'X', 'S', 'T', 'A', 'T', 'E', '\0'};
inline constexpr uint32_t kStateFormatVersion = 3;
inline constexpr size_t kStateHeaderBytes = 44;
inline constexpr uint32_t kStateHasLogits = 1u;

// Names the model a state belongs to: 64-bit FNV-1a over general.architecture and, in file order,
// every tensor's name, GGUF type and dims. Weights converted at load to an internal layout
// (KernelTable::relayout) count as their file type, so native and wasm builds agree.
uint64_t model_fingerprint(const gguf::GgufFile& file);

}  // namespace ox
