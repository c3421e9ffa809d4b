// The SDOT int8 dot primitive for the shared NEON kernel bodies (files of this folder are
// compiled with -march=armv8.2-a+dotprod).
#pragma once

#include <arm_neon.h>

namespace ox::kernels::neon_dotprod {
namespace {

// i32 lane i += sum of the 4 products of bytes 4i..4i+3 (exact for every int8 pair).
struct DotSdot {
  static inline int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
};

}  // namespace
}  // namespace ox::kernels::neon_dotprod
