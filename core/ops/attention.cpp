// attention(): flash attention over a typed KV cache.
//
// Work is cut into items of (KV head, block of tokens, chunk of positions). An item's query rows
// are the heads sharing that KV head for each token of the block, so every key and value of a tile
// is read once for all of them (grouped-query attention's saving). Per tile of kAttentionTile
// positions: scores of every row (q converted once to the activation format of the key type, then
// the kernel table's gemm or vec_dot on the cache's own bytes), a running maximum and sum per row
// (online softmax), and the values of the tile, converted once to f32, added into each row's f32
// accumulator with its weights. Decode with few items splits the positions into chunks, each
// giving (max, sum, accumulator) per row; a second pass merges them. Chunks cut only the positions
// some query of the call sees (a sliding-window layer's window, not every position held), so a
// window layer's decode costs its window and every thread gets a share of it.
#include "core/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/ops/alibi.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

inline float round_f16(float v) { return fp16_to_f32(f32_to_fp16(v)); }

// Sizes shared by every item of one call.
struct Plan {
  const AttentionParams* p;
  const KvLayerView* kv;
  const kernels::KernelTable* kernels;
  int group;                 // query heads per KV head
  int64_t block_tokens;      // tokens per item
  int64_t n_blocks;
  int64_t n_chunks;          // position chunks per (KV head, block)
  int64_t chunk_first;       // chunk c covers [chunk_first + c * chunk_len, + chunk_len) (tile-aligned)
  int64_t chunk_len;
  DType q_type;              // the key type's activation format
  uint64_t q_row_bytes;      // one query head in q_type
  uint64_t k_head_bytes;     // one KV head's keys of one position
  uint64_t v_head_bytes;
  int64_t rows;              // group * block_tokens: query rows of a full item
  int64_t scratch_floats;    // per thread
  int64_t n_kv;              // positions held: [kv->pos_first, n_kv)
};

// Per-thread scratch of one item, carved from OpContext::float_scratch.
struct Scratch {
  uint8_t* q_conv;  // [rows][q_row_bytes]
  float* scores;    // [rows][kAttentionTile]
  float* acc;       // [rows][head_dim_v]
  float* max;       // [rows]
  float* sum;       // [rows]
  float* v_tile;    // [kAttentionTile][head_dim_v]: the tile's values in f32
};

int64_t floats_for(uint64_t bytes) { return static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float)); }

Scratch carve(const Plan& plan, float* base) {
  const AttentionParams& p = *plan.p;
  Scratch s;
  s.q_conv = reinterpret_cast<uint8_t*>(base);
  base += floats_for(plan.rows * plan.q_row_bytes);
  s.scores = base;
  base += plan.rows * kAttentionTile;
  s.acc = base;
  base += plan.rows * p.head_dim_v;
  s.max = base;
  base += plan.rows;
  s.sum = base;
  base += plan.rows;
  s.v_tile = base;
  return s;
}

int64_t scratch_floats(const Plan& plan) {
  const AttentionParams& p = *plan.p;
  return floats_for(plan.rows * plan.q_row_bytes) + plan.rows * (kAttentionTile + p.head_dim_v + 2) +
         kAttentionTile * p.head_dim_v + 16;  // + 16: keeps threads' areas off one cache line
}

// Positions visible to the token at pos: [first, end_visible) (end: pos + 1, or every position held
// for non-causal attention), none before the first one the view holds.
inline int64_t first_visible(const AttentionParams& p, int64_t pos_first, int64_t pos) {
  int64_t first = 0;
  if (p.window > 0 && p.chunked) {
    first = pos / p.window * p.window;
  } else if (p.window > 0 && p.symmetric) {
    first = std::max<int64_t>(0, pos - p.window / 2);
  } else if (p.window > 0 && pos + 1 > p.window) {
    first = pos + 1 - p.window;
  }
  return std::max(first, pos_first);
}
inline int64_t first_visible(const Plan& plan, int64_t pos) { return first_visible(*plan.p, plan.kv->pos_first, pos); }
inline int64_t end_visible(const AttentionParams& p, int64_t pos, int64_t n_kv) {
  const int64_t end = p.causal ? pos + 1 : n_kv;
  return p.window > 0 && p.symmetric ? std::min(end, pos + p.window / 2 + 1) : end;
}

// Row of position j in the view (j >= kv.pos_first).
inline uint64_t view_row(const KvLayerView& kv, int64_t j) { return static_cast<uint64_t>(j - kv.pos_first); }

// Scores of every row against positions [j0, j0 + n) of KV head hk, in columns [c, c + n) of the
// tile: scores[r * kAttentionTile + c + j].
void tile_scores(const Plan& plan, int hk, int64_t rows, int64_t j0, int64_t n, int64_t c, const Scratch& s) {
  const AttentionParams& p = *plan.p;
  const KvLayerView& kv = *plan.kv;
  const uint8_t* keys = kv.k + view_row(kv, j0) * kv.k_row_bytes + static_cast<uint64_t>(hk) * plan.k_head_bytes;
  const uint32_t type = static_cast<uint32_t>(kv.type_k);
  if (const kernels::GemmFn gemm = plan.kernels->gemm[type]; gemm != nullptr) {
    gemm(p.head_dim_k, keys, kv.k_row_bytes, n, s.q_conv, plan.q_row_bytes, rows, s.scores + c, kAttentionTile);
    return;
  }
  const VecDotFn dot = plan.kernels->vec_dot[type];
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* q = s.q_conv + static_cast<uint64_t>(r) * plan.q_row_bytes;
    float* out = s.scores + r * kAttentionTile + c;
    for (int64_t j = 0; j < n; ++j) dot(p.head_dim_k, out + j, keys + static_cast<uint64_t>(j) * kv.k_row_bytes, q);
  }
}

// Head h's sink joins a finished row's softmax: (max, sum, acc) rescaled to the larger maximum as
// llama.cpp does, sum += e^(sink - max).
void add_sink(const AttentionParams& p, int64_t h, float* max, float* sum, float* acc) {
  if (p.sinks == nullptr) return;
  const float s = p.sinks[h];
  if (s > *max) {
    const float shrink = std::exp(*max - s);
    for (int d = 0; d < p.head_dim_v; ++d) acc[d] *= shrink;
    *sum = *sum * shrink + 1.0f;
    *max = s;
  } else {
    *sum += std::exp(s - *max);
  }
}

// KV head hk's values of position j0 in the cache (the next positions follow kv.v_row_bytes apart).
const uint8_t* tile_value_rows(const Plan& plan, int hk, int64_t j0) {
  const KvLayerView& kv = *plan.kv;
  return kv.v + view_row(kv, j0) * kv.v_row_bytes + static_cast<uint64_t>(hk) * plan.v_head_bytes;
}

// Values of positions [j0, j0 + n) of KV head hk as f32 rows; *stride receives their row stride.
const float* tile_values(const Plan& plan, int hk, int64_t j0, int64_t n, const Scratch& s, int64_t* stride) {
  const KvLayerView& kv = *plan.kv;
  const int dv = plan.p->head_dim_v;
  const uint8_t* values = tile_value_rows(plan, hk, j0);
  if (kv.type_v == DType::F32) {  // read in place
    *stride = static_cast<int64_t>(kv.v_row_bytes / sizeof(float));
    return reinterpret_cast<const float*>(values);
  }
  const ToFloatFn to_float = plan.kernels->to_float[static_cast<uint32_t>(kv.type_v)];
  for (int64_t j = 0; j < n; ++j) to_float(values + static_cast<uint64_t>(j) * kv.v_row_bytes, s.v_tile + j * dv, dv);
  *stride = dv;
  return s.v_tile;
}

// One item: KV head hk, tokens [t0, t1), positions [c0, c1). With partial null, writes the
// normalised result to out; otherwise (max, sum, acc[head_dim_v]) per row to partial.
void run_item(const Plan& plan, const float* q, int64_t pos0, int hk, int64_t t0, int64_t t1, int64_t c0, int64_t c1,
              const Scratch& s, float* out, float* partial, int64_t partial_stride) {
  const AttentionParams& p = *plan.p;
  const int dv = p.head_dim_v;
  const int64_t rows = (t1 - t0) * plan.group;
  const FromFloatFn convert_q = plan.kernels->quantize_row[static_cast<uint32_t>(plan.q_type)];
  // Row r = (token t0 + r / group, head hk * group + r % group).
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = t0 + r / plan.group;
    const int64_t h = static_cast<int64_t>(hk) * plan.group + r % plan.group;
    convert_q(q + (t * p.n_head + h) * p.head_dim_k, s.q_conv + static_cast<uint64_t>(r) * plan.q_row_bytes,
              p.head_dim_k);
    s.max[r] = -INFINITY;
    s.sum[r] = 0.0f;
  }
  std::memset(s.acc, 0, sizeof(float) * static_cast<size_t>(rows * dv));
  const int64_t lo = std::max(c0, first_visible(plan, pos0 + t0));
  const int64_t hi = std::min(c1, end_visible(p, pos0 + t1 - 1, plan.n_kv));  // exclusive
  const float softcap_scale = p.softcap > 0 ? p.scale / p.softcap : 0.0f;
  // Tiles start at multiples of kAttentionTile (chunks do too), so a row meets the same tiles,
  // and gets the same bits, whichever batch and block it is evaluated in.
  // Positions of a tile before lo are seen by no row of this item: neither read nor weighed (the
  // rows before the view's first one are not there to read). Skipped in whole groups of 4 from the
  // tile's start, the groups the scalar attn_accumulate sums together, so a row's sums are the same
  // whichever block it is in: a skipped group would only have added zeros.
  for (int64_t j0 = lo / kAttentionTile * kAttentionTile; j0 < hi; j0 += kAttentionTile) {
    const int64_t n = std::min(kAttentionTile, hi - j0);
    const int64_t skip = std::max<int64_t>({0, (lo - j0) / 4 * 4, plan.kv->pos_first - j0});
    tile_scores(plan, hk, rows, j0 + skip, n - skip, skip, s);
    // One row reads the values in place where the table can (no tile to share between rows).
    const kernels::AttnAccumulateRowsFn accumulate_rows =
        rows == 1 ? plan.kernels->attn_accumulate_rows[static_cast<uint32_t>(plan.kv->type_v)] : nullptr;
    int64_t v_stride = 0;
    const float* values = accumulate_rows != nullptr ? nullptr : tile_values(plan, hk, j0 + skip, n - skip, s, &v_stride);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t pos = pos0 + t0 + r / plan.group;
      // This row's visible part of the tile: [a, b).
      const int64_t a = std::max<int64_t>(skip, first_visible(plan, pos) - j0);
      const int64_t b = std::min<int64_t>(n, end_visible(p, pos, plan.n_kv) - j0);
      if (a >= b) continue;
      float* sc = s.scores + r * kAttentionTile;
      float scale = p.scale;
      if (p.softcap > 0) {  // c * tanh(scale * s / c), already scaled
        for (int64_t j = a; j < b; ++j) sc[j] = p.softcap * std::tanh(sc[j] * softcap_scale);
        scale = 1.0f;
      }
      if (p.alibi_max_bias > 0) {  // scaled first, then slope * -|j - pos|, as ggml adds llama.cpp's mask
        const float slope = alibi_slope(static_cast<int>(hk * plan.group + r % plan.group), p.n_head, p.alibi_max_bias);
        for (int64_t j = a; j < b; ++j) sc[j] = sc[j] * scale + slope * alibi_distance(j0 + j, pos);
        scale = 1.0f;
      }
      if (p.rel_bias != nullptr) {  // T5: the bias of this head and offset
        const float* bias = p.rel_bias + (j0 - pos) * p.n_head + (hk * plan.group + r % plan.group);
        for (int64_t j = a; j < b; ++j) sc[j] = sc[j] * scale + bias[j * p.n_head];
        scale = 1.0f;
      }
      // Weights e^(score - max) of the visible positions (masked ones weigh 0), the running maximum
      // updated; what was summed under an older, smaller maximum is scaled down to the new one.
      const float old_max = s.max[r];
      const float tile_sum = plan.kernels->attn_softmax(sc + a, b - a, scale, &s.max[r]);
      for (int64_t j = skip; j < a; ++j) sc[j] = 0.0f;
      float* acc = s.acc + r * dv;
      if (s.max[r] > old_max && s.sum[r] > 0.0f) {
        const float shrink = std::exp(old_max - s.max[r]);
        for (int d = 0; d < dv; ++d) acc[d] *= shrink;
        s.sum[r] *= shrink;
      }
      s.sum[r] += tile_sum;
      if (accumulate_rows != nullptr) {
        accumulate_rows(acc, sc + skip, tile_value_rows(plan, hk, j0 + skip), plan.kv->v_row_bytes, b - skip, dv);
      } else {
        plan.kernels->attn_accumulate(acc, sc + skip, values, v_stride, b - skip, dv);
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = t0 + r / plan.group;
    const int64_t h = static_cast<int64_t>(hk) * plan.group + r % plan.group;
    const float* acc = s.acc + r * dv;
    if (partial != nullptr) {
      float* dst = partial + (t * p.n_head + h) * partial_stride;
      dst[0] = s.max[r];
      dst[1] = s.sum[r];
      std::memcpy(dst + 2, acc, sizeof(float) * static_cast<size_t>(dv));
    } else {
      float* dst = out + (t * p.n_head + h) * dv;
      add_sink(p, h, &s.max[r], &s.sum[r], s.acc + r * dv);
      const float inv = s.sum[r] > 0.0f ? 1.0f / s.sum[r] : 0.0f;
      for (int d = 0; d < dv; ++d) dst[d] = acc[d] * inv;
    }
  }
}

// llama.cpp's decode path over an F16 cache (f16_accumulator): q rounded to f16, one position at
// a time, the running sum of values an f16 vector rounded after every update. q16: [head_dim_k]
// f16, acc: [head_dim_v], v32: [head_dim_v] scratch.
void attend_f16_accumulator(const Plan& plan, const float* q, int64_t pos, int h, float* out, uint16_t* q16,
                            float* acc, float* v32) {
  const AttentionParams& p = *plan.p;
  const KvLayerView& kv = *plan.kv;
  const int hk = h / plan.group;
  plan.kernels->quantize_row[static_cast<uint32_t>(DType::F16)](q, q16, p.head_dim_k);
  const VecDotFn dot = plan.kernels->vec_dot[static_cast<uint32_t>(kv.type_k)];
  const ToFloatFn to_float = plan.kernels->to_float[static_cast<uint32_t>(DType::F16)];
  std::memset(acc, 0, sizeof(float) * static_cast<size_t>(p.head_dim_v));
  float max_s = -INFINITY, sum = 0;
  const float slope = alibi_slope(h, p.n_head, p.alibi_max_bias);  // 0 without ALiBi
  for (int64_t j = first_visible(plan, pos); j < end_visible(p, pos, plan.n_kv); ++j) {
    float s = 0.0f;
    dot(p.head_dim_k, &s, kv.k + view_row(kv, j) * kv.k_row_bytes + hk * plan.k_head_bytes, q16);
    s = p.softcap > 0 ? p.softcap * std::tanh(s * (p.scale / p.softcap)) : s * p.scale;
    s += slope * alibi_distance(j, pos);
    if (p.rel_bias != nullptr) s += p.rel_bias[(j - pos) * p.n_head + h];
    float w = 1.0f;  // weight of v_j relative to the running maximum
    float rescale = 1.0f;
    if (s > max_s) {
      rescale = std::exp(max_s - s);
      max_s = s;
      for (int d = 0; d < p.head_dim_v; ++d) acc[d] = round_f16(acc[d] * rescale);
    } else {
      w = std::exp(s - max_s);
    }
    to_float(kv.v + view_row(kv, j) * kv.v_row_bytes + hk * plan.v_head_bytes, v32, p.head_dim_v);
    for (int d = 0; d < p.head_dim_v; ++d) acc[d] = round_f16(acc[d] + v32[d] * w);
    sum = sum * rescale + w;
  }
  add_sink(p, h, &max_s, &sum, acc);
  const float inv = 1.0f / sum;
  for (int d = 0; d < p.head_dim_v; ++d) out[d] = acc[d] * inv;
}

// Merges position chunks: per (token, head), acc = sum_c acc_c e^(max_c - max), likewise the sum.
void merge_chunks(const AttentionParams& p, const float* partials, int64_t n_chunks, int64_t pair_stride,
                  int64_t chunk_stride, int64_t pair, float* out) {
  const int64_t h = pair % p.n_head;
  const int dv = p.head_dim_v;
  float max = -INFINITY;
  for (int64_t c = 0; c < n_chunks; ++c) {
    const float* part = partials + c * chunk_stride + pair * pair_stride;
    if (part[1] > 0.0f) max = std::max(max, part[0]);
  }
  float sum = 0.0f;
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(dv));
  for (int64_t c = 0; c < n_chunks; ++c) {
    const float* part = partials + c * chunk_stride + pair * pair_stride;
    if (!(part[1] > 0.0f)) continue;
    const float w = std::exp(part[0] - max);
    sum += part[1] * w;
    for (int d = 0; d < dv; ++d) out[d] += part[2 + d] * w;
  }
  add_sink(p, h, &max, &sum, out);
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (int d = 0; d < dv; ++d) out[d] *= inv;
}

}  // namespace

AttentionSplit attention_split(int64_t n_tokens, int64_t pos0, int64_t pos_first, const AttentionParams& p,
                               int n_threads) {
  AttentionSplit split;
  const int64_t n_kv = pos0 + n_tokens;
  const int64_t last = pos0 + n_tokens - 1;
  // Every query's window starts and ends no earlier than the one before it: the first token's
  // start and the last token's end bound what the call sees.
  split.first = first_visible(p, pos_first, pos0) / kAttentionTile * kAttentionTile;
  split.end = end_visible(p, last, n_kv);
  split.visible = std::max<int64_t>(0, split.end - first_visible(p, pos_first, last));
  // Blocks of tokens sized so an item has ~32 query rows (fewer for decode), then enough position
  // chunks that every thread has work when there are few items (decode of a long context).
  const int group = p.n_head / p.n_head_kv;
  split.block_tokens = std::clamp<int64_t>(32 / group, 1, std::max<int64_t>(1, n_tokens));
  const int64_t items = (n_tokens + split.block_tokens - 1) / split.block_tokens * p.n_head_kv;
  const int64_t span = std::max<int64_t>(0, split.end - split.first);
  split.n_chunks = 1;
  if (items < 2 * n_threads && span >= 4 * kAttentionTile) {
    split.n_chunks = std::min<int64_t>((2 * n_threads + items - 1) / items, span / (2 * kAttentionTile));
  }
  split.chunk_len = (span + split.n_chunks - 1) / split.n_chunks;
  split.chunk_len = (split.chunk_len + kAttentionTile - 1) / kAttentionTile * kAttentionTile;
  return split;
}

void attention(OpContext& ctx, const float* q, int64_t n_tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionParams& p, float* out) {
  Plan plan{};
  plan.p = &p;
  plan.kv = &kv;
  plan.kernels = ctx.kernels;
  plan.group = p.n_head / p.n_head_kv;
  plan.q_type = quant_traits(kv.type_k).vec_dot_type;
  plan.q_row_bytes = dtype_row_bytes(plan.q_type, static_cast<uint64_t>(p.head_dim_k));
  plan.k_head_bytes = dtype_row_bytes(kv.type_k, static_cast<uint64_t>(p.head_dim_k));
  plan.v_head_bytes = dtype_row_bytes(kv.type_v, static_cast<uint64_t>(p.head_dim_v));
  const int n_threads = ctx.pool->n_threads();
  const int64_t n_kv = pos0 + n_tokens;
  plan.n_kv = n_kv;
  const AttentionSplit split = attention_split(n_tokens, pos0, kv.pos_first, p, n_threads);

  if (p.f16_accumulator) {
    OX_CHECK(kv.type_v == DType::F16 && kv.type_k == DType::F16);
    const int64_t per_thread = p.head_dim_k + 2 * p.head_dim_v + 16;
    const size_t need = static_cast<size_t>(n_threads) * static_cast<size_t>(per_thread);
    if (ctx.float_scratch.size() < need) ctx.float_scratch.resize(need);
    const int64_t n_pairs = n_tokens * p.n_head;
    auto work = [&](int index, int count) {
      float* base = ctx.float_scratch.data() + static_cast<size_t>(index) * static_cast<size_t>(per_thread);
      for (int64_t pair = index; pair < n_pairs; pair += count) {
        const int64_t t = pair / p.n_head;
        const int h = static_cast<int>(pair % p.n_head);
        attend_f16_accumulator(plan, q + (t * p.n_head + h) * p.head_dim_k, pos0 + t, h,
                               out + (t * p.n_head + h) * p.head_dim_v, reinterpret_cast<uint16_t*>(base),
                               base + p.head_dim_k, base + p.head_dim_k + p.head_dim_v);
      }
    };
    parallel_for_work(ctx, n_pairs * split.visible * (p.head_dim_k + p.head_dim_v), work);
    return;
  }

  plan.block_tokens = split.block_tokens;
  plan.n_blocks = (n_tokens + plan.block_tokens - 1) / plan.block_tokens;
  plan.rows = plan.block_tokens * plan.group;
  const int64_t items = plan.n_blocks * p.n_head_kv;
  plan.n_chunks = split.n_chunks;
  plan.chunk_first = split.first;
  plan.chunk_len = split.chunk_len;
  plan.scratch_floats = scratch_floats(plan);

  const int64_t partial_stride = 2 + p.head_dim_v;
  const int64_t chunk_stride = n_tokens * p.n_head * partial_stride;
  const size_t thread_floats = static_cast<size_t>(n_threads) * static_cast<size_t>(plan.scratch_floats);
  const size_t partial_floats = plan.n_chunks > 1 ? static_cast<size_t>(plan.n_chunks * chunk_stride) : 0;
  if (ctx.float_scratch.size() < thread_floats + partial_floats) ctx.float_scratch.resize(thread_floats + partial_floats);
  float* partials = plan.n_chunks > 1 ? ctx.float_scratch.data() + thread_floats : nullptr;

  const int64_t n_items = items * plan.n_chunks;
  auto work = [&](int index, int count) {
    const Scratch s = carve(plan, ctx.float_scratch.data() + static_cast<size_t>(index) * plan.scratch_floats);
    // Items dealt round-robin, later token blocks (which see more positions) spread over threads.
    for (int64_t item = index; item < n_items; item += count) {
      const int64_t chunk = item % plan.n_chunks;
      const int hk = static_cast<int>((item / plan.n_chunks) % p.n_head_kv);
      const int64_t block = item / (plan.n_chunks * p.n_head_kv);
      const int64_t t0 = block * plan.block_tokens;
      const int64_t t1 = std::min(n_tokens, t0 + plan.block_tokens);
      const int64_t c0 = plan.chunk_first + chunk * plan.chunk_len;
      const int64_t c1 = std::min(n_kv, c0 + plan.chunk_len);
      run_item(plan, q, pos0, hk, t0, t1, c0, c1, s, out,
               partials != nullptr ? partials + chunk * chunk_stride : nullptr, partial_stride);
    }
  };
  // Work ~ query rows x visible positions x (score + value) dims; short decode steps stay on this thread.
  parallel_for_work(ctx, n_tokens * p.n_head * split.visible * (p.head_dim_k + p.head_dim_v), work);
  if (partials != nullptr) {
    for (int64_t pair = 0; pair < n_tokens * p.n_head; ++pair) {
      merge_chunks(p, partials, plan.n_chunks, partial_stride, chunk_stride, pair, out + pair * p.head_dim_v);
    }
  }
}

}  // namespace ox
