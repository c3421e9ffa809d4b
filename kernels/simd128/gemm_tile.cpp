// Per-thread scratch and the activation-side rewrites of the SIMD128 gemm kernels: the packed
// group layout of gemm_tile.h (prefill) and the even / odd split (the per-row path). Both run
// once per gemm call and are shared by every weight row of the call.
#include "kernels/simd128/gemm_tile.h"

#include <cstddef>

#include "core/quant/blocks.h"
#include "kernels/simd128/block32_impl.h"
#include "kernels/simd128/kquant_impl.h"

namespace ox::kernels::simd128 {

// The decode loops' constants, read from linear memory (see Fp16Consts in util.h). A function
// returning constants is not enough: V8 inlines it and rebuilds every constant inside the loop
// again. Loads from this table V8 cannot fold. Not const and not static, so that LLVM cannot fold
// it either.
extern v128_t loop_constants[16];
v128_t loop_constants[16] = {
    // Fp16Consts
    wasm_i32x4_const(kFp16Rebias, kFp16Rebias, kFp16Rebias, kFp16Rebias),
    wasm_i32x4_const(kFp16SubnormalBump, kFp16SubnormalBump, kFp16SubnormalBump, kFp16SubnormalBump),
    wasm_i32x4_const(kFp16SubnormalBase, kFp16SubnormalBase, kFp16SubnormalBase, kFp16SubnormalBase),
    wasm_i32x4_const(0x7C00, 0x7C00, 0x7C00, 0x7C00),
    wasm_i32x4_const(0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000),
    // block32::Consts
    wasm_i16x8_const(0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F),
    wasm_i8x16_const(0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F, 0x0F),
    wasm_i8x16_const(16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16),
    wasm_i16x8_const(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
    wasm_u8x16_const(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128),
    wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
    wasm_i8x16_const(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3),
    wasm_v128_load(kIQ4NLValues),
    // kquant::Consts top2 and low6 (nibble16, nibble8 and low_byte are shared with block32's above)
    wasm_i8x16_const(0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30),
    wasm_i8x16_const(0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F),
    // block32::Consts mxfp4_values
    wasm_v128_load(kMXFP4Values),
};

Fp16Consts fp16_consts() {
  const v128_t* k = loop_constants;
  return {k[0], k[1], k[2], k[3], k[4]};
}

kquant::Consts kquant::opaque_consts() {
  const v128_t* k = loop_constants + 5;
  return {k[0], k[1], k[8], k[3], k[9]};
}

block32::Consts block32::opaque_consts() {
  const v128_t* k = loop_constants + 5;
  return {k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[10]};
}

}  // namespace ox::kernels::simd128

namespace ox::kernels::simd128::gemm {

v128_t* scratch(Slot slot, int64_t n_vecs) {
  // One buffer per slot and thread: matmul calls gemm from every worker at once.
  thread_local std::vector<v128_t> buffers[5];
  std::vector<v128_t>& b = buffers[static_cast<int>(slot)];
  if (b.size() < static_cast<size_t>(n_vecs)) b.resize(static_cast<size_t>(n_vecs));
  return b.data();
}

namespace {

inline uint16_t read_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

inline float read_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// Rows of 32-element blocks holding an fp16 d at offset 0, quants at `qs` and (Q8_1) an fp16 s
// at offset 2.
template <int kExtra>
const v128_t* pack_block32_acts(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, int block_bytes,
                                int qs) {
  const int64_t nb = n / 32, row = packed_row_vecs(nb, kExtra);
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  const Fp16Consts fc = fp16_consts();
  for (int64_t t = 0; t < n_tokens; ++t) {
    const uint8_t* base = a + static_cast<uint64_t>(t) * a_stride;
    auto unit = [&](int64_t u) {
      const uint8_t* q = base + u * block_bytes + qs;
      return widen(load(q), load(q + 16));
    };
    auto scale = [&](int64_t u, int e) { return fp16(read_u16(base + u * block_bytes + 2 * e)); };
    // Four blocks' fp16 fields in one vector conversion, fp16()'s steps.
    auto scales4 = [&](int64_t u, int e) {
      auto at = [&](int64_t b) { return reinterpret_cast<const uint16_t*>(base + b * block_bytes + 2 * e); };
      return fp16x4_to_f32(gather_halves4(at(u), at(u + 1), at(u + 2), at(u + 3)), fc);
    };
    pack_row<kExtra>(packed_row(out, row, t, n_tokens, kTileTokens), nb, unit, scale, scales4);
  }
  return out;
}

template <int kExtra>
const v128_t* pack_k_acts(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, ActExtra extra) {
  const int64_t n_units = n / 32, row = packed_row_vecs(n_units, kExtra);
  v128_t* out = scratch(Slot::kActs, row * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const BlockQ8_K* y = reinterpret_cast<const BlockQ8_K*>(a + static_cast<uint64_t>(t) * a_stride);
    // Unit u = quants 32 * (u % 8) .. + 31 of super-block u / 8.
    auto unit = [&](int64_t u) {
      const int8_t* q = y[u / 8].qs + 32 * (u % 8);
      return widen(load(q), load(q + 16));
    };
    auto scale = [&](int64_t u, int e) {
      const BlockQ8_K& b = y[u / 8];
      const int j = static_cast<int>(u % 8);
      const float d = read_f32(reinterpret_cast<const uint8_t*>(&b.d));
      if (e == 0) return d;
      int16_t bs[2];
      std::memcpy(bs, reinterpret_cast<const uint8_t*>(b.bsums) + 4 * j, 4);
      // kBsum32: the unit's sum (pairs with the min of its 32-element sub-block); kBsum16: the
      // sums of its two 16-element halves, one per extra.
      const int sum = extra == ActExtra::kBsum32 ? bs[0] + bs[1] : bs[e - 1];
      return d * static_cast<float>(sum);
    };
    pack_row<kExtra>(packed_row(out, row, t, n_tokens, kTileTokens), n_units, unit, scale);
  }
  return out;
}

}  // namespace

const v128_t* pack_acts_q8_0(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens) {
  return pack_block32_acts<0>(n, a, a_stride, n_tokens, sizeof(BlockQ8_0), offsetof(BlockQ8_0, qs));
}

const v128_t* pack_acts_q8_1(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens) {
  static_assert(offsetof(BlockQ8_1, s) == 2, "s read as extra 1");
  return pack_block32_acts<1>(n, a, a_stride, n_tokens, sizeof(BlockQ8_1), offsetof(BlockQ8_1, qs));
}

const v128_t* pack_acts_q8_k(int64_t n, const uint8_t* a, uint64_t a_stride, int64_t n_tokens, ActExtra extra) {
  switch (extra) {
    case ActExtra::kBsum32: return pack_k_acts<1>(n, a, a_stride, n_tokens, extra);
    case ActExtra::kBsum16: return pack_k_acts<2>(n, a, a_stride, n_tokens, extra);
    default: return pack_k_acts<0>(n, a, a_stride, n_tokens, extra);
  }
}

namespace {

// Quants at byte `qs` of blocks `block_bytes` apart, `block_elems` per block, split into out.
void split_quants(int64_t n, const uint8_t* a, int block_elems, int block_bytes, int qs, v128_t* out) {
  const int64_t per_block = block_elems / 16;
  for (int64_t c = 0; c < n / 16; ++c) {
    const EvenOdd e = split_s8(load(a + c / per_block * block_bytes + qs + 16 * (c % per_block)));
    out[2 * c] = e.even;
    out[2 * c + 1] = e.odd;
  }
}

}  // namespace

SplitActs split_acts_block32(int64_t n, const uint8_t* a, bool q8_1) {
  const int64_t nb = n / 32;
  const int block_bytes = q8_1 ? sizeof(BlockQ8_1) : sizeof(BlockQ8_0);
  v128_t* q = scratch(Slot::kActs, n / 8);
  split_quants(n, a, 32, block_bytes, q8_1 ? offsetof(BlockQ8_1, qs) : offsetof(BlockQ8_0, qs), q);
  float* d = reinterpret_cast<float*>(scratch(Slot::kScales, (3 * nb + 3) / 4));
  float* s = d + nb;
  int32_t* sum = reinterpret_cast<int32_t*>(s + nb);
  // Four blocks' scales per vector conversion (the scalar one costs as much as a block's split).
  auto fields = [&](int64_t i, int off) {
    auto at = [&](int64_t b) { return reinterpret_cast<const uint16_t*>(a + b * block_bytes + off); };
    return gather_halves4(at(i), at(i + 1), at(i + 2), at(i + 3));
  };
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    wasm_v128_store(d + i, fp16x4_to_f32(fields(i, 0)));
    if (q8_1) wasm_v128_store(s + i, fp16x4_to_f32(fields(i, 2)));
  }
  for (; i < nb; ++i) {
    d[i] = fp16(read_u16(a + i * block_bytes));
    if (q8_1) s[i] = fp16(read_u16(a + i * block_bytes + 2));
  }
  for (int64_t b = 0; b < nb; ++b) {  // the four split vectors of block b hold its 32 quants
    const v128_t* v = q + 4 * b;
    const v128_t pairs = wasm_i16x8_add(wasm_i16x8_add(v[0], v[1]), wasm_i16x8_add(v[2], v[3]));
    sum[b] = hsum_i32(wasm_i32x4_extadd_pairwise_i16x8(pairs));
  }
  return {q, d, s, sum};
}

const v128_t* split_acts_q8_k(int64_t n, const uint8_t* a) {
  v128_t* q = scratch(Slot::kActs, n / 8);
  split_quants(n, a, 256, sizeof(BlockQ8_K), offsetof(BlockQ8_K, qs), q);
  return q;
}

}  // namespace ox::kernels::simd128::gemm
