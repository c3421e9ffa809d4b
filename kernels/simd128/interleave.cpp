// The interleaved layouts' conversions (interleave.h), 16 bytes at a time: each is a 16-bit unpack
// of two vectors (Q4_K_IL's of the low and high nibbles, after which the nibbles are packed again).
#include "kernels/simd128/interleave.h"

#include <cstring>

#include "kernels/simd128/gemm_tile.h"
#include "kernels/simd128/util.h"

namespace ox::kernels::simd128 {
namespace {

// One 32-byte run of Q4_K qs: low nibbles A, high nibbles B -> il16 pairs, repacked.
void q4_k_run(uint8_t* run) {
  const v128_t m4 = wasm_i8x16_splat(0x0F);
  const v128_t q0 = load(run), q1 = load(run + 16);
  const v128_t a0 = wasm_v128_and(q0, m4), b0 = wasm_u8x16_shr(q0, 4);
  const v128_t a1 = wasm_v128_and(q1, m4), b1 = wasm_u8x16_shr(q1, 4);
  wasm_v128_store(run, wasm_v128_or(il16_low(a0, b0), wasm_i8x16_shl(il16_high(a0, b0), 4)));
  wasm_v128_store(run + 16, wasm_v128_or(il16_low(a1, b1), wasm_i8x16_shl(il16_high(a1, b1), 4)));
}

// One 32-byte run of Q6_K ql / qh (and one 32-value group of Q6_K_IL activations).
void run32(uint8_t* dst, const uint8_t* src) {
  const v128_t r0 = load(src), r1 = load(src + 16);
  wasm_v128_store(dst, il16_low(r0, r1));
  wasm_v128_store(dst + 16, il16_high(r0, r1));
}

// Chunk c of a Q4_K_IL row's activations (64 values y): il16(y[0..7], y[32..39]),
// il16(y[8..15], y[40..47]), then the same of y[16..31] and y[48..63].
void q4_k_acts(const int8_t* in, int8_t* out) {
  for (int c = 0; c < 4; ++c) {
    const int8_t* y = in + 64 * c;
    int8_t* o = out + 64 * c;
    const v128_t y0 = load(y), y1 = load(y + 16), y2 = load(y + 32), y3 = load(y + 48);
    wasm_v128_store(o, il16_low(y0, y2));
    wasm_v128_store(o + 16, il16_high(y0, y2));
    wasm_v128_store(o + 32, il16_low(y1, y3));
    wasm_v128_store(o + 48, il16_high(y1, y3));
  }
}

// Q6_K_IL: every 32 values as a run of ql / qh.
void q6_k_acts(const int8_t* in, int8_t* out) {
  auto* o = reinterpret_cast<uint8_t*>(out);
  const auto* i = reinterpret_cast<const uint8_t*>(in);
  for (int g = 0; g < 8; ++g) run32(o + 32 * g, i + 32 * g);
}

// 8 x 8 transpose of i16 lanes: r[p] lane m becomes what r[m] lane p was (three rounds of il16).
void transpose_i16(v128_t r[8]) {
  for (int round = 0; round < 3; ++round) {
    v128_t t[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = il16_low(r[i], r[i + 4]);
      t[2 * i + 1] = il16_high(r[i], r[i + 4]);
    }
    for (int i = 0; i < 8; ++i) r[i] = t[i];
  }
}

// Q2_K_IL's activations: per group g, the 16-value sub-blocks 8g..8g+7 transposed as i16 pairs.
void q2_k_acts(const int8_t* in, int8_t* out) {
  for (int g = 0; g < 2; ++g) {
    v128_t r[8];
    for (int m = 0; m < 8; ++m) r[m] = load(in + 16 * (8 * g + m));
    transpose_i16(r);
    for (int p = 0; p < 8; ++p) wasm_v128_store(out + 16 * (8 * g + p), r[p]);
  }
}

// A Q2_K / Q3_K block's quants as byte planes (hmask null for Q2_K; Q3_K's u = low2 | hbit << 2):
// natural (read): row m of s[g] is sub-block 8g + m (low bits at bits 2j of qs vector 2g + t,
// m = 2j + t; high bit at bit 4g + j of hmask vector t); interleaved (read and written) (interleave.h): il[j & 1][2b + j / 2] is
// plane j of qs vector b (high bit at bit 4 (b / 2) + j of hmask vector b % 2). Per group, the
// interleaved planes are the natural ones transposed as i16 pairs.
void natural_planes(const uint8_t* qs, const uint8_t* hmask, v128_t s[2][8]) {
  const v128_t m3 = wasm_i8x16_splat(3), m1 = wasm_i8x16_splat(1);
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 8; ++m) {
      const int j = m / 2, t = m % 2;
      s[g][m] = wasm_v128_and(wasm_u8x16_shr(load(qs + 16 * (2 * g + t)), 2 * j), m3);
      if (hmask != nullptr) {
        const v128_t hb = wasm_v128_and(wasm_u8x16_shr(load(hmask + 16 * t), 4 * g + j), m1);
        s[g][m] = wasm_v128_or(s[g][m], wasm_i8x16_shl(hb, 2));
      }
    }
  }
}
void il_planes(const uint8_t* qs, const uint8_t* hmask, v128_t il[2][8]) {
  const v128_t m3 = wasm_i8x16_splat(3), m1 = wasm_i8x16_splat(1);
  for (int b = 0; b < 4; ++b) {
    for (int j = 0; j < 4; ++j) {
      v128_t v = wasm_v128_and(wasm_u8x16_shr(load(qs + 16 * b), 2 * j), m3);
      if (hmask != nullptr) {
        const v128_t hb = wasm_v128_and(wasm_u8x16_shr(load(hmask + 16 * (b % 2)), 4 * (b / 2) + j), m1);
        v = wasm_v128_or(v, wasm_i8x16_shl(hb, 2));
      }
      il[j % 2][2 * b + j / 2] = v;
    }
  }
}
void store_il(v128_t il[2][8], uint8_t* qs, uint8_t* hmask) {
  const v128_t m3 = wasm_i8x16_splat(3), m1 = wasm_i8x16_splat(1);
  v128_t h[2] = {wasm_i8x16_splat(0), wasm_i8x16_splat(0)};
  for (int b = 0; b < 4; ++b) {
    v128_t v = wasm_i8x16_splat(0);
    for (int j = 0; j < 4; ++j) {
      const v128_t u = il[j % 2][2 * b + j / 2];
      v = wasm_v128_or(v, wasm_i8x16_shl(wasm_v128_and(u, m3), 2 * j));
      h[b % 2] = wasm_v128_or(h[b % 2], wasm_i8x16_shl(wasm_v128_and(wasm_u8x16_shr(u, 2), m1), 4 * (b / 2) + j));
    }
    wasm_v128_store(qs + 16 * b, v);
  }
  if (hmask == nullptr) return;
  wasm_v128_store(hmask, h[0]);
  wasm_v128_store(hmask + 16, h[1]);
}

// One block's qs (and hmask) natural -> interleaved, in place.
void q2_q3_to_il(uint8_t* qs, uint8_t* hmask) {
  v128_t p[2][8];
  natural_planes(qs, hmask, p);
  transpose_i16(p[0]);
  transpose_i16(p[1]);
  store_il(p, qs, hmask);
}

// A token's Q8_K row with each block's quants permuted by `permute` (d and bsums kept), in scratch.
template <void (*permute)(const int8_t*, int8_t*)>
const BlockQ8_K* permuted_acts(int64_t n, const uint8_t* a) {
  const int64_t nb = n / kQK_K;
  const auto* in = reinterpret_cast<const BlockQ8_K*>(a);
  const int64_t vecs = (nb * static_cast<int64_t>(sizeof(BlockQ8_K)) + 15) / 16;
  auto* out = reinterpret_cast<BlockQ8_K*>(gemm::scratch(gemm::Slot::kInterleaved, vecs));
  for (int64_t i = 0; i < nb; ++i) {
    std::memcpy(&out[i], &in[i], sizeof(BlockQ8_K));
    permute(in[i].qs, out[i].qs);
  }
  return out;
}

}  // namespace

void relayout_q4_k_il(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ4_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) {
    for (int c = 0; c < 4; ++c) q4_k_run(b[i].qs + 32 * c);
  }
}

void relayout_q6_k_il(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ6_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) {
    for (int c = 0; c < 4; ++c) run32(b[i].ql + 32 * c, b[i].ql + 32 * c);
    for (int c = 0; c < 2; ++c) run32(b[i].qh + 32 * c, b[i].qh + 32 * c);
  }
}

void relayout_q2_k_il(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ2_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) q2_q3_to_il(b[i].qs, nullptr);
}
void relayout_q3_k_il(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ3_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) q2_q3_to_il(b[i].qs, b[i].hmask);
}

void q2_q3_sub_blocks(const uint8_t* qs, const uint8_t* hmask, v128_t sub[16]) {
  v128_t p[2][8];
  il_planes(qs, hmask, p);
  transpose_i16(p[0]);
  transpose_i16(p[1]);
  for (int k = 0; k < 16; ++k) sub[k] = p[k / 8][k % 8];
}

const BlockQ8_K* acts_q4_k_il(int64_t n, const uint8_t* a) { return permuted_acts<q4_k_acts>(n, a); }
const BlockQ8_K* acts_q6_k_il(int64_t n, const uint8_t* a) { return permuted_acts<q6_k_acts>(n, a); }
const BlockQ8_K* acts_q2_k_il(int64_t n, const uint8_t* a) { return permuted_acts<q2_k_acts>(n, a); }

}  // namespace ox::kernels::simd128
