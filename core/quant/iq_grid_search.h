// Search tables of the grid i-quant quantizers (IQ3_XXS, IQ3_S, IQ1_S, IQ1_M), rebuilt from the
// codebooks as llama.cpp's iq3xs_init_impl / iq2xs_init_impl build theirs: a point of the grid is a
// group of integer levels; a group of levels not on the grid has a list of nearby grid points to
// try instead. Built lazily on first use, once, thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ox::quant {

class IqGridSearch {
 public:
  // n_dim levels per point, `bits` bits per level in a packed key (level k at bit bits * k);
  // levels[g * n_dim + k] is level k of grid point g. Keys whose levels are all <= max_level get a
  // neighbour list: the grid points at the n_want smallest distinct squared distances (in units of
  // the quantizers' odd values 2 * level + 1), ordered by distance, then index.
  IqGridSearch(int n_dim, int bits, std::vector<uint8_t> levels, int max_level, int n_want);

  int n_dim() const { return n_dim_; }
  int bits() const { return bits_; }
  int n_grid() const { return static_cast<int>(levels_.size()) / n_dim_; }
  // Level k of grid point g.
  int level(int g, int k) const { return levels_[static_cast<size_t>(g) * n_dim_ + k]; }
  // Packs n_dim levels into a key.
  uint32_t key(const int8_t* l) const;
  // Grid point of a key, or -1 if the key is not on the grid.
  int grid_index(uint32_t key) const;
  // Candidates for a key not on the grid (never empty); the key's levels must be <= max_level.
  std::span<const uint16_t> neighbours(uint32_t key) const;
  // The candidate of `key` with the least weighted error sum_i w_i (scale * values[level_i] - x_i)^2,
  // the first on ties (llama.cpp's iq3_find_best_neighbour / iq1_find_best_neighbour2); writes
  // its levels to L and returns its index. Where every error is NaN or huge (llama.cpp aborts or
  // reads past its inputs there) it keeps the first candidate.
  int best_neighbour(uint32_t key, const float* x, const float* w, float scale, const float* values, int8_t* L) const;

 private:
  int n_dim_;
  int bits_;
  std::vector<uint8_t> levels_;
  // >= 0: grid index; kNoList: not a key the quantizers make; otherwise -(offset + 1) of a list
  // in lists_ (its length, then the grid indices).
  std::vector<int32_t> map_;
  std::vector<uint16_t> lists_;
};

// One super-block of 256 inputs scaled by 2^-e (exact, e from group_exponent: keeps the squares and
// products of the searches finite), and sigma2 = 2 * mean(x^2) of the scaled values.
struct IqScaledBlock {
  float x[256];
  int e;
  float sigma2;
};
void iq_scale_super_block(const float* x, IqScaledBlock* s);

// The grid quantizers' error weights of n values: importance * sqrt(sigma2 + x^2), or x^2 where
// importance is null (llama.cpp's weight[] from quant_weights).
void iq_error_weights(const float* x, const float* importance, float sigma2, int n, float* w);

const IqGridSearch& iq3xxs_grid_search();  // 256 points of 4 levels 0..7 (kIQ3XXSGrid)
const IqGridSearch& iq3s_grid_search();    // 512 points of 4 levels 0..7 (kIQ3SGrid)
const IqGridSearch& iq1s_grid_search();    // 2048 points of 8 levels 0..2 (kIQ1SGrid value + 1)

}  // namespace ox::quant
