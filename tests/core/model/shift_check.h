// The check of a context shift (Model::shift) shared by the shift tests: layer 0's keys depend only
// on a token and its position, so after dropping positions the moved and re-rotated keys must equal
// the keys a fresh cache computes for the same tokens at their new positions, and the values of
// layer 0 must have moved unchanged.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/kv_cache/kv_cache.h"
#include "core/model/model.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

namespace ox::test {

// Row `pos` of layer 0 of sequence 0 (K or V) as floats.
inline std::vector<float> cache_row(const ForwardState& st, bool key, int64_t pos) {
  const KvCache& kv = st.kv;
  const int64_t n = key ? kv.k_dim() : kv.v_dim();
  std::vector<float> out(static_cast<size_t>(n));
  if (n == 0) return out;  // an MLA cache (deepseek2) has no V rows: no buffer to read
  quant_traits(key ? kv.type_k() : kv.type_v()).to_float(key ? kv.k(0, 0, pos) : kv.v(0, 0, pos), out.data(), n);
  return out;
}

// Largest |shifted - fresh| over layer 0's keys, after dropping [keep, keep + drop) of n tokens
// (cache type `type`); *value_error gets the same for the values.
inline double shifted_key_error(const Model& model, DType type, int n, int keep, int drop, double* value_error) {
  ThreadPool pool(2);
  const kernels::KernelTable* table = &kernels::best_kernels();
  auto shifted = model.new_state(n, n, table, &pool, type, type);
  auto fresh = model.new_state(n, n, table, &pool, type, type);
  EXPECT_TRUE(shifted.ok() && fresh.ok());
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) tokens[static_cast<size_t>(i)] = 1 + (i * 37 + 11) % (model.hparams().n_vocab - 1);
  std::vector<float> logits(static_cast<size_t>(model.hparams().n_vocab));
  model.forward(*shifted.value(), tokens, 0, false, logits.data());
  EXPECT_TRUE(model.shift(*shifted.value(), keep, drop, n).is_ok());
  std::vector<int32_t> kept(tokens.begin(), tokens.begin() + keep);
  kept.insert(kept.end(), tokens.begin() + keep + drop, tokens.end());
  model.forward(*fresh.value(), kept, 0, false, logits.data());
  double k_err = 0, v_err = 0;
  for (int64_t pos = 0; pos < static_cast<int64_t>(kept.size()); ++pos) {
    const std::vector<float> ks = cache_row(*shifted.value(), true, pos), kf = cache_row(*fresh.value(), true, pos);
    const std::vector<float> vs = cache_row(*shifted.value(), false, pos), vf = cache_row(*fresh.value(), false, pos);
    for (size_t i = 0; i < ks.size(); ++i) k_err = std::max(k_err, std::fabs(double{ks[i]} - kf[i]));
    for (size_t i = 0; i < vs.size(); ++i) v_err = std::max(v_err, std::fabs(double{vs[i]} - vf[i]));
  }
  *value_error = v_err;
  return k_err;
}

}  // namespace ox::test
