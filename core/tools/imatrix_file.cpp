// Reading and writing importance matrices: llama-imatrix's GGUF layout (save_imatrix) and its
// legacy .dat layout (save_imatrix_legacy), read as common_imatrix_load reads them, with every
// length, count and value checked.
#include "core/tools/imatrix_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/base/mapped_file.h"
#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"

namespace ox {
namespace {

constexpr std::string_view kSumsSuffix = ".in_sum2";
constexpr std::string_view kCountsSuffix = ".counts";
// Counts are stored as f32; above this they are no longer token counts anyone could have made.
constexpr double kMaxCount = 1e15;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Index of the first value that is negative or not finite, or -1.
int64_t first_bad_value(std::span<const float> v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] < 0) return static_cast<int64_t>(i);
  }
  return -1;
}

Status bad_value(const std::string& file, const std::string& entry, const char* what, int64_t index, float v) {
  return error(ErrorCode::kInvalidFile, strfmt("%s: entry '%s': %s value %lld is %g (must be finite and >= 0)",
                                               file.c_str(), entry.c_str(), what, static_cast<long long>(index), v));
}

// ---- legacy .dat: int32 n_entries; per entry int32 len, name, int32 n_call, int32 n_val,
// float[n_val]; then optionally int32 chunk_count, int32 len, dataset name.

class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& file) : bytes_(bytes), file_(file) {}
  size_t offset() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  Result<int32_t> i32(const char* what) {
    if (left() < 4) return truncated(what, 4);
    int32_t v;
    std::memcpy(&v, bytes_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  Result<std::span<const uint8_t>> take(uint64_t n, const char* what) {
    if (left() < n) return truncated(what, n);
    const std::span<const uint8_t> s = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  Status fail(const std::string& message) const {
    return error(ErrorCode::kInvalidFile, strfmt("%s: offset %zu: %s", file_.c_str(), pos_, message.c_str()));
  }

 private:
  Status truncated(const char* what, uint64_t n) const {
    return fail(strfmt("%s needs %llu bytes but the file ends after %zu", what, static_cast<unsigned long long>(n),
                       left()));
  }
  std::span<const uint8_t> bytes_;
  const std::string& file_;
  size_t pos_ = 0;
};

Result<Imatrix> parse_dat(std::span<const uint8_t> bytes, const std::string& file) {
  Cursor c(bytes, file);
  Imatrix m;
  m.legacy = true;
  OX_ASSIGN_OR_RETURN(const int32_t n_entries, c.i32("the entry count"));
  // Every entry takes at least 16 bytes (three int32, one name byte, one value).
  if (n_entries < 1 || static_cast<uint64_t>(n_entries) > c.left() / 16) {
    return c.fail(strfmt("entry count %d is impossible (at least 1, and 16 bytes each in %zu bytes)", n_entries,
                         c.left()));
  }
  for (int32_t i = 0; i < n_entries; ++i) {
    OX_ASSIGN_OR_RETURN(const int32_t len, c.i32("a name length"));
    if (len < 1 || static_cast<uint64_t>(len) > c.left()) {
      return c.fail(strfmt("entry %d: name length %d is out of range (1..%zu)", i, len, c.left()));
    }
    OX_ASSIGN_OR_RETURN(const std::span<const uint8_t> name_bytes, c.take(static_cast<uint64_t>(len), "a name"));
    std::string name(name_bytes.begin(), name_bytes.end());
    if (name.find('\0') != std::string::npos) return c.fail(strfmt("entry %d: the name holds a NUL byte", i));
    OX_ASSIGN_OR_RETURN(const int32_t n_call, c.i32("a call count"));
    OX_ASSIGN_OR_RETURN(const int32_t n_val, c.i32("a value count"));
    if (n_call < 0) return c.fail(strfmt("entry '%s': call count %d is negative", name.c_str(), n_call));
    if (n_val < 1 || static_cast<uint64_t>(n_val) > c.left() / 4) {
      return c.fail(strfmt("entry '%s': value count %d is out of range (1..%zu)", name.c_str(), n_val, c.left() / 4));
    }
    OX_ASSIGN_OR_RETURN(const std::span<const uint8_t> raw, c.take(uint64_t{4} * static_cast<uint64_t>(n_val), "values"));
    if (m.entries.count(name) != 0) return c.fail(strfmt("entry '%s' appears twice", name.c_str()));
    ImatrixEntry& e = m.entries[name];
    e.sums.resize(static_cast<size_t>(n_val));
    std::memcpy(e.sums.data(), raw.data(), raw.size());
    e.counts = {n_call};
    if (const int64_t bad = first_bad_value(e.sums); bad >= 0) {
      return bad_value(file, name, "sum", bad, e.sums[static_cast<size_t>(bad)]);
    }
  }
  if (c.left() == 0) return m;  // files of older llama.cpp versions end here
  OX_ASSIGN_OR_RETURN(const int32_t chunk_count, c.i32("the chunk count"));
  if (chunk_count < 0) return c.fail(strfmt("chunk count %d is negative", chunk_count));
  m.chunk_count = static_cast<uint32_t>(chunk_count);
  OX_ASSIGN_OR_RETURN(const int32_t len, c.i32("the dataset name length"));
  if (len < 0 || static_cast<uint64_t>(len) != c.left()) {
    return c.fail(strfmt("dataset name length %d does not match the %zu bytes left", len, c.left()));
  }
  OX_ASSIGN_OR_RETURN(const std::span<const uint8_t> dataset, c.take(static_cast<uint64_t>(len), "the dataset name"));
  if (len > 0) m.datasets.emplace_back(dataset.begin(), dataset.end());
  return m;
}

// ---- GGUF

Result<std::vector<float>> f32_values(const gguf::TensorInfo& t, const std::string& file) {
  if (t.type != DType::F32) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: tensor '%s' is %s; imatrix tensors must be F32", file.c_str(), t.name.c_str(),
                        dtype_name(t.type)));
  }
  std::vector<float> v(static_cast<size_t>(t.n_elements));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

Status read_gguf_metadata(const gguf::GgufFile& f, Imatrix& m) {
  const std::string& file = f.name();
  OX_ASSIGN_OR_RETURN(const std::string_view type, f.get_string_or("general.type", "imatrix"));
  if (type != "imatrix") {
    return error(ErrorCode::kInvalidFile, strfmt("%s: general.type is '%.*s', not 'imatrix': this is not an "
                                                 "importance matrix", file.c_str(), static_cast<int>(type.size()),
                                                 type.data()));
  }
  for (const char* key : {kImatrixDatasetsKey, kImatrixChunkCountKey, kImatrixChunkSizeKey}) {
    if (f.find(key) == nullptr) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: key %s is missing (llama-quantize refuses an imatrix "
                                                   "without it too)", file.c_str(), key));
    }
  }
  OX_ASSIGN_OR_RETURN(const std::vector<std::string_view>* datasets, f.get_string_array(kImatrixDatasetsKey));
  for (std::string_view d : *datasets) m.datasets.emplace_back(d);
  OX_ASSIGN_OR_RETURN(m.chunk_count, f.get_u32(kImatrixChunkCountKey));
  OX_ASSIGN_OR_RETURN(m.chunk_size, f.get_u32(kImatrixChunkSizeKey));
  return Status::ok();
}

Status read_gguf_entry(const std::string& file, const std::string& name, const gguf::TensorInfo* sums_t,
                       const gguf::TensorInfo* counts_t, ImatrixEntry& e) {
  if (sums_t == nullptr || counts_t == nullptr) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: entry '%s' has %s but no %s tensor", file.c_str(), name.c_str(),
                                                 sums_t == nullptr ? "counts" : "sums",
                                                 sums_t == nullptr ? "in_sum2" : "counts"));
  }
  OX_ASSIGN_OR_RETURN(e.sums, f32_values(*sums_t, file));
  OX_ASSIGN_OR_RETURN(const std::vector<float> counts, f32_values(*counts_t, file));
  // save_imatrix: in_sum2 is [n_cols, n_mat], counts [1, n_mat] (trailing 1s dropped).
  if (counts_t->dims[0] != 1 || counts_t->rows() != sums_t->rows()) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: entry '%s': %llu counts (dims[0] %llu) for %llu matrices of sums; want one count per "
                        "matrix", file.c_str(), name.c_str(), static_cast<unsigned long long>(counts_t->n_elements),
                        static_cast<unsigned long long>(counts_t->dims[0]),
                        static_cast<unsigned long long>(sums_t->rows())));
  }
  if (const int64_t bad = first_bad_value(e.sums); bad >= 0) {
    return bad_value(file, name, "sum", bad, e.sums[static_cast<size_t>(bad)]);
  }
  e.counts.resize(counts.size());
  for (size_t j = 0; j < counts.size(); ++j) {
    const float c = counts[j];
    if (!std::isfinite(c) || c < 0 || c > kMaxCount || c != std::floor(c)) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: entry '%s': count %zu is %g (must be a whole number of "
                                                   "tokens)", file.c_str(), name.c_str(), j, c));
    }
    e.counts[j] = static_cast<int64_t>(c);
  }
  return Status::ok();
}

Result<Imatrix> parse_gguf(std::span<const uint8_t> bytes, const std::string& file) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> f, gguf::GgufFile::parse(bytes, file));
  Imatrix m;
  OX_TRY(read_gguf_metadata(*f, m));
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> pairs;
  for (const gguf::TensorInfo& t : f->tensors()) {
    const std::string_view n = t.name;
    if (ends_with(n, kSumsSuffix)) {
      pairs[std::string(n.substr(0, n.size() - kSumsSuffix.size()))].first = &t;
    } else if (ends_with(n, kCountsSuffix)) {
      pairs[std::string(n.substr(0, n.size() - kCountsSuffix.size()))].second = &t;
    } else {
      return error(ErrorCode::kInvalidFile, strfmt("%s: tensor '%s' is neither <name>.in_sum2 nor <name>.counts",
                                                   file.c_str(), t.name.c_str()));
    }
  }
  if (pairs.empty()) return error(ErrorCode::kInvalidFile, strfmt("%s: no imatrix entries", file.c_str()));
  for (const auto& [name, p] : pairs) {
    OX_TRY(read_gguf_entry(file, name, p.first, p.second, m.entries[name]));
  }
  return m;
}

// ---- writing

Result<std::vector<uint8_t>> to_gguf(const Imatrix& m) {
  if (m.legacy) {
    return error(ErrorCode::kUnsupported, "an imatrix read from a .dat file holds no raw sums: it can only be "
                                          "written as .dat");
  }
  gguf::GgufWriter w;
  OX_TRY(w.add_string("general.type", "imatrix"));
  OX_TRY(w.add_string_array(kImatrixDatasetsKey, m.datasets));
  OX_TRY(w.add_u32(kImatrixChunkCountKey, m.chunk_count));
  OX_TRY(w.add_u32(kImatrixChunkSizeKey, m.chunk_size));
  for (const auto& [name, e] : m.entries) {
    if (e.counts.empty() || e.sums.empty() || e.sums.size() % e.counts.size() != 0) {
      return error(ErrorCode::kInvalidArgument, strfmt("imatrix entry '%s': %zu sums for %zu counts", name.c_str(),
                                                       e.sums.size(), e.counts.size()));
    }
    const uint64_t n_mat = e.counts.size(), n_cols = e.sums.size() / n_mat;
    // ggml drops trailing dimensions of 1, so a single matrix is stored 1-D.
    std::vector<uint64_t> sum_dims = {n_cols}, count_dims = {1};
    if (n_mat > 1) {
      sum_dims.push_back(n_mat);
      count_dims.push_back(n_mat);
    }
    std::vector<float> counts(e.counts.begin(), e.counts.end());
    const auto as_bytes = [](const std::vector<float>& v) {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float));
    };
    OX_TRY(w.add_tensor(name + std::string(kSumsSuffix), sum_dims, DType::F32, as_bytes(e.sums)));
    OX_TRY(w.add_tensor(name + std::string(kCountsSuffix), count_dims, DType::F32, as_bytes(counts)));
  }
  return w.to_bytes();
}

void put_i32(std::vector<uint8_t>& out, int32_t v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + 4);
}

Status check_i32(uint64_t v, const char* what, const std::string& entry) {
  if (v > static_cast<uint64_t>(INT32_MAX)) {
    return error(ErrorCode::kTooLarge, strfmt("imatrix entry '%s': %s %llu does not fit the .dat format's int32",
                                              entry.c_str(), what, static_cast<unsigned long long>(v)));
  }
  return Status::ok();
}

// save_imatrix_legacy: per entry the mean square times n_call = ceil(max count / chunk_size); an
// entry no token reached is left out, a matrix no token reached stores 1 * n_call.
Result<std::vector<uint8_t>> to_dat(const Imatrix& m) {
  if (!m.legacy && m.chunk_size == 0) {
    return error(ErrorCode::kInvalidArgument, "an imatrix without a chunk size cannot be written as .dat");
  }
  std::vector<std::pair<const std::string*, const ImatrixEntry*>> stored;
  for (const auto& [name, e] : m.entries) {
    if (e.counts.empty() || e.sums.empty() || e.sums.size() % e.counts.size() != 0) {
      return error(ErrorCode::kInvalidArgument, strfmt("imatrix entry '%s': %zu sums for %zu counts", name.c_str(),
                                                       e.sums.size(), e.counts.size()));
    }
    const bool no_tokens = std::all_of(e.counts.begin(), e.counts.end(), [](int64_t c) { return c == 0; });
    if (no_tokens && !m.legacy) continue;  // llama-imatrix leaves out what no token reached
    stored.emplace_back(&name, &e);
  }
  std::vector<uint8_t> out;
  OX_TRY(check_i32(stored.size(), "entry count", "*"));
  put_i32(out, static_cast<int32_t>(stored.size()));
  for (const auto& [name, e] : stored) {
    OX_TRY(check_i32(name->size(), "name length", *name));
    OX_TRY(check_i32(e->sums.size(), "value count", *name));
    put_i32(out, static_cast<int32_t>(name->size()));
    out.insert(out.end(), name->begin(), name->end());
    const int64_t max_count = *std::max_element(e->counts.begin(), e->counts.end());
    const int64_t n_call = m.legacy ? max_count : (max_count + m.chunk_size - 1) / m.chunk_size;
    OX_TRY(check_i32(static_cast<uint64_t>(n_call), "call count", *name));
    put_i32(out, static_cast<int32_t>(n_call));
    put_i32(out, static_cast<int32_t>(e->sums.size()));
    const size_t n_cols = e->sums.size() / e->counts.size();
    for (size_t i = 0; i < e->sums.size(); ++i) {
      float v = e->sums[i];
      if (!m.legacy) {
        float count = static_cast<float>(e->counts[i / n_cols]);
        if (count == 0.0f) v = count = 1.0f;
        v = (v / count) * static_cast<float>(n_call);  // float arithmetic, as llama-imatrix
      }
      const auto* p = reinterpret_cast<const uint8_t*>(&v);
      out.insert(out.end(), p, p + 4);
    }
  }
  put_i32(out, static_cast<int32_t>(std::min<uint32_t>(m.chunk_count, INT32_MAX)));
  const std::string dataset = m.datasets.empty() ? std::string() : m.datasets.back();
  OX_TRY(check_i32(dataset.size(), "dataset name length", "*"));
  put_i32(out, static_cast<int32_t>(dataset.size()));
  out.insert(out.end(), dataset.begin(), dataset.end());
  return out;
}

}  // namespace

std::vector<float> imatrix_importance(const Imatrix& imatrix, const ImatrixEntry& entry) {
  std::vector<float> out(entry.sums.size());
  if (entry.counts.empty() || entry.sums.empty()) return out;
  const size_t n_cols = entry.sums.size() / entry.counts.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (imatrix.legacy) {
      const int64_t n_call = entry.counts[0];
      out[i] = n_call > 0 ? entry.sums[i] / static_cast<float>(n_call) : entry.sums[i];
    } else {
      const float count = static_cast<float>(entry.counts[i / n_cols]);
      out[i] = count > 0.0f ? entry.sums[i] / count : 1.0f;
    }
  }
  return out;
}

Status merge_imatrix(Imatrix& into, const Imatrix& from, uint32_t chunk_size, const std::string& from_name) {
  OX_CHECK(!into.legacy && chunk_size > 0);
  for (const auto& [name, entry] : from.entries) {
    ImatrixEntry& e = into.entries[name];
    if (from.legacy) {
      if (e.sums.empty()) {
        e.sums.assign(entry.sums.size(), 0.0f);
        e.counts.assign(1, 0);
      } else if (e.sums.size() != entry.sums.size()) {
        return error(ErrorCode::kInvalidArgument, strfmt("%s: entry '%s' has %zu values where the files before it "
                                                         "have %zu", from_name.c_str(), name.c_str(),
                                                         entry.sums.size(), e.sums.size()));
      }
      for (size_t j = 0; j < entry.sums.size(); ++j) e.sums[j] += entry.sums[j] * static_cast<float>(chunk_size);
      for (int64_t& c : e.counts) c += entry.counts[0] * chunk_size;
      continue;
    }
    if (e.sums.empty()) {
      e.sums.assign(entry.sums.size(), 0.0f);
    } else if (e.sums.size() != entry.sums.size()) {
      return error(ErrorCode::kInvalidArgument, strfmt("%s: entry '%s' has %zu values where the files before it "
                                                       "have %zu", from_name.c_str(), name.c_str(),
                                                       entry.sums.size(), e.sums.size()));
    }
    if (e.counts.empty()) {
      e.counts.assign(entry.counts.size(), 0);
    } else if (e.counts.size() == 1 && entry.counts.size() > 1) {
      e.counts.assign(entry.counts.size(), e.counts[0]);
    } else if (e.counts.size() != entry.counts.size()) {
      return error(ErrorCode::kInvalidArgument, strfmt("%s: entry '%s' has %zu counts where the files before it "
                                                       "have %zu", from_name.c_str(), name.c_str(),
                                                       entry.counts.size(), e.counts.size()));
    }
    for (size_t j = 0; j < entry.sums.size(); ++j) e.sums[j] += entry.sums[j];
    for (size_t j = 0; j < entry.counts.size(); ++j) e.counts[j] += entry.counts[j];
  }
  into.datasets.insert(into.datasets.end(), from.datasets.begin(), from.datasets.end());
  int64_t max_count = 0;
  for (const auto& [name, e] : into.entries) {
    for (int64_t c : e.counts) max_count = std::max(max_count, c);
  }
  into.chunk_count = static_cast<uint32_t>(std::min<int64_t>(max_count / chunk_size, UINT32_MAX));
  into.chunk_size = chunk_size;
  return Status::ok();
}

Result<Imatrix> parse_imatrix(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0) return parse_gguf(bytes, name);
  return parse_dat(bytes, name);
}

Result<Imatrix> read_imatrix(const std::string& path) {
  OX_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  return parse_imatrix(file->bytes(), path);
}

Result<std::vector<uint8_t>> imatrix_to_bytes(const Imatrix& imatrix, ImatrixFormat format) {
  return format == ImatrixFormat::kGguf ? to_gguf(imatrix) : to_dat(imatrix);
}

Status write_imatrix(const Imatrix& imatrix, const std::string& path, ImatrixFormat format) {
  OX_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, imatrix_to_bytes(imatrix, format));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot create %s", path.c_str()));
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !closed) {
    std::remove(path.c_str());
    return error(ErrorCode::kIo, strfmt("%s: write failed", path.c_str()));
  }
  return Status::ok();
}

}  // namespace ox
