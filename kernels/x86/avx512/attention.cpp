// AVX-512 kernels of attention over an F16 KV cache, as the AVX2 ones (kernels/x86/avx2/attention.cpp)
// with 16 lanes: gemm[F16] in a 4 x 4 tile of accumulators (kernels/x86/attention_tile.h) and
// attn_accumulate with 64 accumulators in registers.
// References: vec_dot_f16_f16 / attn_accumulate_ref; only the order of the additions differs.
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx512/avx512.h"
#include "kernels/x86/avx512/util.h"
#include "kernels/x86/attention_tile.h"

namespace ox::kernels::avx512 {
namespace {

struct Vec : F32x16 {
  static Reg load_f16(const uint16_t* p) { return _mm512_cvtph_ps(load256(p)); }
};

float fp16_of(uint16_t h) { return fp16(h); }

}  // namespace

void gemm_f16(int64_t n, const uint8_t* w, uint64_t w_stride, int64_t n_rows, const uint8_t* a, uint64_t a_stride,
              int64_t n_tokens, float* y, int64_t y_stride) {
  x86::f16_gemm<Vec, 4>(n, w, w_stride, n_rows, a, a_stride, n_tokens, y, y_stride, fp16_of);
}

void attn_accumulate(float* acc, const float* w, const float* v, int64_t v_stride, int64_t n, int64_t dv) {
  const int64_t done = x86::accumulate<Vec>(acc, w, v, v_stride, n, dv);
  if (done < dv) avx2::attn_accumulate(acc + done, w, v + done, v_stride, n, dv - done);  // the last dv % 16
}

}  // namespace ox::kernels::avx512
