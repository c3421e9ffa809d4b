// AVX2 primitives of to_float for the quantized KV cache types (kernels/kv_to_float_impl.h): a
// block's 32 values in one vector, widened to i32 and converted eight at a time.
#include "kernels/kv_to_float_impl.h"
#include "kernels/x86/avx2/avx2.h"
#include "kernels/x86/avx2/util.h"

namespace ox::kernels::avx2 {
namespace {

struct Avx2 {
  using Values = __m256i;
  static float fp16(uint16_t h) { return avx2::fp16(h); }
  static Values bytes(const int8_t* qs) { return load256(qs); }
  static Values nibbles(const uint8_t* qs) { return unpack_nibbles(qs); }
  static Values fifth_bits(const uint8_t* qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, sizeof(bits));
    return _mm256_and_si256(expand_bits(bits), _mm256_set1_epi8(0x10));
  }
  static Values add(Values v, int8_t k) { return _mm256_add_epi8(v, _mm256_set1_epi8(k)); }
  static Values either(Values a, Values b) { return _mm256_or_si256(a, b); }
  static Values lookup(Values i) { return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(kIQ4NLValues)), i); }
  template <bool kMin>
  static void store(Values v, float d, float m, float* y) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    const __m128i quarters[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int k = 0; k < 4; ++k) {
      __m256 f = _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(quarters[k])));
      if constexpr (kMin) f = _mm256_add_ps(f, vm);
      _mm256_storeu_ps(y + 8 * k, f);
    }
  }
};

}  // namespace

void patch_kv_to_float(KernelTable& t) { kv_to_float::install<Avx2>(t); }

}  // namespace ox::kernels::avx2
