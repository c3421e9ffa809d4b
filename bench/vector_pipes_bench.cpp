// Throughput of single 128-bit x86 vector instructions, the ones V8 emits for the SIMD128 decode
// kernels (i16x8.mul -> vpmullw, i32x4.dot_i16x8_s -> vpmaddwd, shifts, and, add, splat loads).
// Each case issues 32 independent copies per loop trip (four destinations, no dependency chains),
// so ns per op is the reciprocal throughput: an op that runs on k pipes shows 1/k cycle. Pairs of
// different ops show whether they share pipes (a shared pipe keeps the pair at the slower rate).
// The SIMD128 K-quant decode kernels are bounded by these pipes, not by memory (README,
// "Benchmarks"). x86-64 with AVX only; elsewhere every case skips.
// Run: oxidize_microbench --benchmark_filter=VectorPipe
#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

#if defined(__x86_64__)
// OX_REG / OX_IMM give an instruction and its first source (xmm0 or the shift count); OX_PAIR
// alternates two of them over four destinations, OX_X4 repeats one.
#define OX_REG(op) op " %%xmm0"
#define OX_IMM(op) op " $4"
#define OX_PAIR(a, b) a ",%%xmm1,%%xmm2\n" b ",%%xmm1,%%xmm3\n" a ",%%xmm1,%%xmm4\n" b ",%%xmm1,%%xmm5\n"
#define OX_X4(a) OX_PAIR(a, a)
#define OX_X8(s) s s s s s s s s
#define OX_PIPE_CASE(name, body)                                                                  \
  void VectorPipe_##name(benchmark::State& state) {                                               \
    if (!__builtin_cpu_supports("avx")) {                                                         \
      state.SkipWithError("no AVX");                                                              \
      return;                                                                                     \
    }                                                                                             \
    alignas(16) static int16_t mem[64] = {};                                                      \
    constexpr int64_t kTrips = 4096;                                                              \
    for (auto _ : state) {                                                                        \
      for (int64_t i = 0; i < kTrips; ++i) {                                                      \
        __asm__ volatile(OX_X8(body) : : "r"(mem) : "xmm2", "xmm3", "xmm4", "xmm5", "memory");    \
      }                                                                                           \
    }                                                                                             \
    state.SetItemsProcessed(state.iterations() * kTrips * 32);                                    \
  }                                                                                               \
  BENCHMARK(VectorPipe_##name)

OX_PIPE_CASE(paddw, OX_X4(OX_REG("vpaddw")));
OX_PIPE_CASE(pand, OX_X4(OX_REG("vpand")));
OX_PIPE_CASE(pmullw, OX_X4(OX_REG("vpmullw")));
OX_PIPE_CASE(pmaddwd, OX_X4(OX_REG("vpmaddwd")));
OX_PIPE_CASE(pmulld, OX_X4(OX_REG("vpmulld")));
OX_PIPE_CASE(pshufb, OX_X4(OX_REG("vpshufb")));
OX_PIPE_CASE(punpckhbw, OX_X4(OX_REG("vpunpckhbw")));
OX_PIPE_CASE(psrlw, OX_X4(OX_IMM("vpsrlw")));
OX_PIPE_CASE(pbroadcastw_load, "vpbroadcastw (%0),%%xmm2\nvpbroadcastw 2(%0),%%xmm3\nvpbroadcastw 4(%0),%%xmm4\nvpbroadcastw 6(%0),%%xmm5\n");
OX_PIPE_CASE(pmullw_paddw, OX_PAIR(OX_REG("vpmullw"), OX_REG("vpaddw")));
OX_PIPE_CASE(pmullw_pmaddwd, OX_PAIR(OX_REG("vpmullw"), OX_REG("vpmaddwd")));
OX_PIPE_CASE(pmullw_psrlw, OX_PAIR(OX_REG("vpmullw"), OX_IMM("vpsrlw")));
OX_PIPE_CASE(pshufb_psrlw, OX_PAIR(OX_REG("vpshufb"), OX_IMM("vpsrlw")));
OX_PIPE_CASE(psrlw_paddw, OX_PAIR(OX_IMM("vpsrlw"), OX_REG("vpaddw")));
#endif

}  // namespace
