// GgufWriter: GGUF v3 encoding of metadata and tensors, in memory or streamed to a FILE*.
#include "core/gguf/writer.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "core/gguf/value_io.h"

namespace ox::gguf {
namespace {

using ull = unsigned long long;
constexpr uint32_t kMagic = 0x46554747;  // "GGUF"
constexpr uint32_t kVersion = 3;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {  // the host is little-endian (static_assert in gguf.cpp)
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

template <typename T>
EncodedValue scalar(ValueType type, T v) {
  EncodedValue e;
  e.type = type;
  put(e.bytes, v);
  return e;
}

EncodedValue array_header(ValueType elem, uint64_t count) {
  EncodedValue e;
  e.type = ValueType::ARRAY;
  e.elem_type = elem;
  put<uint32_t>(e.bytes, static_cast<uint32_t>(elem));
  put<uint64_t>(e.bytes, count);
  return e;
}

template <typename T> constexpr ValueType kTypeOf = ValueType::UINT8;
template <> constexpr ValueType kTypeOf<int8_t> = ValueType::INT8;
template <> constexpr ValueType kTypeOf<uint16_t> = ValueType::UINT16;
template <> constexpr ValueType kTypeOf<int16_t> = ValueType::INT16;
template <> constexpr ValueType kTypeOf<uint32_t> = ValueType::UINT32;
template <> constexpr ValueType kTypeOf<int32_t> = ValueType::INT32;
template <> constexpr ValueType kTypeOf<uint64_t> = ValueType::UINT64;
template <> constexpr ValueType kTypeOf<int64_t> = ValueType::INT64;
template <> constexpr ValueType kTypeOf<float> = ValueType::FLOAT32;
template <> constexpr ValueType kTypeOf<double> = ValueType::FLOAT64;

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

EncodedValue encode_u8(uint8_t v) { return scalar(ValueType::UINT8, v); }
EncodedValue encode_i8(int8_t v) { return scalar(ValueType::INT8, v); }
EncodedValue encode_u16(uint16_t v) { return scalar(ValueType::UINT16, v); }
EncodedValue encode_i16(int16_t v) { return scalar(ValueType::INT16, v); }
EncodedValue encode_u32(uint32_t v) { return scalar(ValueType::UINT32, v); }
EncodedValue encode_i32(int32_t v) { return scalar(ValueType::INT32, v); }
EncodedValue encode_u64(uint64_t v) { return scalar(ValueType::UINT64, v); }
EncodedValue encode_i64(int64_t v) { return scalar(ValueType::INT64, v); }
EncodedValue encode_f32(float v) { return scalar(ValueType::FLOAT32, v); }
EncodedValue encode_f64(double v) { return scalar(ValueType::FLOAT64, v); }
EncodedValue encode_bool(bool v) { return scalar<uint8_t>(ValueType::BOOL, v ? 1 : 0); }

EncodedValue encode_string(std::string_view v) {
  EncodedValue e;
  e.type = ValueType::STRING;
  put_string(e.bytes, v);
  return e;
}

template <typename T>
EncodedValue encode_array(std::span<const T> values) {
  EncodedValue e = array_header(kTypeOf<T>, values.size());
  for (const T& v : values) put(e.bytes, v);
  return e;
}
template EncodedValue encode_array<uint8_t>(std::span<const uint8_t>);
template EncodedValue encode_array<int8_t>(std::span<const int8_t>);
template EncodedValue encode_array<uint16_t>(std::span<const uint16_t>);
template EncodedValue encode_array<int16_t>(std::span<const int16_t>);
template EncodedValue encode_array<uint32_t>(std::span<const uint32_t>);
template EncodedValue encode_array<int32_t>(std::span<const int32_t>);
template EncodedValue encode_array<uint64_t>(std::span<const uint64_t>);
template EncodedValue encode_array<int64_t>(std::span<const int64_t>);
template EncodedValue encode_array<float>(std::span<const float>);
template EncodedValue encode_array<double>(std::span<const double>);

EncodedValue encode_bool_array(const std::vector<bool>& values) {
  EncodedValue e = array_header(ValueType::BOOL, values.size());
  for (bool v : values) put<uint8_t>(e.bytes, v ? 1 : 0);
  return e;
}

EncodedValue encode_string_array(std::span<const std::string> values) {
  EncodedValue e = array_header(ValueType::STRING, values.size());
  for (const std::string& v : values) put_string(e.bytes, v);
  return e;
}

EncodedValue encode_string_array(std::span<const std::string_view> values) {
  EncodedValue e = array_header(ValueType::STRING, values.size());
  for (std::string_view v : values) put_string(e.bytes, v);
  return e;
}

Result<EncodedValue> encode_array_of(ValueType elem_type, std::span<const EncodedValue> elems) {
  EncodedValue e = array_header(elem_type, elems.size());
  for (size_t k = 0; k < elems.size(); ++k) {
    if (elems[k].type != elem_type) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("array of %s: element %llu is %s", value_type_name(elem_type),
                          static_cast<ull>(k), value_type_name(elems[k].type)));
    }
    e.bytes.insert(e.bytes.end(), elems[k].bytes.begin(), elems[k].bytes.end());
  }
  return e;
}

namespace {
void append_payload(std::vector<uint8_t>& out, const Value& v) {
  switch (v.type) {
    case ValueType::STRING: put_string(out, v.str); return;
    case ValueType::ARRAY: {
      put<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
      put<uint64_t>(out, v.count);
      const uint32_t size = value_type_size(v.elem_type);
      if (size != 0) {
        if (v.raw != nullptr) out.insert(out.end(), v.raw, v.raw + v.count * size);
      } else if (v.elem_type == ValueType::STRING) {
        for (std::string_view s : v.strings) put_string(out, s);
      } else {
        for (const Value& item : v.items) append_payload(out, item);
      }
      return;
    }
    case ValueType::UINT8: case ValueType::BOOL: put<uint8_t>(out, static_cast<uint8_t>(v.u)); return;
    case ValueType::INT8: put<int8_t>(out, static_cast<int8_t>(v.i)); return;
    case ValueType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(v.u)); return;
    case ValueType::INT16: put<int16_t>(out, static_cast<int16_t>(v.i)); return;
    case ValueType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(v.u)); return;
    case ValueType::INT32: put<int32_t>(out, static_cast<int32_t>(v.i)); return;
    case ValueType::UINT64: put<uint64_t>(out, v.u); return;
    case ValueType::INT64: put<int64_t>(out, v.i); return;
    case ValueType::FLOAT32: put<float>(out, static_cast<float>(v.f)); return;
    case ValueType::FLOAT64: put<double>(out, v.f); return;
  }
}
}  // namespace

EncodedValue encode_value(const Value& value) {
  EncodedValue e;
  e.type = value.type;
  e.elem_type = value.elem_type;
  append_payload(e.bytes, value);
  return e;
}

// ---- GgufWriter ----

Status GgufWriter::add(std::string_view key, EncodedValue value) {
  if (begun_) return error(ErrorCode::kInvalidArgument, "GgufWriter: metadata added after begin()");
  for (const auto& kv : metadata_) {
    if (kv.first == key) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("GgufWriter: duplicate metadata key '%s'", printable(key).c_str()));
    }
  }
  if (key == "general.alignment") {
    Value v;
    v.type = value.type;
    const uint32_t size = value_type_size(value.type);
    const bool is_int = is_unsigned_integer(value.type) || is_signed_integer(value.type);
    if (!is_int || value.bytes.size() != size) {
      return error(ErrorCode::kInvalidArgument, "GgufWriter: general.alignment must be an integer");
    }
    decode_scalar(value.type, value.bytes.data(), &v);
    // Same rule as the reader: any integer type holding a positive power of two.
    if (is_signed_integer(value.type)) v.u = v.i < 0 ? 0 : static_cast<uint64_t>(v.i);
    if (v.u == 0 || !std::has_single_bit(v.u) || v.u > (uint64_t{1} << 30)) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("GgufWriter: general.alignment %llu is not a power of two up to 2^30",
                          static_cast<ull>(v.u)));
    }
    alignment_ = v.u;
  }
  metadata_.emplace_back(std::string(key), std::move(value));
  return Status::ok();
}

Status GgufWriter::set_alignment(uint32_t alignment) {
  for (size_t k = 0; k < metadata_.size(); ++k) {
    if (metadata_[k].first == "general.alignment") {
      auto saved = std::move(metadata_[k]);
      metadata_.erase(metadata_.begin() + static_cast<std::ptrdiff_t>(k));
      Status s = add("general.alignment", encode_u32(alignment));
      if (!s.is_ok()) metadata_.insert(metadata_.begin() + static_cast<std::ptrdiff_t>(k), std::move(saved));
      return s;
    }
  }
  return add("general.alignment", encode_u32(alignment));
}

Status GgufWriter::declare_tensor(std::string_view name, std::span<const uint64_t> dims, DType type) {
  auto bad = [&](const std::string& what) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s': %s", printable(name).c_str(), what.c_str()));
  };
  if (begun_) return bad("declared after begin()");
  if (name.empty()) return bad("empty name");
  for (const Tensor& t : tensors_) {
    if (t.name == name) return bad("duplicate name");
  }
  if (dims.empty() || dims.size() > 4) return bad(strfmt("n_dims %llu is outside 1..4", static_cast<ull>(dims.size())));
  if (!dtype_is_known(static_cast<uint32_t>(type))) return bad("unknown type");
  const DTypeFacts& facts = dtype_facts(type);
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d == 0) return bad("a dimension is 0");
    // Far beyond any real model; keeps the byte arithmetic below clear of overflow.
    if (d > (uint64_t{1} << 48) / n) return bad("more than 2^48 elements");
    n *= d;
  }
  if (dims[0] % facts.block_size != 0) {
    return bad(strfmt("row length %llu is not a multiple of the %s block size %u",
                      static_cast<ull>(dims[0]), facts.name, facts.block_size));
  }
  Tensor t;
  t.name = std::string(name);
  t.dims.assign(dims.begin(), dims.end());
  t.type = type;
  t.n_bytes = dims[0] / facts.block_size * facts.type_size * (n / dims[0]);
  tensors_.push_back(std::move(t));
  return Status::ok();
}

Status GgufWriter::add_tensor(std::string_view name, std::span<const uint64_t> dims, DType type,
                              std::span<const uint8_t> data) {
  OX_TRY(declare_tensor(name, dims, type));
  Tensor& t = tensors_.back();
  if (data.size() != t.n_bytes) {
    const uint64_t expected = t.n_bytes;
    tensors_.pop_back();
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s': %llu bytes of data, expected %llu",
                        printable(name).c_str(), static_cast<ull>(data.size()), static_cast<ull>(expected)));
  }
  t.data.assign(data.begin(), data.end());
  t.has_data = true;
  return Status::ok();
}

uint64_t GgufWriter::tensor_offset(size_t index) const {
  uint64_t offset = 0;
  for (size_t k = 0; k < index && k < tensors_.size(); ++k) offset += round_up(tensors_[k].n_bytes, alignment_);
  return offset;
}

std::vector<uint8_t> GgufWriter::header() const {
  std::vector<uint8_t> out;
  put<uint32_t>(out, kMagic);
  put<uint32_t>(out, kVersion);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(value.type));
    out.insert(out.end(), value.bytes.begin(), value.bytes.end());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put<uint64_t>(out, d);
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put<uint64_t>(out, offset);
    offset += round_up(t.n_bytes, alignment_);
  }
  out.resize(static_cast<size_t>(round_up(out.size(), alignment_)), 0);
  return out;
}

Result<std::vector<uint8_t>> GgufWriter::to_bytes() const {
  for (const Tensor& t : tensors_) {
    if (!t.has_data) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("GgufWriter: tensor '%s' was declared without data; stream it with begin()",
                          printable(t.name).c_str()));
    }
  }
  std::vector<uint8_t> out = header();
  for (const Tensor& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.resize(static_cast<size_t>(round_up(out.size(), alignment_)), 0);
  }
  return out;
}

Status GgufWriter::write_file(const std::string& path) const {
  OX_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, to_bytes());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return error(ErrorCode::kIo, strfmt("%s: cannot create: %s", path.c_str(), std::strerror(errno)));
  }
  const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (n != bytes.size() || !closed) {
    return error(ErrorCode::kIo, strfmt("%s: write failed: %s", path.c_str(), std::strerror(err)));
  }
  return Status::ok();
}

Status GgufWriter::write_bytes(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return Status::ok();
  if (std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size()) {
    return error(ErrorCode::kIo, strfmt("GgufWriter: write failed: %s", std::strerror(errno)));
  }
  return Status::ok();
}

Status GgufWriter::begin(FILE* out) {
  if (begun_) return error(ErrorCode::kInvalidArgument, "GgufWriter: begin() called twice");
  if (out == nullptr) return error(ErrorCode::kInvalidArgument, "GgufWriter: begin() with no FILE");
  out_ = out;
  begun_ = true;
  next_tensor_ = 0;
  const std::vector<uint8_t> h = header();
  return write_bytes(h);
}

Status GgufWriter::write_tensor_data(std::string_view name, std::span<const uint8_t> data) {
  if (begun_ && next_tensor_ < tensors_.size() && tensors_[next_tensor_].name == name &&
      data.size() != tensors_[next_tensor_].n_bytes) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s': %llu bytes of data, expected %llu", printable(name).c_str(),
                        static_cast<ull>(data.size()), static_cast<ull>(tensors_[next_tensor_].n_bytes)));
  }
  return write_tensor_part(name, data);
}

Status GgufWriter::write_tensor_part(std::string_view name, std::span<const uint8_t> part) {
  if (!begun_) return error(ErrorCode::kInvalidArgument, "GgufWriter: tensor data written before begin()");
  if (next_tensor_ >= tensors_.size()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s': all declared tensors are already written",
                        printable(name).c_str()));
  }
  const Tensor& t = tensors_[next_tensor_];
  if (t.name != name) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s' written out of order: expected '%s'",
                        printable(name).c_str(), printable(t.name).c_str()));
  }
  if (part.size() > t.n_bytes - written_of_tensor_) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: tensor '%s': %llu more bytes of data after %llu, expected %llu in all",
                        printable(name).c_str(), static_cast<ull>(part.size()),
                        static_cast<ull>(written_of_tensor_), static_cast<ull>(t.n_bytes)));
  }
  OX_TRY(write_bytes(part));
  written_of_tensor_ += part.size();
  if (written_of_tensor_ < t.n_bytes) return Status::ok();
  static const uint8_t kZeros[256] = {};
  uint64_t pad = round_up(t.n_bytes, alignment_) - t.n_bytes;
  while (pad > 0) {
    const uint64_t n = pad < sizeof(kZeros) ? pad : sizeof(kZeros);
    OX_TRY(write_bytes(std::span<const uint8_t>(kZeros, static_cast<size_t>(n))));
    pad -= n;
  }
  ++next_tensor_;
  written_of_tensor_ = 0;
  return Status::ok();
}

Status GgufWriter::finish() {
  if (!begun_) return error(ErrorCode::kInvalidArgument, "GgufWriter: finish() before begin()");
  if (next_tensor_ != tensors_.size()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("GgufWriter: finish() with %llu of %llu tensors written; next is '%s'",
                        static_cast<ull>(next_tensor_), static_cast<ull>(tensors_.size()),
                        printable(tensors_[next_tensor_].name).c_str()));
  }
  if (std::fflush(out_) != 0) {
    return error(ErrorCode::kIo, strfmt("GgufWriter: flush failed: %s", std::strerror(errno)));
  }
  return Status::ok();
}

}  // namespace ox::gguf
