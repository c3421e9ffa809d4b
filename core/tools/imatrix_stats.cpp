#include "core/tools/imatrix_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

#include "core/tools/tensor_pattern.h"

namespace ox {
namespace {

// llama.cpp's process_tensor_name: the item after "blk" and the one before "weight", split at dots.
void split_name(const std::string& input, std::string& layer, std::string& tensor) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= input.size()) {
    const size_t dot = std::min(input.find('.', at), input.size());
    parts.push_back(input.substr(at, dot - at));
    at = dot + 1;
  }
  // std::getline drops an empty last item ("a." splits as {"a"}).
  if (!parts.empty() && parts.back().empty()) parts.pop_back();
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "blk") {
      layer = parts[i + 1];
      break;
    }
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "weight") {
      tensor = parts[i - 1];
      break;
    }
  }
  if (tensor.empty()) tensor = input;
  if (layer.empty()) layer = "-";
}

bool tensor_stats(const std::string& name, const ImatrixEntry& e, ImatrixTensorStats& ts) {
  if (e.counts.empty() || e.sums.size() % e.counts.size() != 0) return false;
  const size_t n_mat = e.counts.size(), row_size = e.sums.size() / n_mat;
  std::vector<float> act;
  act.reserve(e.sums.size());
  for (size_t i = 0; i < n_mat; ++i) {
    if (e.counts[i] == 0) continue;
    for (size_t j = 0; j < row_size; ++j) act.push_back(e.sums[i * row_size + j] / static_cast<float>(e.counts[i]));
  }
  if (act.empty()) return false;
  const float n = static_cast<float>(act.size());
  ts.name = name;
  split_name(name, ts.layer, ts.tensor);
  ts.total = std::accumulate(act.begin(), act.end(), 0.0f);
  ts.max = *std::max_element(act.begin(), act.end());
  ts.min = *std::min_element(act.begin(), act.end());
  ts.mean = ts.total / n;
  const float sq = std::inner_product(act.begin(), act.end(), act.begin(), 0.0f);
  ts.stddev = std::sqrt(std::max(0.0f, sq / n - ts.mean * ts.mean));
  const auto inactive = std::count_if(act.begin(), act.end(), [](float v) { return std::fabs(v) <= 1e-5f; });
  ts.active = 1 - static_cast<float>(inactive) / n;
  ts.entropy = 0;
  if (ts.total > 0) {
    for (float a : act) {
      if (const float p = a / ts.total; p > 0) ts.entropy -= p * std::log2(p);
    }
  }
  int above = 0;
  if (ts.stddev > 0.0f) {
    for (float a : act) above += (a - ts.mean) / ts.stddev > 1 ? 1 : 0;
  }
  ts.elements = static_cast<int>(act.size());
  ts.zd = static_cast<float>(above) / static_cast<float>(ts.elements);
  return true;
}

}  // namespace

std::vector<ImatrixTensorStats> imatrix_statistics(const Imatrix& imatrix) {
  std::vector<ImatrixTensorStats> out;
  std::vector<const ImatrixEntry*> entries;
  for (const auto& [name, e] : imatrix.entries) {
    ImatrixTensorStats ts;
    if (!tensor_stats(name, e, ts)) continue;
    out.push_back(std::move(ts));
    entries.push_back(&e);
  }
  // Cosine similarity of the raw sums with the same tensor one layer down (llama.cpp's compute_cossim).
  for (size_t i = 0; i < out.size(); ++i) {
    const auto [at, len] = block_number_at(out[i].name);
    out[i].cossim = 0;
    if (at == std::string::npos) continue;
    const int blk = std::atoi(out[i].name.c_str() + at);
    const std::string prev_name = out[i].name.substr(0, at) + std::to_string(blk - 1) + out[i].name.substr(at + len);
    for (size_t k = 0; k < out.size(); ++k) {
      if (out[k].name != prev_name) continue;
      const std::vector<float>& a = entries[i]->sums;
      const std::vector<float>& b = entries[k]->sums;
      if (a.size() != b.size()) break;
      const float dot = std::inner_product(a.begin(), a.end(), b.begin(), 0.0f);
      const float mag_a = std::sqrt(std::inner_product(a.begin(), a.end(), a.begin(), 0.0f));
      const float mag_b = std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0f));
      out[i].cossim = dot / (mag_a * mag_b);
      break;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ImatrixTensorStats& a, const ImatrixTensorStats& b) {
    return a.tensor < b.tensor || (a.tensor == b.tensor && a.total > b.total);
  });
  return out;
}

std::vector<ImatrixLayerStats> imatrix_layer_statistics(const std::vector<ImatrixTensorStats>& tensors) {
  struct Weighted {
    float total = 0, zd = 0, cossim = 0;
    int elements = 0;
  };
  std::map<int, Weighted> by_layer;
  for (const ImatrixTensorStats& t : tensors) {
    char* end = nullptr;
    const long blk = std::strtol(t.layer.c_str(), &end, 10);
    if (end == t.layer.c_str() || blk < 0) continue;  // not a block (llama.cpp's stoi failing gives -1)
    Weighted& w = by_layer[static_cast<int>(blk)];
    const float n = static_cast<float>(t.elements);
    w.total += n * t.total;
    w.zd += n * t.zd;
    w.cossim += n * t.cossim;
    w.elements += t.elements;
  }
  std::vector<ImatrixLayerStats> out;
  for (const auto& [layer, w] : by_layer) {
    if (w.elements == 0) continue;
    const float n = static_cast<float>(w.elements);
    out.push_back({layer, w.total / n, w.zd / n, w.cossim / n});
  }
  return out;
}

}  // namespace ox
