// Q4_K_IL, Q6_K_IL, Q2_K_IL and Q3_K_IL (interleave.h): the permutations and the references built on Q4_K's / Q6_K's.
#include "core/quant/interleave.h"

#include <cstring>

#include "core/quant/blocks.h"
#include "core/quant/reference.h"

namespace ox::quant {
namespace {

// out[0..15] = il16(a[0..7], b[0..7]) and its inverse.
void il16(const uint8_t* a, const uint8_t* b, uint8_t* out) {
  for (int m = 0; m < 4; ++m) {
    out[4 * m + 0] = a[2 * m];
    out[4 * m + 1] = a[2 * m + 1];
    out[4 * m + 2] = b[2 * m];
    out[4 * m + 3] = b[2 * m + 1];
  }
}
void un_il16(const uint8_t* in, uint8_t* a, uint8_t* b) {
  for (int m = 0; m < 4; ++m) {
    a[2 * m] = in[4 * m + 0];
    a[2 * m + 1] = in[4 * m + 1];
    b[2 * m] = in[4 * m + 2];
    b[2 * m + 1] = in[4 * m + 3];
  }
}

// One 32-byte run of Q4_K qs, natural <-> interleaved.
void q4_k_run_to_il(uint8_t* run) {
  uint8_t lo[32], hi[32], v[4][16];
  for (int i = 0; i < 32; ++i) {
    lo[i] = run[i] & 0x0F;
    hi[i] = run[i] >> 4;
  }
  for (int k = 0; k < 4; ++k) il16(lo + 8 * k, hi + 8 * k, v[k]);
  for (int i = 0; i < 16; ++i) {
    run[i] = static_cast<uint8_t>(v[0][i] | v[1][i] << 4);
    run[16 + i] = static_cast<uint8_t>(v[2][i] | v[3][i] << 4);
  }
}
void q4_k_run_from_il(uint8_t* run) {
  uint8_t lo[32], hi[32], v[4][16];
  for (int i = 0; i < 16; ++i) {
    v[0][i] = run[i] & 0x0F;
    v[1][i] = run[i] >> 4;
    v[2][i] = run[16 + i] & 0x0F;
    v[3][i] = run[16 + i] >> 4;
  }
  for (int k = 0; k < 4; ++k) un_il16(v[k], lo + 8 * k, hi + 8 * k);
  for (int i = 0; i < 32; ++i) run[i] = static_cast<uint8_t>(lo[i] | hi[i] << 4);
}

// One 32-byte run of Q6_K ql or qh, natural <-> interleaved.
void q6_k_run_to_il(uint8_t* run) {
  uint8_t out[32];
  il16(run, run + 16, out);
  il16(run + 8, run + 24, out + 16);
  std::memcpy(run, out, 32);
}
void q6_k_run_from_il(uint8_t* run) {
  uint8_t out[32];
  un_il16(run, out, out + 16);
  un_il16(run + 16, out + 8, out + 24);
  std::memcpy(run, out, 32);
}

// Q2_K: element e of a block (0..255) in natural order at bits `shift` of qs[byte], and where
// Q2_K_IL keeps it.
struct Q2Pos {
  int byte, shift;
};
Q2Pos q2_k_natural_pos(int e) { return {32 * (e / 128) + 16 * (e % 32 / 16) + e % 16, 2 * (e % 128 / 32)}; }
// Byte 16b + 2m + e, plane j: element 2p + e of sub-block 8g + m, g = j & 1, p = 2b + j / 2.
int q2_k_il_element(int byte, int j) {
  const int b = byte / 16, m = byte % 16 / 2, e = byte % 2;
  return 16 * (8 * (j & 1) + m) + 2 * (2 * b + j / 2) + e;
}
// Q3_K's high bit of the element whose low bits sit at bits 2j of qs[byte], in both layouts: bit
// 4 (byte / 32) + j of hmask[byte % 32].
int q3_k_hbit(const uint8_t* hmask, int byte, int j) { return hmask[byte % 32] >> (4 * (byte / 32) + j) & 1; }
void q3_k_set_hbit(uint8_t* hmask, int byte, int j, int bit) {
  hmask[byte % 32] |= static_cast<uint8_t>(bit << (4 * (byte / 32) + j));
}

// Q2_K's qs (and Q3_K's qs and hmask, where hmask is given) natural <-> interleaved.
template <bool kToIl>
void q2_q3_permute(uint8_t* qs, uint8_t* hmask) {
  uint8_t out[64] = {}, out_h[32] = {};
  for (int byte = 0; byte < 64; ++byte) {
    for (int j = 0; j < 4; ++j) {
      const Q2Pos p = q2_k_natural_pos(q2_k_il_element(byte, j));
      const int nat_j = p.shift / 2;
      if (kToIl) {
        out[byte] |= static_cast<uint8_t>((qs[p.byte] >> p.shift & 3) << 2 * j);
        if (hmask != nullptr) q3_k_set_hbit(out_h, byte, j, q3_k_hbit(hmask, p.byte, nat_j));
      } else {
        out[p.byte] |= static_cast<uint8_t>((qs[byte] >> 2 * j & 3) << p.shift);
        if (hmask != nullptr) q3_k_set_hbit(out_h, p.byte, nat_j, q3_k_hbit(hmask, byte, j));
      }
    }
  }
  std::memcpy(qs, out, 64);
  if (hmask != nullptr) std::memcpy(hmask, out_h, 32);
}
template <bool kToIl>
void q2_k_permute(void* blocks, int64_t n_blocks) {
  auto* x = static_cast<BlockQ2_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) q2_q3_permute<kToIl>(x[i].qs, nullptr);
}
template <bool kToIl>
void q3_k_permute(void* blocks, int64_t n_blocks) {
  auto* x = static_cast<BlockQ3_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) q2_q3_permute<kToIl>(x[i].qs, x[i].hmask);
}

template <void (*run_fn)(uint8_t*)>
void q4_k_runs(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ4_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) {
    for (int c = 0; c < 4; ++c) run_fn(b[i].qs + 32 * c);
  }
}
template <void (*run_fn)(uint8_t*)>
void q6_k_runs(void* blocks, int64_t n_blocks) {
  auto* b = static_cast<BlockQ6_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i) {
    for (int c = 0; c < 4; ++c) run_fn(b[i].ql + 32 * c);
    for (int c = 0; c < 2; ++c) run_fn(b[i].qh + 32 * c);
  }
}

// A block in natural order (a copy), for the references.
template <typename Block, void (*from_il)(void*, int64_t)>
Block natural(const Block& b) {
  Block out = b;
  from_il(&out, 1);
  return out;
}

template <typename Block, void (*from_il)(void*, int64_t), void (*dequantize)(const void*, float*, int64_t)>
void dequantize_il(const void* vx, float* y, int64_t n) {
  const Block* x = static_cast<const Block*>(vx);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const Block nat = natural<Block, from_il>(x[b]);
    dequantize(&nat, y + b * kQK_K, kQK_K);
  }
}

// Each block's term is what the natural reference adds for it (0 + term); adding them in block
// order from 0 repeats that reference's sum.
template <typename Block, void (*from_il)(void*, int64_t), void (*vec_dot)(int64_t, float*, const void*, const void*)>
void vec_dot_il(int64_t n, float* s, const void* vx, const void* vy) {
  const Block* x = static_cast<const Block*>(vx);
  const BlockQ8_K* y = static_cast<const BlockQ8_K*>(vy);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const Block nat = natural<Block, from_il>(x[b]);
    float term = 0.0f;
    vec_dot(kQK_K, &term, &nat, &y[b]);
    sum += term;
  }
  *s = sum;
}

}  // namespace

void q4_k_to_il(void* blocks, int64_t n_blocks) { q4_k_runs<q4_k_run_to_il>(blocks, n_blocks); }
void q4_k_from_il(void* blocks, int64_t n_blocks) { q4_k_runs<q4_k_run_from_il>(blocks, n_blocks); }
void q6_k_to_il(void* blocks, int64_t n_blocks) { q6_k_runs<q6_k_run_to_il>(blocks, n_blocks); }
void q6_k_from_il(void* blocks, int64_t n_blocks) { q6_k_runs<q6_k_run_from_il>(blocks, n_blocks); }

void q2_k_to_il(void* blocks, int64_t n_blocks) { q2_k_permute<true>(blocks, n_blocks); }
void q2_k_from_il(void* blocks, int64_t n_blocks) { q2_k_permute<false>(blocks, n_blocks); }
void q3_k_to_il(void* blocks, int64_t n_blocks) { q3_k_permute<true>(blocks, n_blocks); }
void q3_k_from_il(void* blocks, int64_t n_blocks) { q3_k_permute<false>(blocks, n_blocks); }

void dequantize_q4_k_il(const void* x, float* y, int64_t n) {
  dequantize_il<BlockQ4_K, q4_k_from_il, dequantize_q4_k>(x, y, n);
}
void vec_dot_q4_k_il_q8_k(int64_t n, float* s, const void* x, const void* y) {
  vec_dot_il<BlockQ4_K, q4_k_from_il, vec_dot_q4_k_q8_k>(n, s, x, y);
}
void dequantize_q6_k_il(const void* x, float* y, int64_t n) {
  dequantize_il<BlockQ6_K, q6_k_from_il, dequantize_q6_k>(x, y, n);
}
void vec_dot_q6_k_il_q8_k(int64_t n, float* s, const void* x, const void* y) {
  vec_dot_il<BlockQ6_K, q6_k_from_il, vec_dot_q6_k_q8_k>(n, s, x, y);
}

void dequantize_q2_k_il(const void* x, float* y, int64_t n) {
  dequantize_il<BlockQ2_K, q2_k_from_il, dequantize_q2_k>(x, y, n);
}
void vec_dot_q2_k_il_q8_k(int64_t n, float* s, const void* x, const void* y) {
  vec_dot_il<BlockQ2_K, q2_k_from_il, vec_dot_q2_k_q8_k>(n, s, x, y);
}
void dequantize_q3_k_il(const void* x, float* y, int64_t n) {
  dequantize_il<BlockQ3_K, q3_k_from_il, dequantize_q3_k>(x, y, n);
}
void vec_dot_q3_k_il_q8_k(int64_t n, float* s, const void* x, const void* y) {
  vec_dot_il<BlockQ3_K, q3_k_from_il, vec_dot_q3_k_q8_k>(n, s, x, y);
}

}  // namespace ox::quant
