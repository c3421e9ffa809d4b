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

void register_gemm_block32(KernelTable& t) {
  auto tile = [&](DType type, GemmFn fn) { t.gemm[static_cast<uint32_t>(type)] = fn; };
  tile(DType::Q4_0, gemm_block32<neon_common::LoadQ4_0>);
  tile(DType::Q4_1, gemm_block32<neon_common::LoadQ4_1>);
  tile(DType::Q5_0, gemm_block32<neon_common::LoadQ5_0>);
  tile(DType::Q5_1, gemm_block32<neon_common::LoadQ5_1>);
  tile(DType::Q8_0, gemm_block32<neon_common::LoadQ8_0>);
  tile(DType::IQ4_NL, gemm_block32<neon_common::LoadIQ4_NL>);
}

}  // namespace ox::kernels::neon_dotprod
