// Pooling of per-token hidden states into one vector per sequence, and the normalisations
// llama.cpp applies to embeddings (common_embd_normalize): the maths of the embedding path, apart
// from the model and the session.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/base/status.h"

namespace ox {

// llama.cpp's llama_pooling_type, with its numbering (the GGUF key <arch>.pooling_type holds these
// values): kUnspecified (-1) means "the model's default".
enum class Pooling : int8_t { kUnspecified = -1, kNone = 0, kMean = 1, kCls = 2, kLast = 3, kRank = 4 };

// "none", "mean", "cls", "last", "rank" (llama.cpp's --pooling spellings); "unspecified".
const char* pooling_name(Pooling p);
// Parses a --pooling value; an error naming `what` and the valid names otherwise.
Result<Pooling> parse_pooling(std::string_view name, std::string_view what);
// A GGUF pooling_type value (0..4) as a Pooling; an error naming `what` otherwise.
Result<Pooling> pooling_from_gguf(int64_t value, std::string_view what);

// One sequence's pooled vector from its n_tokens rows of n_embd hidden states (row 0 its first
// token): kMean averages them, kCls (and kRank's input) takes the first, kLast the last. kNone and
// kUnspecified are the caller's bug (checked).
void pool_rows(Pooling p, const float* rows, int64_t n_tokens, int64_t n_embd, float* out);

// llama.cpp's embedding normalisations (common_embd_normalize), sums in double as it does:
inline constexpr int kNormalizeNone = -1;      // as computed
inline constexpr int kNormalizeMaxAbs = 0;     // scaled so the largest |x| is 32760 (int16 range)
inline constexpr int kNormalizeTaxicab = 1;    // sum |x| = 1
inline constexpr int kNormalizeEuclidean = 2;  // sum x^2 = 1 (the default)
// Any other p > 2: the p-norm is 1. A zero vector stays zero. Values < -1 are the caller's to refuse
// (check_normalize).
void normalize_embedding(const float* in, float* out, int64_t n, int norm);
// OK for -1, 0, 1, 2 and p > 2; an error naming `what` for anything below -1.
Status check_normalize(int norm, std::string_view what);

// Cosine similarity as llama.cpp's common_embd_similarity_cos: two zero vectors are 1, one is 0.
float cosine_similarity(const float* a, const float* b, int64_t n);

}  // namespace ox
