// GgufWriter: builds GGUF v3 files (metadata of every type, tensors, alignment and padding),
// either whole in memory or streamed to a FILE* tensor by tensor for models too big to hold twice.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/quant/dtype.h"

namespace ox::gguf {

// One metadata value as GGUF stores it after the type tag (little-endian payload).
// For ARRAY, `elem_type` is the element type; for nested arrays each element's payload follows.
struct EncodedValue {
  ValueType type = ValueType::UINT8;
  ValueType elem_type = ValueType::UINT8;  // ARRAY only
  std::vector<uint8_t> bytes;
};

EncodedValue encode_u8(uint8_t v);
EncodedValue encode_i8(int8_t v);
EncodedValue encode_u16(uint16_t v);
EncodedValue encode_i16(int16_t v);
EncodedValue encode_u32(uint32_t v);
EncodedValue encode_i32(int32_t v);
EncodedValue encode_u64(uint64_t v);
EncodedValue encode_i64(int64_t v);
EncodedValue encode_f32(float v);
EncodedValue encode_f64(double v);
EncodedValue encode_bool(bool v);
EncodedValue encode_string(std::string_view v);

// Arrays of fixed-size scalars. T is one of uint8_t..int64_t, float, double.
template <typename T>
EncodedValue encode_array(std::span<const T> values);
EncodedValue encode_bool_array(const std::vector<bool>& values);
EncodedValue encode_string_array(std::span<const std::string> values);
EncodedValue encode_string_array(std::span<const std::string_view> values);
// An array whose elements are `elems` (all of type `elem_type`; ARRAY gives nested arrays).
Result<EncodedValue> encode_array_of(ValueType elem_type, std::span<const EncodedValue> elems);
// A parsed value re-encoded unchanged (copying metadata from one file to another).
EncodedValue encode_value(const Value& value);

class GgufWriter {
 public:
  // ---- metadata, written in the order added ----
  // Errors (kInvalidArgument): duplicate key; general.alignment not an integer power of two.
  Status add(std::string_view key, EncodedValue value);
  Status add_u32(std::string_view key, uint32_t v) { return add(key, encode_u32(v)); }
  Status add_i32(std::string_view key, int32_t v) { return add(key, encode_i32(v)); }
  Status add_u64(std::string_view key, uint64_t v) { return add(key, encode_u64(v)); }
  Status add_f32(std::string_view key, float v) { return add(key, encode_f32(v)); }
  Status add_bool(std::string_view key, bool v) { return add(key, encode_bool(v)); }
  Status add_string(std::string_view key, std::string_view v) { return add(key, encode_string(v)); }
  Status add_string_array(std::string_view key, std::span<const std::string> v) {
    return add(key, encode_string_array(v));
  }
  template <typename T>
  Status add_array(std::string_view key, std::span<const T> v) { return add(key, encode_array<T>(v)); }
  // Adds general.alignment (UINT32) or replaces its value.
  Status set_alignment(uint32_t alignment);
  uint64_t alignment() const { return alignment_; }

  // ---- tensors: data is laid out in the order declared, each at an aligned offset ----
  // Errors (kInvalidArgument): duplicate or empty name, n_dims outside 1..4, a zero dim, a row
  // length not a multiple of the type's block size, data of the wrong size.
  Status add_tensor(std::string_view name, std::span<const uint64_t> dims, DType type,
                    std::span<const uint8_t> data);  // copies the bytes
  Status declare_tensor(std::string_view name, std::span<const uint64_t> dims, DType type);
  size_t tensor_count() const { return tensors_.size(); }
  // Offset of tensor `index`'s data within the data section (valid once all are declared).
  uint64_t tensor_offset(size_t index) const;

  // ---- whole file (every tensor added with its data) ----
  Result<std::vector<uint8_t>> to_bytes() const;
  Status write_file(const std::string& path) const;

  // ---- streaming: begin() writes header, tensor infos and padding; then write_tensor_data()
  // for each declared tensor in declaration order (or write_tensor_part() for consecutive pieces of
  // it, which together must be its size); finish() checks that all were written. ----
  Status begin(FILE* out);
  Status write_tensor_data(std::string_view name, std::span<const uint8_t> data);
  Status write_tensor_part(std::string_view name, std::span<const uint8_t> part);
  Status finish();

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    DType type = DType::F32;
    uint64_t n_bytes = 0;
    std::vector<uint8_t> data;  // empty when declared for streaming
    bool has_data = false;
  };
  std::vector<uint8_t> header() const;  // magic .. tensor infos, padded to the alignment
  Status write_bytes(std::span<const uint8_t> bytes);

  std::vector<std::pair<std::string, EncodedValue>> metadata_;
  std::vector<Tensor> tensors_;
  uint64_t alignment_ = 32;
  // streaming state
  FILE* out_ = nullptr;
  bool begun_ = false;
  size_t next_tensor_ = 0;
  uint64_t written_of_tensor_ = 0;  // bytes of tensors_[next_tensor_] written so far
};

}  // namespace ox::gguf
