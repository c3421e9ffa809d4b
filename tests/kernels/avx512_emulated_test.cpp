// Runs the AVX-512 kernel sources through SIMDe's portable emulation of the AVX-512 intrinsics
// (libsimde-dev), so the whole kernel suite checks their logic on x86 machines without AVX-512,
// such as this project's development and CI machines. Where the CPU has AVX-512 the real table
// is also tested natively (kernels_test.cpp). Without SIMDe headers this file adds no tests.
#if defined(__x86_64__) && __has_include(<simde/x86/avx512.h>)

// GCC notes that __m256 / __m512 values passed without -mavx / -mavx512f use another ABI: true and
// harmless here, every such function is internal to this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#include <immintrin.h>  // the real declarations first: SIMDe's aliases then rename later uses

#include <cstring>

#include "core/quant/traits.h"

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>

// Intrinsics SIMDe 0.7.4 lacks, written lane by lane (exact by construction: int -> float and
// fp16 -> float conversions are exact or round to nearest even like the hardware; masked loads
// and stores touch only the selected lanes, as the hardware's fault suppression guarantees).
namespace ox::kernels::emu {
template <typename To, typename From>
inline To bits(const From& v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &v, sizeof(out));
  return out;
}
struct F16 {
  float v[16];
};
struct I16 {
  int32_t v[16];
};
struct U16x16 {
  uint16_t v[16];
};
struct U16x32 {
  uint16_t v[32];
};
inline simde__m512i mulhi_epu16(simde__m512i a, simde__m512i b) {
  const U16x32 x = bits<U16x32>(a), y = bits<U16x32>(b);
  U16x32 out;
  for (int i = 0; i < 32; ++i) out.v[i] = static_cast<uint16_t>((static_cast<uint32_t>(x.v[i]) * y.v[i]) >> 16);
  return bits<simde__m512i>(out);
}
inline simde__m512 cvtepi32_ps(simde__m512i a) {
  const I16 in = bits<I16>(a);
  F16 out;
  for (int i = 0; i < 16; ++i) out.v[i] = static_cast<float>(in.v[i]);
  return bits<simde__m512>(out);
}
inline simde__m512i cvtepu16_epi32(simde__m256i a) {
  const U16x16 in = bits<U16x16>(a);
  I16 out;
  for (int i = 0; i < 16; ++i) out.v[i] = in.v[i];
  return bits<simde__m512i>(out);
}
inline simde__m512 cvtph_ps(simde__m256i a) {
  const U16x16 in = bits<U16x16>(a);
  F16 out;
  for (int i = 0; i < 16; ++i) out.v[i] = fp16_to_f32(in.v[i]);
  return bits<simde__m512>(out);
}
inline simde__m512 maskz_loadu_ps(uint16_t k, const void* p) {
  F16 out{};
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(&out.v[i], static_cast<const char*>(p) + 4 * i, 4);
  }
  return bits<simde__m512>(out);
}
inline void mask_storeu_ps(void* p, uint16_t k, simde__m512 v) {
  const F16 in = bits<F16>(v);
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(static_cast<char*>(p) + 4 * i, &in.v[i], 4);
  }
}
inline simde__m256i maskz_loadu_epi16(uint16_t k, const void* p) {
  U16x16 out{};
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(&out.v[i], static_cast<const char*>(p) + 2 * i, 2);
  }
  return bits<simde__m256i>(out);
}
// SIMDe 0.7.4 returns a where b is 0; the instruction gives 0 (the IQ1 decoders multiply by
// codebook values -1, 0, 1 with it).
inline simde__m256i sign_epi8(simde__m256i a, simde__m256i b) {
  int8_t av[32], bv[32], out[32];
  std::memcpy(av, &a, 32);
  std::memcpy(bv, &b, 32);
  for (int i = 0; i < 32; ++i) out[i] = static_cast<int8_t>(bv[i] < 0 ? -av[i] : bv[i] == 0 ? 0 : av[i]);
  return bits<simde__m256i>(out);
}
// BMI2 (the i-quant unpacking, kernels/x86/avx2/iq_util.h): bit by bit over the mask's set bits.
inline uint64_t pdep_u64(uint64_t src, uint64_t mask) {
  uint64_t out = 0;
  for (uint64_t bit = 1; mask != 0; bit <<= 1, mask &= mask - 1) {
    if (src & bit) out |= mask & (~mask + 1);
  }
  return out;
}
inline uint64_t pext_u64(uint64_t src, uint64_t mask) {
  uint64_t out = 0;
  for (uint64_t bit = 1; mask != 0; bit <<= 1, mask &= mask - 1) {
    if (src & mask & (~mask + 1)) out |= bit;
  }
  return out;
}
}  // namespace ox::kernels::emu

#define _mm512_cvtepi32_ps(a) ox::kernels::emu::cvtepi32_ps(a)
#define _mm512_mulhi_epu16(a, b) ox::kernels::emu::mulhi_epu16(a, b)
#define _mm512_cvtepu16_epi32(a) ox::kernels::emu::cvtepu16_epi32(a)
#define _mm512_cvtph_ps(a) ox::kernels::emu::cvtph_ps(a)
#define _mm512_maskz_loadu_ps(k, p) ox::kernels::emu::maskz_loadu_ps(k, p)
#define _mm256_maskz_loadu_epi16(k, p) ox::kernels::emu::maskz_loadu_epi16(k, p)
#define _mm512_mask_storeu_ps(p, k, v) ox::kernels::emu::mask_storeu_ps(p, k, v)
#define _mm512_shuffle_i64x2(a, b, imm) simde_mm512_shuffle_i64x2(a, b, imm)
#define _mm512_shuffle_f32x4(a, b, imm) simde_mm512_shuffle_f32x4(a, b, imm)
#define _cvtsh_ss(h) ox::fp16_to_f32(h)
#undef _mm256_sign_epi8
#define _mm256_sign_epi8(a, b) ox::kernels::emu::sign_epi8(a, b)
#define _pdep_u64(a, m) ox::kernels::emu::pdep_u64(a, m)
#define _pext_u64(a, m) ox::kernels::emu::pext_u64(a, m)
#define _pext_u32(a, m) static_cast<uint32_t>(ox::kernels::emu::pext_u64(a, m))

// The kernel sources themselves, compiled here into namespace ox::kernels::avx512_emulated: the
// formats' files first, so that their vec_dot<W> specialisations come before the gemm files use them.
#define avx512 avx512_emulated
#include "kernels/x86/avx512/block32_dot.cpp"
#include "kernels/x86/avx512/float_dot.cpp"
#include "kernels/x86/avx512/q2_q3_k.cpp"
#include "kernels/x86/avx512/q4_q5_k.cpp"
#include "kernels/x86/avx512/q6_k_iq4_xs.cpp"
#include "kernels/x86/avx512/tq.cpp"
#include "kernels/x86/avx512/attention.cpp"
#include "kernels/x86/avx512/gemm_block32.cpp"
#include "kernels/x86/avx512/gemm_few_block32.cpp"
#include "kernels/x86/avx512/gemm_float.cpp"
#include "kernels/x86/avx512/gelu.cpp"
#include "kernels/x86/avx512/gemm_iq.cpp"
#include "kernels/x86/avx512/gemm_kquant.cpp"
#include "kernels/x86/avx512/gemm_tq.cpp"
#include "kernels/x86/avx512/patch.cpp"
#undef avx512

#include <vector>

#include "tests/kernels/kernel_test_fixture.h"

namespace ox::kernels {
namespace {

// The emulated table starts from the real AVX2 one (as select.cpp builds the AVX-512 table),
// which the odd-tail paths call into: so it exists only where AVX2 runs.
std::vector<const KernelTable*> emulated_tables() {
  Result<const KernelTable*> avx2_table = kernels_by_name("avx2");
  if (!avx2_table.ok()) return {};
  static const KernelTable table = [&] {
    KernelTable t = *avx2_table.value();
    avx512_emulated::patch(t);
    t.isa = "avx512-emulated";
    return t;
  }();
  return {&table};
}

INSTANTIATE_TEST_SUITE_P(Avx512Emulated, KernelTableTest, ::testing::ValuesIn(emulated_tables()), table_param_name);

}  // namespace
}  // namespace ox::kernels

#endif
