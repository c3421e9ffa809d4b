// NEON (no SDOT) tile kernels of the K-quants and IQ4_XS; bodies in neon/gemm_kquant_impl.h.
#include "kernels/neon/gemm_kquant_impl.h"
#include "kernels/neon/neon.h"

namespace ox::kernels::neon {

using neon_common::DotNeon;
using neon_common::gemm_kquant;

void gemm_q2_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadQ2_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q3_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadQ3_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q4_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadQ4_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadQ5_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q6_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadQ6_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_iq4_xs_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys) {
  gemm_kquant<DotNeon, neon_common::LoadIQ4_XS>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace ox::kernels::neon
