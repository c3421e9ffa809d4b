// Pooling and embedding normalisation, as llama.cpp computes them (llama-graph.cpp's build_pooling,
// common.cpp's common_embd_normalize and common_embd_similarity_cos).
#include "core/ops/pooling.h"

#include <cmath>
#include <cstring>

namespace ox {
namespace {

struct PoolingName {
  Pooling p;
  const char* name;
};
constexpr PoolingName kPoolingNames[] = {
    {Pooling::kNone, "none"}, {Pooling::kMean, "mean"}, {Pooling::kCls, "cls"},
    {Pooling::kLast, "last"}, {Pooling::kRank, "rank"},
};

}  // namespace

const char* pooling_name(Pooling p) {
  for (const PoolingName& n : kPoolingNames) {
    if (n.p == p) return n.name;
  }
  return "unspecified";
}

Result<Pooling> parse_pooling(std::string_view name, std::string_view what) {
  for (const PoolingName& n : kPoolingNames) {
    if (name == n.name) return n.p;
  }
  return error(ErrorCode::kInvalidArgument, strfmt("%.*s: unknown pooling type '%.*s' (none, mean, cls, last, rank)",
                                                   static_cast<int>(what.size()), what.data(),
                                                   static_cast<int>(name.size()), name.data()));
}

Result<Pooling> pooling_from_gguf(int64_t value, std::string_view what) {
  if (value >= 0 && value <= static_cast<int64_t>(Pooling::kRank)) return static_cast<Pooling>(value);
  if (value == -1) return Pooling::kUnspecified;
  return error(ErrorCode::kInvalidFile, strfmt("%.*s: pooling type %lld is not one of 0..4 (none, mean, cls, last, rank)",
                                               static_cast<int>(what.size()), what.data(), static_cast<long long>(value)));
}

void pool_rows(Pooling p, const float* rows, int64_t n_tokens, int64_t n_embd, float* out) {
  OX_CHECK(n_tokens > 0);
  switch (p) {
    case Pooling::kMean: {
      // llama.cpp multiplies the transposed rows by a column of 1/n: sum(x * (1/n)), in f32.
      const float inv = 1.0f / static_cast<float>(n_tokens);
      for (int64_t i = 0; i < n_embd; ++i) out[i] = 0.0f;
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* r = rows + t * n_embd;
        for (int64_t i = 0; i < n_embd; ++i) out[i] += r[i] * inv;
      }
      return;
    }
    case Pooling::kCls:
    case Pooling::kRank: std::memcpy(out, rows, sizeof(float) * static_cast<size_t>(n_embd)); return;
    case Pooling::kLast:
      std::memcpy(out, rows + (n_tokens - 1) * n_embd, sizeof(float) * static_cast<size_t>(n_embd));
      return;
    case Pooling::kNone:
    case Pooling::kUnspecified: OX_CHECK(false && "pool_rows: nothing to pool"); return;
  }
}

void normalize_embedding(const float* in, float* out, int64_t n, int norm) {
  double sum = 0.0;
  switch (norm) {
    case kNormalizeNone: sum = 1.0; break;
    case kNormalizeMaxAbs:
      for (int64_t i = 0; i < n; ++i) sum = std::max(sum, static_cast<double>(std::fabs(in[i])));
      sum /= 32760.0;
      break;
    case kNormalizeEuclidean:
      for (int64_t i = 0; i < n; ++i) sum += in[i] * in[i];  // f32 products, as llama.cpp
      sum = std::sqrt(sum);
      break;
    default:  // p-norm (taxicab is p = 1)
      for (int64_t i = 0; i < n; ++i) sum += std::pow(std::fabs(in[i]), norm);
      sum = std::pow(sum, 1.0 / norm);
      break;
  }
  const float scale = sum > 0.0 ? static_cast<float>(1.0 / sum) : 0.0f;
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

Status check_normalize(int norm, std::string_view what) {
  if (norm >= kNormalizeNone) return Status::ok();
  return error(ErrorCode::kInvalidArgument,
               strfmt("%.*s: normalisation %d is not one of -1 (none), 0 (max-abs int16), 1 (taxicab), "
                      "2 (euclidean) or p > 2 (p-norm)",
                      static_cast<int>(what.size()), what.data(), norm));
}

float cosine_similarity(const float* a, const float* b, int64_t n) {
  double sum = 0.0, sum_a = 0.0, sum_b = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += a[i] * b[i];
    sum_a += a[i] * a[i];
    sum_b += b[i] * b[i];
  }
  if (sum_a == 0.0 || sum_b == 0.0) return sum_a == 0.0 && sum_b == 0.0 ? 1.0f : 0.0f;
  return static_cast<float>(sum / (std::sqrt(sum_a) * std::sqrt(sum_b)));
}

}  // namespace ox
