// GgufFile: a parsed, validated GGUF (v2/v3) file. Parsing never aborts and never reads out of
// bounds: every malformed input returns an error naming the file, the byte offset and the field.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/status.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"

namespace ox {
class MappedFile;
}

namespace ox::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType type);

// One metadata value. Scalars are held decoded; strings point into the file bytes.
// Arrays of fixed-size scalars keep a pointer to their little-endian bytes (read with the
// accessors, which copy: the bytes may be unaligned); arrays of strings and nested arrays are decoded.
struct Value {
  ValueType type = ValueType::UINT8;
  uint64_t u = 0;       // UINT8..UINT64 and BOOL
  int64_t i = 0;        // INT8..INT64
  double f = 0;         // FLOAT32 / FLOAT64
  std::string_view str; // STRING

  ValueType elem_type = ValueType::UINT8;  // ARRAY only
  uint64_t count = 0;                      // ARRAY only: number of elements
  const uint8_t* raw = nullptr;            // ARRAY of fixed-size scalars: first element's bytes
  std::vector<std::string_view> strings;   // ARRAY of STRING
  std::vector<Value> items;                // ARRAY of ARRAY

  bool is_integer() const;  // any of the 8 integer types (not BOOL)
  bool is_number() const;   // integer or float
  // Element k of a numeric array, converted (k < count, elem numeric; callers check).
  double number_at(uint64_t k) const;
  int64_t integer_at(uint64_t k) const;
  float f32_at(uint64_t k) const;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // dims[0] is the contiguous (row) dimension, as GGUF stores it
  DType type = DType::F32;
  uint64_t offset = 0;         // relative to the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // inside the file's bytes, validated to be in bounds
  uint32_t shard = 0;             // the file of a split model that holds it (GgufFile::shards())

  uint64_t rows() const;  // product of dims[1..]
};

// One file of a model: the file itself, or a shard of a split model (split.h).
struct ShardInfo {
  std::string path;
  uint64_t n_bytes = 0;
  size_t n_tensors = 0;
};

class GgufFile {
 public:
  // Maps the file read-only (native) or reads it into memory (wasm) and parses it. The first shard
  // of a split model (split.count > 1) opens every shard: its metadata, all shards' tensors. Each
  // shard must say it is shard i of the same count, and the tensors must be the split.tensors.count
  // the first announces, each once; errors name the shard file.
  static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
  // Parses bytes someone else owns (the JS side in wasm, tests). `owner` keeps them alive.
  // `writable`: the caller lets this file rewrite the tensor data in place (relayout()).
  static Result<std::unique_ptr<GgufFile>> parse(std::span<const uint8_t> bytes, std::string name,
                                                 std::shared_ptr<const void> owner = nullptr,
                                                 bool writable = false);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  std::span<const uint8_t> bytes() const { return bytes_; }  // of the first shard of a split model
  // The model's files: one, or the shards of a split model in order; and their bytes together.
  const std::vector<ShardInfo>& shards() const { return shards_; }
  uint64_t file_bytes() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;

  // Typed getters: error if the key is missing or of an incompatible type (message names the key).
  // Integer getters accept any integer type whose value fits; float getters accept any number.
  Result<uint64_t> get_u64(std::string_view key) const;
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<int64_t> get_i64(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string_view> get_string(std::string_view key) const;
  // The value if present, else the fallback; an error only if present with the wrong type.
  Result<uint32_t> get_u32_or(std::string_view key, uint32_t fallback) const;
  Result<float> get_f32_or(std::string_view key, float fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;
  Result<std::string_view> get_string_or(std::string_view key, std::string_view fallback) const;
  // Array getters: error unless the key holds an ARRAY of the matching element kind.
  Result<const std::vector<std::string_view>*> get_string_array(std::string_view key) const;
  Result<const Value*> get_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // One pass over the model (quantize): where tensor t's file is mapped, the pages wholly inside
  // its bytes [offset, offset + size) leave this process's memory (MappedFile::release).
  void release_tensor_bytes(const TensorInfo& t, uint64_t offset, uint64_t size) const;

  // Whether the tensor data may be rewritten in place: bytes read into memory (wasm's open()) or
  // handed over as writable; never a read-only mapping.
  bool writable() const { return writable_; }
  // Converts the data of every tensor of type `from`, in place with `fn`, into the internal layout
  // `to` (dtype.h: same block size and bytes) and records `to` as its type. Returns how many
  // tensors changed; 0 where the bytes are not writable().
  int relayout(DType from, DType to, RelayoutFn fn);

 private:
  friend class Parser;
  static Result<std::unique_ptr<GgufFile>> open_one(const std::string& path);  // this file alone
  // Opens the other shards of the split model whose first shard is `first` and takes their tensors.
  static Result<std::unique_ptr<GgufFile>> join_shards(std::unique_ptr<GgufFile> first, uint32_t n_split);
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::span<const uint8_t> bytes_;
  std::shared_ptr<const void> owner_;
  const MappedFile* mapped_file_ = nullptr;  // owner_, where open_one() made it
  bool writable_ = false;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
  std::vector<ShardInfo> shards_;
  std::vector<std::unique_ptr<GgufFile>> later_shards_;  // hold the mappings tensors_ point into
};

}  // namespace ox::gguf
