// SDOT (armv8.2-a +dotprod) tile kernels of the 32-element block formats: the lane tiles of
// dotprod/gemm_lanes.h for groups of 4 tokens, neon/gemm_block32_impl.h's for the rest.
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/dotprod/gemm_lanes.h"
#include "kernels/neon/dotprod/sdot.h"

namespace ox::kernels::neon_dotprod {
namespace {

template <typename Load>
void gemm_block32(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                  int64_t n_tokens, float* y, int64_t ys) {
  const int64_t nb = n / 32;
  gemm_lanes(Block32LaneTile<Load, kLaneRows>{nb}, Block32LaneTile<Load, 4>{nb},
             neon_common::Block32Tile<DotSdot, Load>{nb}, w, ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace

void gemm_q4_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadQ4_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q4_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadQ4_1>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadQ5_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadQ5_1>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q8_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadQ8_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_iq4_nl_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<neon_common::LoadIQ4_NL>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace ox::kernels::neon_dotprod
