// MappedFile: the read-only bytes of a whole file. Native builds mmap it; Emscripten builds read
// it into memory (wasm has no mmap of host files). The only place that knows the difference.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/base/status.h"

namespace ox {

class MappedFile {
 public:
  // Errors (kIo, kTooLarge) name the path and the OS error.
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& path() const { return path_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  uint64_t size() const { return size_; }
  // True where the bytes are this object's own memory (read in, not mapped): they may be rewritten.
  bool writable() const { return !mapped_; }
  // A hint for one pass over a large file: where it is mapped, the pages wholly inside `range` (a
  // part of bytes()) leave this process's memory, to be read from the file again if touched.
  // Read-in bytes are kept.
  void release(std::span<const uint8_t> range) const;

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;  // true: munmap on destruction; false: free (or nothing if empty)
};

}  // namespace ox
