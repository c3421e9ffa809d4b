// BigBuffer: a large zeroed allocation (the KV cache) taken straight from the OS where there is
// one. Natively: an anonymous mapping, whose pages are zero and untouched until used (a large
// context costs nothing until it fills), with transparent huge pages asked for (attention reads the
// whole cache per token). Measured, 0.5B model, 2 threads, decode at depth 4096 after other bench
// rows had run: 38-40 t/s with the cache in glibc's heap (where its dynamic mmap threshold puts it
// once a first session has been freed), 43-46 t/s from a mapping. In wasm: calloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"

namespace ox {

class BigBuffer {
 public:
  static Result<BigBuffer> zeroed(size_t bytes);
  BigBuffer() = default;
  BigBuffer(BigBuffer&& other) noexcept;
  BigBuffer& operator=(BigBuffer&& other) noexcept;
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;
  ~BigBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Makes every page resident (a zero written to each, where there is one already), so the first
  // pass that fills the buffer does not stop for page faults (each a 2 MB zeroing under THP).
  void touch_pages();

 private:
  void release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace ox
