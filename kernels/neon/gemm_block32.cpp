// NEON (no SDOT) tile kernels of the 32-element block formats; bodies in neon/gemm_block32_impl.h.
#include "kernels/neon/gemm_block32_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;
using neon_common::gemm_block32;

void gemm_q4_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadQ4_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q4_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadQ4_1>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadQ5_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_1_q8_1(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadQ5_1>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q8_0_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadQ8_0>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_iq4_nl_q8_0(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys) {
  gemm_block32<DotNeon, neon_common::LoadIQ4_NL>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace ox::kernels::neon
