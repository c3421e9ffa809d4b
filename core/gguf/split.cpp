// Split GGUFs: llama.cpp's shard naming, and GgufFile::join_shards, which opens a split model's
// other shards as llama_model_loader does (each checked to be shard i of the same split, every
// tensor once, split.tensors.count of them) and makes one GgufFile of them.
#include "core/gguf/split.h"

#include <cstdio>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/gguf/value_io.h"

namespace ox::gguf {
namespace {
using ull = unsigned long long;
constexpr std::string_view kGguf = ".gguf";
}  // namespace

bool is_split_key(std::string_view key) {
  return key == kSplitNoKey || key == kSplitCountKey || key == kSplitTensorsCountKey;
}

std::string split_path(std::string_view prefix, uint32_t no, uint32_t count) {
  return std::string(prefix) + strfmt("-%05u-of-%05u.gguf", no + 1, count);
}

std::optional<std::string> split_prefix(std::string_view path, uint32_t no, uint32_t count) {
  const std::string suffix = split_path("", no, count);
  if (path.size() <= suffix.size() || path.substr(path.size() - suffix.size()) != suffix) return std::nullopt;
  return std::string(path.substr(0, path.size() - suffix.size()));
}

// llama-quantize cuts the last five characters of any name that holds ".gguf" anywhere; a name
// with ".gguf" only inside it ("m.gguf.q8") keeps its end here.
std::string split_output_prefix(std::string_view out_path) {
  if (out_path.size() >= kGguf.size() && out_path.substr(out_path.size() - kGguf.size()) == kGguf) {
    out_path.remove_suffix(kGguf.size());
  }
  return std::string(out_path);
}

Result<std::unique_ptr<GgufFile>> GgufFile::join_shards(std::unique_ptr<GgufFile> first, uint32_t n_split) {
  const std::string path = first->name_;
  OX_ASSIGN_OR_RETURN(const uint32_t no, first->get_u32(kSplitNoKey));
  if (no != 0) {
    const std::optional<std::string> prefix = split_prefix(path, no, n_split);
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s is shard %u of %u of a split model: load its first shard%s%s", path.c_str(), no + 1,
                        n_split, prefix ? ", " : " (-00001-of-...)",
                        prefix ? split_path(*prefix, 0, n_split).c_str() : ""));
  }
  const std::optional<std::string> prefix = split_prefix(path, 0, n_split);
  if (!prefix) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: split.count is %u, but the name does not end in %s, so its other shards cannot be found "
                        "(llama.cpp's gguf-split naming)",
                        path.c_str(), n_split, split_path("", 0, n_split).c_str()));
  }
  OX_ASSIGN_OR_RETURN(const uint64_t n_tensors_all, first->get_u64(kSplitTensorsCountKey));
  for (uint32_t i = 1; i < n_split; ++i) {
    const std::string shard_path = split_path(*prefix, i, n_split);
    const std::string whose = strfmt("shard %u of %u of %s", i + 1, n_split, path.c_str());
    Result<std::unique_ptr<GgufFile>> opened = open_one(shard_path);
    if (!opened.ok()) return opened.status().with_context(whose);
    const GgufFile& shard = **opened;
    if (shard.find(kSplitNoKey) == nullptr || shard.find(kSplitCountKey) == nullptr) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: no split.no / split.count keys: not %s", shard_path.c_str(),
                                                   whose.c_str()));
    }
    OX_ASSIGN_OR_RETURN(const uint32_t shard_no, shard.get_u32(kSplitNoKey));
    OX_ASSIGN_OR_RETURN(const uint32_t shard_count, shard.get_u32(kSplitCountKey));
    if (shard_no != i || shard_count != n_split) {
      return error(ErrorCode::kInvalidFile,
                   strfmt("%s: split.no = %u, split.count = %u; %s expects split.no = %u, split.count = %u "
                          "(a shard of another split?)",
                          shard_path.c_str(), shard_no, shard_count, path.c_str(), i, n_split));
    }
    for (const TensorInfo& t : shard.tensors_) {
      if (const TensorInfo* seen = first->find_tensor(t.name)) {
        return error(ErrorCode::kInvalidFile, strfmt("%s: tensor '%s' is also in %s", shard_path.c_str(),
                                                     printable(t.name).c_str(),
                                                     first->shards_[seen->shard].path.c_str()));
      }
      first->tensor_index_.emplace(t.name, first->tensors_.size());
      first->tensors_.push_back(t);
      first->tensors_.back().shard = i;
    }
    first->shards_.push_back(ShardInfo{shard_path, shard.bytes_.size(), shard.tensors_.size()});
    first->writable_ = first->writable_ && shard.writable_;
    first->later_shards_.push_back(std::move(*opened));
  }
  if (first->tensors_.size() != n_tensors_all) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: split.tensors.count is %llu, but its %u shards hold %zu tensors", path.c_str(),
                        static_cast<ull>(n_tensors_all), n_split, first->tensors_.size()));
  }
  return first;
}

namespace {

// One shard of write_split: its metadata (the split keys last), then its tensors, streamed.
Status write_shard(const GgufFile& in, uint32_t no, uint32_t count, size_t begin, size_t end, const std::string& path) {
  GgufWriter w;
  if (no == 0) {
    for (const auto& [key, value] : in.metadata()) {
      if (!is_split_key(key)) OX_TRY(w.add(key, encode_value(value)));
    }
  }
  // gguf-split's order: split.count is set last (gguf_set_val moves a key it replaces to the end).
  OX_TRY(w.add(kSplitNoKey, encode_u16(static_cast<uint16_t>(no))));
  OX_TRY(w.add(kSplitTensorsCountKey, encode_i32(static_cast<int32_t>(in.tensors().size()))));
  OX_TRY(w.add(kSplitCountKey, encode_u16(static_cast<uint16_t>(count))));
  for (size_t i = begin; i < end; ++i) OX_TRY(w.declare_tensor(in.tensors()[i].name, in.tensors()[i].dims,
                                                                in.tensors()[i].type));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot create %s", path.c_str()));
  Status s = w.begin(f);
  for (size_t i = begin; i < end && s.is_ok(); ++i) {
    const TensorInfo& t = in.tensors()[i];
    s = w.write_tensor_data(t.name, std::span<const uint8_t>(t.data, t.n_bytes));
  }
  if (s.is_ok()) s = w.finish();
  if (std::fclose(f) != 0 && s.is_ok()) s = error(ErrorCode::kIo, "close failed");
  return s.with_context(path);
}

}  // namespace

Result<std::vector<std::string>> write_split(const GgufFile& in, std::string_view prefix, uint32_t max_tensors) {
  const size_t n_tensors = in.tensors().size();
  if (max_tensors == 0 || n_tensors == 0 || n_tensors > 0x7fffffff) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: cannot split %zu tensors %u to a shard", in.name().c_str(),
                                                     n_tensors, max_tensors));
  }
  const size_t count = (n_tensors + max_tensors - 1) / max_tensors;
  if (count > 0xffff) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: %zu shards are more than split.count holds",
                                                     in.name().c_str(), count));
  }
  std::vector<std::string> paths;
  for (uint32_t no = 0; no < count; ++no) {
    paths.push_back(split_path(prefix, no, static_cast<uint32_t>(count)));
    const size_t begin = size_t{no} * max_tensors;
    const Status s = write_shard(in, no, static_cast<uint32_t>(count), begin, std::min(n_tensors, begin + max_tensors),
                                 paths.back());
    if (!s.is_ok()) {
      for (const std::string& p : paths) std::remove(p.c_str());
      return s;
    }
  }
  return paths;
}

}  // namespace ox::gguf
