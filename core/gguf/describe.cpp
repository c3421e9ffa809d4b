// describe_gguf: formats a parsed GGUF file for people (oxidize inspect).
#include "core/gguf/describe.h"

#include <algorithm>
#include <map>

#include "core/gguf/value_io.h"

namespace ox::gguf {
namespace {

using ull = unsigned long long;
constexpr size_t kMaxStringChars = 60;   // longer strings (chat templates) are cut
constexpr uint64_t kMaxArrayShown = 8;   // first elements shown of an array

std::string quoted(std::string_view s) {
  std::string out(1, '"');  // built by appending: g++ 12 warns falsely on "\"" + str + "\""
  out += printable(s, kMaxStringChars);
  out.push_back('"');
  return out;
}

std::string scalar_text(const Value& v) {
  switch (v.type) {
    case ValueType::BOOL: return v.u ? "true" : "false";
    case ValueType::FLOAT32: case ValueType::FLOAT64: return strfmt("%g", v.f);
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return strfmt("%lld", static_cast<long long>(v.i));
    case ValueType::STRING: return quoted(v.str);
    default: return strfmt("%llu", static_cast<ull>(v.u));
  }
}

std::string array_text(const Value& v) {
  std::string out = strfmt("[%s x %llu]", value_type_name(v.elem_type), static_cast<ull>(v.count));
  if (v.count == 0) return out;
  out += " [";
  const uint64_t shown = std::min(v.count, kMaxArrayShown);
  const uint32_t size = value_type_size(v.elem_type);
  for (uint64_t k = 0; k < shown; ++k) {
    if (k > 0) out += ", ";
    if (size != 0) {
      Value e;
      e.type = v.elem_type;
      decode_scalar(v.elem_type, v.raw + k * size, &e);
      out += scalar_text(e);
    } else if (v.elem_type == ValueType::STRING) {
      out += quoted(v.strings[static_cast<size_t>(k)]);
    } else {
      out += array_text(v.items[static_cast<size_t>(k)]);
    }
  }
  if (shown < v.count) out += ", ...";
  out += "]";
  return out;
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d > 0) out += " x ";
    out += strfmt("%llu", static_cast<ull>(dims[d]));
  }
  return out;
}

std::string bytes_text(uint64_t n) {
  if (n >= (uint64_t{1} << 30)) return strfmt("%.2f GiB", static_cast<double>(n) / (1 << 30));
  if (n >= (uint64_t{1} << 20)) return strfmt("%.2f MiB", static_cast<double>(n) / (1 << 20));
  if (n >= (uint64_t{1} << 10)) return strfmt("%.2f KiB", static_cast<double>(n) / (1 << 10));
  return strfmt("%llu B", static_cast<ull>(n));
}

}  // namespace

std::string describe_value(const Value& v) {
  if (v.type == ValueType::ARRAY) return array_text(v);
  return scalar_text(v);
}

std::string describe_gguf(const GgufFile& f) {
  std::string out = strfmt("file:        %s\n", f.name().c_str());
  out += strfmt("size:        %llu bytes\n", static_cast<ull>(f.file_bytes()));
  if (f.shards().size() > 1) {  // a split model: the first shard's header facts follow
    out += strfmt("shards:      %zu\n", f.shards().size());
    for (const ShardInfo& s : f.shards()) {
      out += strfmt("  %s  %llu bytes, %zu tensors\n", s.path.c_str(), static_cast<ull>(s.n_bytes), s.n_tensors);
    }
  }
  out += strfmt("version:     %u\n", f.version());
  out += strfmt("alignment:   %llu\n", static_cast<ull>(f.alignment()));
  out += strfmt("data offset: %llu\n", static_cast<ull>(f.data_offset()));

  out += strfmt("\nmetadata (%llu keys):\n", static_cast<ull>(f.metadata().size()));
  size_t key_width = 0;
  for (const auto& kv : f.metadata()) key_width = std::max(key_width, std::min<size_t>(kv.first.size(), 48));
  for (const auto& [key, value] : f.metadata()) {
    out += strfmt("  %-*s  %-7s  %s\n", static_cast<int>(key_width), printable(key, 48).c_str(),
                  value.type == ValueType::ARRAY ? "ARRAY" : value_type_name(value.type),
                  describe_value(value).c_str());
  }

  out += strfmt("\ntensors (%llu):\n", static_cast<ull>(f.tensors().size()));
  size_t name_width = 4;
  for (const TensorInfo& t : f.tensors()) name_width = std::max(name_width, std::min<size_t>(t.name.size(), 48));
  out += strfmt("  %-*s  %-7s  %-24s  %12s  %12s\n", static_cast<int>(name_width), "name", "type", "dims",
                "offset", "bytes");
  uint64_t n_params = 0, n_bytes = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // name -> (tensors, bytes)
  for (const TensorInfo& t : f.tensors()) {
    out += strfmt("  %-*s  %-7s  %-24s  %12llu  %12llu\n", static_cast<int>(name_width),
                  printable(t.name, 48).c_str(), dtype_name(t.type), dims_text(t.dims).c_str(),
                  static_cast<ull>(t.offset), static_cast<ull>(t.n_bytes));
    n_params += t.n_elements;
    n_bytes += t.n_bytes;
    auto& slot = by_type[dtype_name(t.type)];
    slot.first += 1;
    slot.second += t.n_bytes;
  }

  out += strfmt("\ntotals: %llu tensors, %llu parameters, %llu bytes (%s) of tensor data\n",
                static_cast<ull>(f.tensors().size()), static_cast<ull>(n_params), static_cast<ull>(n_bytes),
                bytes_text(n_bytes).c_str());
  for (const auto& [type, counts] : by_type) {
    out += strfmt("  %-7s  %llu tensors, %llu bytes (%s)\n", type.c_str(), static_cast<ull>(counts.first),
                  static_cast<ull>(counts.second), bytes_text(counts.second).c_str());
  }
  return out;
}

}  // namespace ox::gguf
