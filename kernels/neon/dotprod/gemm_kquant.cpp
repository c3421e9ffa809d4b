// SDOT (armv8.2-a +dotprod) tile kernels of the K-quants and IQ4_XS: the lane tiles of
// dotprod/gemm_lanes.h for groups of 4 tokens, neon/gemm_kquant_impl.h's for the rest.
#include "kernels/neon/dotprod/dotprod.h"
#include "kernels/neon/dotprod/gemm_lanes.h"

namespace ox::kernels::neon_dotprod {

void gemm_q2_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadQ2_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q3_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadQ3_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q4_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadQ4_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q5_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadQ5_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_q6_k_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                    int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadQ6_K>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}
void gemm_iq4_xs_q8_k(int64_t n, const uint8_t* w, uint64_t ws, int64_t n_rows, const uint8_t* a, uint64_t as,
                      int64_t n_tokens, float* y, int64_t ys) {
  gemm_q8_k<neon_common::LoadIQ4_XS>(n, w, ws, n_rows, a, as, n_tokens, y, ys);
}

}  // namespace ox::kernels::neon_dotprod
