// AVX2 to_float of the quantized KV cache types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL): what
// attention reads of a quantized V cache, one tile of positions at a time. Each block's 32 values
// become bytes in element order, then y = d * v (+ m): an exact int -> float conversion, one
// rounded product and, for the formats with a minimum, one rounded sum, as the scalar reference
// computes them (no FMA: -ffp-contract=off there), so the bits are the reference's.
#include "core/quant/blocks.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

// y[0, 32) = d * v[i] (+ m) for the 32 signed bytes of v.
template <bool kMin>
inline void store_block(__m256i v, float d, float m, float* y) {
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  const __m128i quarters[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int k = 0; k < 4; ++k) {
    __m256 f = _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(quarters[k])));
    if constexpr (kMin) f = _mm256_add_ps(f, vm);
    _mm256_storeu_ps(y + 8 * k, f);
  }
}

// fn(block) -> {values, d, m} for each block of a row of n values.
template <bool kMin, typename Block, typename Fn>
inline void blocks_to_float(const void* vx, float* y, int64_t n, Fn values) {
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / 32; ++b) {
    float d = 0.0f, m = 0.0f;
    const __m256i v = values(x[b], &d, &m);
    store_block<kMin>(v, d, m, y + 32 * b);
  }
}

// The fifth bits of a Q5 block, 0x10 in byte i where bit i of qh is set.
inline __m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof(bits));
  return _mm256_and_si256(expand_bits(bits), _mm256_set1_epi8(0x10));
}

void to_float_q8_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ8_0>(vx, y, n, [](const BlockQ8_0& b, float* d, float*) {
    *d = fp16(b.d);
    return load256(b.qs);
  });
}

void to_float_q4_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ4_0>(vx, y, n, [](const BlockQ4_0& b, float* d, float*) {
    *d = fp16(b.d);
    return _mm256_sub_epi8(unpack_nibbles(b.qs), _mm256_set1_epi8(8));
  });
}

void to_float_q4_1(const void* vx, float* y, int64_t n) {
  blocks_to_float<true, BlockQ4_1>(vx, y, n, [](const BlockQ4_1& b, float* d, float* m) {
    *d = fp16(b.d);
    *m = fp16(b.m);
    return unpack_nibbles(b.qs);
  });
}

void to_float_q5_0(const void* vx, float* y, int64_t n) {
  blocks_to_float<false, BlockQ5_0>(vx, y, n, [](const BlockQ5_0& b, float* d, float*) {
    *d = fp16(b.d);
    return _mm256_sub_epi8(_mm256_or_si256(unpack_nibbles(b.qs), fifth_bits(b.qh)), _mm256_set1_epi8(16));
  });
}

void to_float_q5_1(const void* vx, float* y, int64_t n) {
  blocks_to_float<true, BlockQ5_1>(vx, y, n, [](const BlockQ5_1& b, float* d, float* m) {
    *d = fp16(b.d);
    *m = fp16(b.m);
    return _mm256_or_si256(unpack_nibbles(b.qs), fifth_bits(b.qh));
  });
}

void to_float_iq4_nl(const void* vx, float* y, int64_t n) {
  const __m256i table = _mm256_broadcastsi128_si256(load128(kIQ4NLValues));
  blocks_to_float<false, BlockIQ4_NL>(vx, y, n, [&](const BlockIQ4_NL& b, float* d, float*) {
    *d = fp16(b.d);
    return _mm256_shuffle_epi8(table, unpack_nibbles(b.qs));
  });
}

}  // namespace

void patch_kv_to_float(KernelTable& t) {
  auto set = [&](DType type, ToFloatFn fn) { t.to_float[static_cast<uint32_t>(type)] = fn; };
  set(DType::Q8_0, to_float_q8_0);
  set(DType::Q4_0, to_float_q4_0);
  set(DType::Q4_1, to_float_q4_1);
  set(DType::Q5_0, to_float_q5_0);
  set(DType::Q5_1, to_float_q5_1);
  set(DType::IQ4_NL, to_float_iq4_nl);
}

}  // namespace ox::kernels::avx2
