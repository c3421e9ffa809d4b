// GgufFile::parse: the GGUF v2/v3 reader. Every count and length is checked against the bytes
// left before anything is allocated or read, so hostile files fail fast with a precise message.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "core/gguf/gguf.h"
#include "core/gguf/value_io.h"

namespace ox::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMaxDims = 4;
constexpr uint32_t kMaxArrayDepth = 8;   // nested arrays deeper than this are rejected
// Smallest possible encodings, used to bound counts by the bytes left before allocating.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;             // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, 1 dim, type, offset
constexpr uint64_t kMinStringBytes = 8;
constexpr uint64_t kMinArrayBytes = 4 + 8;

using ull = unsigned long long;

}  // namespace

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, const std::string& name)
      : data_(bytes.data()), size_(bytes.size()), name_(name) {}

  Status run(GgufFile* f);

 private:
  uint64_t left() const { return size_ - pos_; }

  // "<file>: offset <at>: <context>: <what>"
  Status fail(uint64_t at, const std::string& what, ErrorCode code = ErrorCode::kInvalidFile) const {
    std::string msg = strfmt("%s: offset %llu: ", name_.c_str(), static_cast<ull>(at));
    if (!ctx_.empty()) msg += ctx_ + ": ";
    return error(code, msg + what);
  }

  template <typename T>
  Status read(T* out, const char* what) {
    if (sizeof(T) > left()) {
      return fail(pos_, strfmt("%s needs %u bytes but only %llu are left", what,
                               static_cast<unsigned>(sizeof(T)), static_cast<ull>(left())));
    }
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::ok();
  }

  Status read_string(std::string_view* out, const char* what, uint64_t index = kNoIndex);
  Status read_value_type(ValueType* out, const char* what);
  Status read_value(ValueType type, uint32_t depth, Value* out);
  Status read_array(uint32_t depth, Value* out);
  Status read_header(GgufFile* f, uint64_t* n_tensors, uint64_t* n_kv);
  Status read_metadata(GgufFile* f, uint64_t n_kv);
  Status apply_alignment(GgufFile* f);
  Status read_tensor_info(GgufFile* f, uint64_t index, uint64_t n_tensors);
  Status check_tensor_data(GgufFile* f);

  static constexpr uint64_t kNoIndex = std::numeric_limits<uint64_t>::max();

  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& name_;
  std::string ctx_;                        // what is being read, for messages
  uint64_t alignment_value_offset_ = 0;    // where general.alignment's value starts
  std::vector<uint64_t> info_offsets_;     // per tensor: where its info record starts
};

Status Parser::read_string(std::string_view* out, const char* what, uint64_t index) {
  const uint64_t at = pos_;
  uint64_t len = 0;
  if (8 > left()) {
    return fail(pos_, strfmt("%s length needs 8 bytes but only %llu are left", what,
                             static_cast<ull>(left())));
  }
  std::memcpy(&len, data_ + pos_, 8);
  pos_ += 8;
  if (len > left()) {
    std::string which = index == kNoIndex ? std::string(what)
                                          : strfmt("%s %llu", what, static_cast<ull>(index));
    return fail(at, strfmt("%s: string length %llu exceeds the %llu bytes left", which.c_str(),
                           static_cast<ull>(len), static_cast<ull>(left())));
  }
  *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
  pos_ += len;
  return Status::ok();
}

Status Parser::read_value_type(ValueType* out, const char* what) {
  const uint64_t at = pos_;
  uint32_t raw = 0;
  OX_TRY(read(&raw, what));
  if (!value_type_is_known(raw)) return fail(at, strfmt("unknown %s %u", what, raw));
  *out = static_cast<ValueType>(raw);
  return Status::ok();
}

Status Parser::read_value(ValueType type, uint32_t depth, Value* out) {
  out->type = type;
  const uint64_t at = pos_;
  switch (type) {
    case ValueType::STRING: return read_string(&out->str, "value");
    case ValueType::ARRAY: return read_array(depth + 1, out);
    default: break;
  }
  const uint32_t size = value_type_size(type);
  if (size > left()) {
    return fail(at, strfmt("%s value needs %u bytes but only %llu are left", value_type_name(type),
                           size, static_cast<ull>(left())));
  }
  decode_scalar(type, data_ + pos_, out);
  if (type == ValueType::BOOL && out->u > 1) {
    return fail(at, strfmt("BOOL value %llu is neither 0 nor 1", static_cast<ull>(out->u)));
  }
  pos_ += size;
  return Status::ok();
}

Status Parser::read_array(uint32_t depth, Value* out) {
  const uint64_t at = pos_;
  if (depth > kMaxArrayDepth) {
    return fail(at, strfmt("arrays nested more than %u deep", kMaxArrayDepth));
  }
  OX_TRY(read_value_type(&out->elem_type, "array element type"));
  const uint64_t count_at = pos_;
  OX_TRY(read(&out->count, "array count"));
  const uint64_t count = out->count;
  const uint32_t elem_size = value_type_size(out->elem_type);
  if (elem_size != 0) {  // fixed-size scalars: keep a pointer to the bytes
    if (count > left() / elem_size) {
      return fail(count_at, strfmt("array count %llu (%s, %u bytes each) exceeds the %llu bytes left",
                                   static_cast<ull>(count), value_type_name(out->elem_type),
                                   elem_size, static_cast<ull>(left())));
    }
    out->raw = data_ + pos_;
    if (out->elem_type == ValueType::BOOL) {
      for (uint64_t k = 0; k < count; ++k) {
        if (out->raw[k] > 1) {
          return fail(pos_ + k, strfmt("BOOL element %llu is %u, neither 0 nor 1",
                                       static_cast<ull>(k), out->raw[k]));
        }
      }
    }
    pos_ += count * elem_size;
    return Status::ok();
  }
  const uint64_t min_size = out->elem_type == ValueType::STRING ? kMinStringBytes : kMinArrayBytes;
  if (count > left() / min_size) {
    return fail(count_at, strfmt("array count %llu exceeds the %llu bytes left (each %s needs at least %llu)",
                                 static_cast<ull>(count), static_cast<ull>(left()),
                                 value_type_name(out->elem_type), static_cast<ull>(min_size)));
  }
  if (out->elem_type == ValueType::STRING) {
    out->strings.resize(static_cast<size_t>(count));
    for (uint64_t k = 0; k < count; ++k) {
      OX_TRY(read_string(&out->strings[static_cast<size_t>(k)], "element", k));
    }
    return Status::ok();
  }
  out->items.resize(static_cast<size_t>(count));
  for (uint64_t k = 0; k < count; ++k) {
    Value& item = out->items[static_cast<size_t>(k)];
    item.type = ValueType::ARRAY;
    OX_TRY(read_array(depth + 1, &item));
  }
  return Status::ok();
}

Status Parser::read_header(GgufFile* f, uint64_t* n_tensors, uint64_t* n_kv) {
  if (size_ == 0) return fail(0, "file is empty (expected the GGUF magic)");
  if (size_ < 4) {
    return fail(0, strfmt("file is %llu bytes, too short for the GGUF magic", static_cast<ull>(size_)));
  }
  uint32_t magic = 0;
  OX_TRY(read(&magic, "magic"));
  if (magic != kMagic) {
    return fail(0, strfmt("not a GGUF file: magic bytes are %02x %02x %02x %02x, expected 'GGUF'",
                          data_[0], data_[1], data_[2], data_[3]));
  }
  OX_TRY(read(&f->version_, "version"));
  const uint32_t v = f->version_;
  if (v == 1) return fail(4, "unsupported GGUF version 1 (only versions 2 and 3 are read)", ErrorCode::kUnsupported);
  if (v != 2 && v != 3) {
    const uint32_t swapped = __builtin_bswap32(v);
    if (swapped >= 1 && swapped <= 3) {
      return fail(4, strfmt("big-endian GGUF (version field 0x%08x is version %u byte-swapped); only "
                            "little-endian files are supported", v, swapped),
                  ErrorCode::kUnsupported);
    }
    return fail(4, strfmt("unsupported GGUF version %u", v), ErrorCode::kUnsupported);
  }
  OX_TRY(read(n_tensors, "tensor count"));
  OX_TRY(read(n_kv, "metadata count"));
  if (*n_kv > left() / kMinKvBytes) {
    return fail(16, strfmt("metadata count %llu exceeds the %llu bytes left (each entry needs at least %llu)",
                           static_cast<ull>(*n_kv), static_cast<ull>(left()), static_cast<ull>(kMinKvBytes)));
  }
  if (*n_tensors > left() / kMinTensorInfoBytes) {
    return fail(8, strfmt("tensor count %llu exceeds the %llu bytes left (each tensor info needs at least %llu)",
                          static_cast<ull>(*n_tensors), static_cast<ull>(left()),
                          static_cast<ull>(kMinTensorInfoBytes)));
  }
  return Status::ok();
}

Status Parser::read_metadata(GgufFile* f, uint64_t n_kv) {
  f->metadata_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    ctx_ = strfmt("metadata entry %llu of %llu", static_cast<ull>(i), static_cast<ull>(n_kv));
    const uint64_t key_at = pos_;
    std::string_view key;
    OX_TRY(read_string(&key, "key"));
    ctx_ = "metadata key '" + printable(key) + "'";
    std::string key_str(key);
    if (f->metadata_index_.count(key_str) != 0) return fail(key_at, "duplicate metadata key");
    ValueType type;
    OX_TRY(read_value_type(&type, "value type"));
    if (key_str == "general.alignment") alignment_value_offset_ = pos_;
    Value value;
    OX_TRY(read_value(type, 0, &value));
    f->metadata_index_.emplace(key_str, f->metadata_.size());
    f->metadata_.emplace_back(std::move(key_str), std::move(value));
  }
  ctx_.clear();
  return Status::ok();
}

Status Parser::apply_alignment(GgufFile* f) {
  const Value* v = f->find("general.alignment");
  if (v == nullptr) return Status::ok();  // the default, 32
  ctx_ = "metadata key 'general.alignment'";
  const uint64_t at = alignment_value_offset_;
  if (!v->is_integer()) {
    return fail(at, strfmt("is %s, expected an integer", value_type_name(v->type)));
  }
  const bool negative = is_signed_integer(v->type) && v->i < 0;
  const uint64_t a = is_signed_integer(v->type) ? static_cast<uint64_t>(v->i) : v->u;
  if (negative || a == 0 || !std::has_single_bit(a)) {
    return fail(at, strfmt("alignment %lld is not a nonzero power of two",
                           is_signed_integer(v->type) ? static_cast<long long>(v->i)
                                                      : static_cast<long long>(v->u)));
  }
  // Beyond this the padding alone would dwarf any real file; it would also risk overflow.
  if (a > (uint64_t{1} << 30)) {
    return fail(at, strfmt("alignment %llu is larger than 1 GiB", static_cast<ull>(a)));
  }
  f->alignment_ = a;
  ctx_.clear();
  return Status::ok();
}

Status Parser::read_tensor_info(GgufFile* f, uint64_t index, uint64_t n_tensors) {
  ctx_ = strfmt("tensor info %llu of %llu", static_cast<ull>(index), static_cast<ull>(n_tensors));
  const uint64_t info_at = pos_;
  std::string_view name;
  OX_TRY(read_string(&name, "name"));
  ctx_ = "tensor '" + printable(name) + "'";
  TensorInfo t;
  t.name = std::string(name);
  if (f->tensor_index_.count(t.name) != 0) return fail(info_at, "duplicate tensor name");

  const uint64_t dims_at = pos_;
  uint32_t n_dims = 0;
  OX_TRY(read(&n_dims, "n_dims"));
  if (n_dims == 0 || n_dims > kMaxDims) {
    return fail(dims_at, strfmt("n_dims %u is outside 1..%u", n_dims, kMaxDims));
  }
  t.dims.resize(n_dims);
  uint64_t n_elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t at = pos_;
    OX_TRY(read(&t.dims[d], "dimension"));
    if (t.dims[d] == 0) return fail(at, strfmt("dimension %u is 0", d));
    // Element counts must fit in int64: kernels and row arithmetic are signed 64-bit.
    if (t.dims[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n_elements) {
      return fail(at, strfmt("element count overflows at dimension %u (%llu)", d,
                             static_cast<ull>(t.dims[d])));
    }
    n_elements *= t.dims[d];
  }
  t.n_elements = n_elements;

  const uint64_t type_at = pos_;
  uint32_t type_raw = 0;
  OX_TRY(read(&type_raw, "type"));
  if (!dtype_is_known(type_raw)) {
    return fail(type_at, strfmt("unknown tensor type id %u", type_raw), ErrorCode::kUnsupported);
  }
  t.type = static_cast<DType>(type_raw);
  const DTypeFacts& facts = dtype_facts(t.type);
  if (t.dims[0] % facts.block_size != 0) {
    return fail(dims_at, strfmt("row length %llu is not a multiple of the %s block size %u",
                                static_cast<ull>(t.dims[0]), facts.name, facts.block_size));
  }
  const uint64_t blocks_per_row = t.dims[0] / facts.block_size;
  const uint64_t rows = n_elements / t.dims[0];
  constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
  if (blocks_per_row > kMaxU64 / facts.type_size ||
      rows > kMaxU64 / (blocks_per_row * facts.type_size)) {
    return fail(dims_at, strfmt("byte size of %llu elements of %s overflows",
                                static_cast<ull>(n_elements), facts.name));
  }
  const uint64_t row_bytes = blocks_per_row * facts.type_size;
  t.n_bytes = row_bytes * rows;

  const uint64_t offset_at = pos_;
  OX_TRY(read(&t.offset, "data offset"));
  if (t.offset % f->alignment_ != 0) {
    return fail(offset_at, strfmt("data offset %llu is not a multiple of the alignment %llu",
                                  static_cast<ull>(t.offset), static_cast<ull>(f->alignment_)));
  }
  info_offsets_.push_back(offset_at);
  f->tensor_index_.emplace(t.name, f->tensors_.size());
  f->tensors_.push_back(std::move(t));
  return Status::ok();
}

Status Parser::check_tensor_data(GgufFile* f) {
  ctx_.clear();
  const uint64_t a = f->alignment_;
  const uint64_t end_of_infos = pos_;
  // pos_ <= size_ and a <= 2^30, so this cannot overflow.
  f->data_offset_ = (end_of_infos + a - 1) / a * a;
  if (f->tensors_.empty()) return Status::ok();  // no data section needed
  if (f->data_offset_ > size_) {
    return fail(end_of_infos, strfmt("data section starts at %llu, past the end of the %llu-byte file",
                                     static_cast<ull>(f->data_offset_), static_cast<ull>(size_)));
  }
  const uint64_t data_size = size_ - f->data_offset_;
  for (size_t k = 0; k < f->tensors_.size(); ++k) {
    TensorInfo& t = f->tensors_[k];
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      ctx_ = "tensor '" + printable(t.name) + "'";
      return fail(info_offsets_[k],
                  strfmt("data [%llu, +%llu bytes) at file offset %llu runs past the end of the file "
                         "(%llu bytes of data section)",
                         static_cast<ull>(t.offset), static_cast<ull>(t.n_bytes),
                         static_cast<ull>(f->data_offset_ + t.offset), static_cast<ull>(data_size)));
    }
    t.data = data_ + f->data_offset_ + t.offset;
  }
  std::vector<size_t> order(f->tensors_.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return f->tensors_[x].offset < f->tensors_[y].offset;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = f->tensors_[order[k - 1]];
    const TensorInfo& cur = f->tensors_[order[k]];
    if (prev.offset + prev.n_bytes > cur.offset) {  // both in bounds: no overflow
      ctx_ = "tensor '" + printable(cur.name) + "'";
      return fail(info_offsets_[order[k]],
                  strfmt("data [%llu, %llu) overlaps tensor '%s' at [%llu, %llu)",
                         static_cast<ull>(cur.offset), static_cast<ull>(cur.offset + cur.n_bytes),
                         printable(prev.name).c_str(), static_cast<ull>(prev.offset),
                         static_cast<ull>(prev.offset + prev.n_bytes)));
    }
  }
  return Status::ok();
}

Status Parser::run(GgufFile* f) {
  uint64_t n_tensors = 0, n_kv = 0;
  OX_TRY(read_header(f, &n_tensors, &n_kv));
  OX_TRY(read_metadata(f, n_kv));
  OX_TRY(apply_alignment(f));
  if (n_tensors > left() / kMinTensorInfoBytes) {
    return fail(8, strfmt("tensor count %llu exceeds the %llu bytes left after the metadata "
                          "(each tensor info needs at least %llu)",
                          static_cast<ull>(n_tensors), static_cast<ull>(left()),
                          static_cast<ull>(kMinTensorInfoBytes)));
  }
  f->tensors_.reserve(static_cast<size_t>(n_tensors));
  info_offsets_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) OX_TRY(read_tensor_info(f, i, n_tensors));
  return check_tensor_data(f);
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(std::span<const uint8_t> bytes, std::string name,
                                                  std::shared_ptr<const void> owner, bool writable) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = std::move(name);
  f->bytes_ = bytes;
  f->owner_ = std::move(owner);
  f->writable_ = writable;
  Parser parser(bytes, f->name_);
  OX_TRY(parser.run(f.get()));
  f->shards_.push_back(ShardInfo{f->name_, bytes.size(), f->tensors_.size()});
  return f;
}

}  // namespace ox::gguf
