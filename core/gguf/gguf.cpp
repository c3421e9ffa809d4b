// GgufFile: opening, metadata lookup and the typed getters; Value element accessors.
// The byte-level reader lives in parser.cpp.
#include "core/gguf/gguf.h"

#include <bit>
#include <cstring>
#include <limits>

#include "core/base/mapped_file.h"
#include "core/gguf/split.h"
#include "core/gguf/value_io.h"

namespace ox::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF bytes are read in place: the host must be little-endian");

namespace {
using ull = unsigned long long;
}  // namespace

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::UINT8: return "UINT8";
    case ValueType::INT8: return "INT8";
    case ValueType::UINT16: return "UINT16";
    case ValueType::INT16: return "INT16";
    case ValueType::UINT32: return "UINT32";
    case ValueType::INT32: return "INT32";
    case ValueType::FLOAT32: return "FLOAT32";
    case ValueType::BOOL: return "BOOL";
    case ValueType::STRING: return "STRING";
    case ValueType::ARRAY: return "ARRAY";
    case ValueType::UINT64: return "UINT64";
    case ValueType::INT64: return "INT64";
    case ValueType::FLOAT64: return "FLOAT64";
  }
  return "UNKNOWN";
}

uint32_t value_type_size(ValueType type) {
  switch (type) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: case ValueType::ARRAY: return 0;
  }
  return 0;
}

bool is_signed_integer(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 || t == ValueType::INT64;
}
bool is_unsigned_integer(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 || t == ValueType::UINT64;
}
bool is_float(ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

void decode_scalar(ValueType type, const uint8_t* p, Value* out) {
  switch (type) {
    case ValueType::UINT8: case ValueType::BOOL: out->u = p[0]; break;
    case ValueType::INT8: { int8_t v; std::memcpy(&v, p, 1); out->i = v; break; }
    case ValueType::UINT16: { uint16_t v; std::memcpy(&v, p, 2); out->u = v; break; }
    case ValueType::INT16: { int16_t v; std::memcpy(&v, p, 2); out->i = v; break; }
    case ValueType::UINT32: { uint32_t v; std::memcpy(&v, p, 4); out->u = v; break; }
    case ValueType::INT32: { int32_t v; std::memcpy(&v, p, 4); out->i = v; break; }
    case ValueType::UINT64: { uint64_t v; std::memcpy(&v, p, 8); out->u = v; break; }
    case ValueType::INT64: { int64_t v; std::memcpy(&v, p, 8); out->i = v; break; }
    case ValueType::FLOAT32: { float v; std::memcpy(&v, p, 4); out->f = v; break; }
    case ValueType::FLOAT64: { double v; std::memcpy(&v, p, 8); out->f = v; break; }
    case ValueType::STRING: case ValueType::ARRAY: break;
  }
}

std::string printable(std::string_view s, size_t max) {
  std::string out;
  const size_t n = s.size() < max ? s.size() : max;
  out.reserve(n + 8);
  for (size_t k = 0; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += strfmt("\\x%02x", c);
    }
  }
  if (n < s.size()) out += strfmt("...(%llu bytes)", static_cast<ull>(s.size()));
  return out;
}

// ---- Value ----

bool Value::is_integer() const { return is_signed_integer(type) || is_unsigned_integer(type); }
bool Value::is_number() const { return is_integer() || is_float(type); }

namespace {
// Element k of a fixed-size array decoded as a scalar Value; false if not decodable.
bool element(const Value& v, uint64_t k, Value* out) {
  if (v.type != ValueType::ARRAY || v.raw == nullptr || k >= v.count) return false;
  const uint32_t size = value_type_size(v.elem_type);
  if (size == 0) return false;
  out->type = v.elem_type;
  decode_scalar(v.elem_type, v.raw + k * size, out);
  return true;
}
}  // namespace

double Value::number_at(uint64_t k) const {
  Value e;
  if (!element(*this, k, &e)) return 0;
  if (is_float(e.type)) return e.f;
  if (is_signed_integer(e.type)) return static_cast<double>(e.i);
  return static_cast<double>(e.u);
}

int64_t Value::integer_at(uint64_t k) const {
  Value e;
  if (!element(*this, k, &e)) return 0;
  if (is_float(e.type)) return static_cast<int64_t>(e.f);
  if (is_signed_integer(e.type)) return e.i;
  return static_cast<int64_t>(e.u);
}

float Value::f32_at(uint64_t k) const { return static_cast<float>(number_at(k)); }

uint64_t TensorInfo::rows() const {
  uint64_t r = 1;
  for (size_t d = 1; d < dims.size(); ++d) r *= dims[d];
  return r;
}

// ---- GgufFile ----

Result<std::unique_ptr<GgufFile>> GgufFile::open_one(const std::string& path) {
  OX_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  const std::span<const uint8_t> bytes = file->bytes();
  const bool writable = file->writable();
  const MappedFile* mapped = file.get();
  OX_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> parsed, parse(bytes, path, std::move(file), writable));
  parsed->mapped_file_ = mapped;
  return parsed;
}

void GgufFile::release_tensor_bytes(const TensorInfo& t, uint64_t offset, uint64_t size) const {
  const GgufFile& holder = t.shard == 0 ? *this : *later_shards_[t.shard - 1];
  OX_CHECK(offset <= t.n_bytes && size <= t.n_bytes - offset);
  if (holder.mapped_file_ != nullptr) holder.mapped_file_->release(std::span<const uint8_t>(t.data + offset, size));
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
  OX_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, open_one(path));
  OX_ASSIGN_OR_RETURN(const uint32_t n_split, file->get_u32_or(kSplitCountKey, 1));
  if (n_split <= 1) return file;
  return join_shards(std::move(file), n_split);
}

uint64_t GgufFile::file_bytes() const {
  uint64_t n = 0;
  for (const ShardInfo& s : shards_) n += s.n_bytes;
  return n;
}

int GgufFile::relayout(DType from, DType to, RelayoutFn fn) {
  if (!writable_ || fn == nullptr) return 0;
  OX_CHECK(dtype_facts(from).block_size == dtype_facts(to).block_size &&
           dtype_facts(from).type_size == dtype_facts(to).type_size);
  int changed = 0;
  for (TensorInfo& t : tensors_) {
    if (t.type != from) continue;
    // The parser checked that the data lies inside bytes_, which writable_ says we may change.
    fn(const_cast<uint8_t*>(t.data), static_cast<int64_t>(t.n_elements / dtype_facts(from).block_size));
    t.type = to;
    ++changed;
  }
  return changed;
}

const Value* GgufFile::find(std::string_view key) const {
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

Status missing(const std::string& file, std::string_view key) {
  return error(ErrorCode::kInvalidFile,
               strfmt("%s: metadata key '%s' not found", file.c_str(), printable(key).c_str()));
}

Status wrong_type(const std::string& file, std::string_view key, const Value& v, const char* expected) {
  std::string actual = value_type_name(v.type);
  if (v.type == ValueType::ARRAY) actual += strfmt(" of %s", value_type_name(v.elem_type));
  return error(ErrorCode::kInvalidFile, strfmt("%s: metadata key '%s' is %s, expected %s", file.c_str(),
                                               printable(key).c_str(), actual.c_str(), expected));
}

// Any integer value checked to lie in 0..max; the message names the key and the value.
Result<uint64_t> unsigned_value(const std::string& file, std::string_view key, const Value& v,
                                uint64_t max, const char* expected) {
  if (!v.is_integer()) return wrong_type(file, key, v, expected);
  if (is_signed_integer(v.type) && v.i < 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: metadata key '%s' is %lld, expected %s",
                                                 file.c_str(), printable(key).c_str(),
                                                 static_cast<long long>(v.i), expected));
  }
  const uint64_t u = is_signed_integer(v.type) ? static_cast<uint64_t>(v.i) : v.u;
  if (u > max) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: metadata key '%s' is %llu, expected %s",
                                                 file.c_str(), printable(key).c_str(),
                                                 static_cast<ull>(u), expected));
  }
  return u;
}

}  // namespace

Result<uint64_t> GgufFile::get_u64(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  return unsigned_value(name_, key, *v, std::numeric_limits<uint64_t>::max(), "an unsigned integer");
}

Result<uint32_t> GgufFile::get_u32(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  OX_ASSIGN_OR_RETURN(uint64_t u, unsigned_value(name_, key, *v, std::numeric_limits<uint32_t>::max(),
                                                 "an integer in 0..4294967295"));
  return static_cast<uint32_t>(u);
}

Result<int64_t> GgufFile::get_i64(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (!v->is_integer()) return wrong_type(name_, key, *v, "an integer");
  if (is_signed_integer(v->type)) return v->i;
  if (v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: metadata key '%s' is %llu, too large for int64",
                                                 name_.c_str(), printable(key).c_str(),
                                                 static_cast<ull>(v->u)));
  }
  return static_cast<int64_t>(v->u);
}

Result<float> GgufFile::get_f32(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (!v->is_number()) return wrong_type(name_, key, *v, "a number");
  if (is_float(v->type)) return static_cast<float>(v->f);
  if (is_signed_integer(v->type)) return static_cast<float>(v->i);
  return static_cast<float>(v->u);
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (v->type != ValueType::BOOL) return wrong_type(name_, key, *v, "BOOL");
  return v->u != 0;
}

Result<std::string_view> GgufFile::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (v->type != ValueType::STRING) return wrong_type(name_, key, *v, "STRING");
  return v->str;
}

Result<uint32_t> GgufFile::get_u32_or(std::string_view key, uint32_t fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_u32(key);
}

Result<float> GgufFile::get_f32_or(std::string_view key, float fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_f32(key);
}

Result<bool> GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_bool(key);
}

Result<std::string_view> GgufFile::get_string_or(std::string_view key, std::string_view fallback) const {
  if (find(key) == nullptr) return fallback;
  return get_string(key);
}

Result<const std::vector<std::string_view>*> GgufFile::get_string_array(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (v->type != ValueType::ARRAY || v->elem_type != ValueType::STRING) {
    return wrong_type(name_, key, *v, "ARRAY of STRING");
  }
  return &v->strings;
}

Result<const Value*> GgufFile::get_array(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(name_, key);
  if (v->type != ValueType::ARRAY) return wrong_type(name_, key, *v, "ARRAY");
  return v;
}

}  // namespace ox::gguf
