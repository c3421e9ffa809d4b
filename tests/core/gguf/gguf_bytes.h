// GgufBytes: a test-only builder of raw GGUF bytes, field by field, so hostile files (bad counts,
// unknown types, misaligned offsets) can be written exactly as intended. Little-endian.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace ox::gguf::test {

class GgufBytes {
 public:
  std::vector<uint8_t> b;

  template <typename T>
  GgufBytes& put(T v) {
    const size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
    return *this;
  }
  GgufBytes& u8(uint8_t v) { return put(v); }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& i32(int32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  GgufBytes& pad_to(uint64_t alignment) {
    while (b.size() % alignment != 0) b.push_back(0);
    return *this;
  }
  // magic "GGUF", version, tensor count, metadata count
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  // key, type UINT32 (4), value
  GgufBytes& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(4).u32(v); }
  GgufBytes& kv_string(std::string_view key, std::string_view v) { return str(key).u32(8).str(v); }
  GgufBytes& tensor_info(std::string_view name, std::initializer_list<uint64_t> dims, uint32_t type,
                         uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  size_t size() const { return b.size(); }
  void patch_u32(size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
  void patch_u64(size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
};

}  // namespace ox::gguf::test
