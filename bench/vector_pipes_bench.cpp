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
#define OX_X4(op) op " %%xmm0,%%xmm1,%%xmm2\n" op " %%xmm0,%%xmm1,%%xmm3\n" op " %%xmm0,%%xmm1,%%xmm4\n" op " %%xmm0,%%xmm1,%%xmm5\n"
#define OX_PAIR(a, b) a " %%xmm0,%%xmm1,%%xmm2\n" b " %%xmm0,%%xmm1,%%xmm3\n" a " %%xmm0,%%xmm1,%%xmm4\n" b " %%xmm0,%%xmm1,%%xmm5\n"
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

OX_PIPE_CASE(paddw, OX_X4("vpaddw"));
OX_PIPE_CASE(pand, OX_X4("vpand"));
OX_PIPE_CASE(pmullw, OX_X4("vpmullw"));
OX_PIPE_CASE(pmaddwd, OX_X4("vpmaddwd"));
OX_PIPE_CASE(pmulld, OX_X4("vpmulld"));
OX_PIPE_CASE(pshufb, OX_X4("vpshufb"));
OX_PIPE_CASE(punpckhbw, OX_X4("vpunpckhbw"));
OX_PIPE_CASE(psrlw, "vpsrlw $4,%%xmm1,%%xmm2\nvpsrlw $4,%%xmm1,%%xmm3\nvpsrlw $4,%%xmm1,%%xmm4\nvpsrlw $4,%%xmm1,%%xmm5\n");
OX_PIPE_CASE(pbroadcastw_load, "vpbroadcastw (%0),%%xmm2\nvpbroadcastw 2(%0),%%xmm3\nvpbroadcastw 4(%0),%%xmm4\nvpbroadcastw 6(%0),%%xmm5\n");
OX_PIPE_CASE(pmullw_paddw, OX_PAIR("vpmullw", "vpaddw"));
OX_PIPE_CASE(pmullw_pmaddwd, OX_PAIR("vpmullw", "vpmaddwd"));
OX_PIPE_CASE(pmullw_psrlw, "vpmullw %%xmm0,%%xmm1,%%xmm2\nvpsrlw $4,%%xmm1,%%xmm3\nvpmullw %%xmm0,%%xmm1,%%xmm4\nvpsrlw $4,%%xmm1,%%xmm5\n");
OX_PIPE_CASE(pshufb_psrlw, "vpshufb %%xmm0,%%xmm1,%%xmm2\nvpsrlw $4,%%xmm1,%%xmm3\nvpshufb %%xmm0,%%xmm1,%%xmm4\nvpsrlw $4,%%xmm1,%%xmm5\n");
OX_PIPE_CASE(psrlw_paddw, "vpsrlw $4,%%xmm1,%%xmm2\nvpaddw %%xmm0,%%xmm1,%%xmm3\nvpsrlw $4,%%xmm1,%%xmm4\nvpaddw %%xmm0,%%xmm1,%%xmm5\n");
#endif

}  // namespace
