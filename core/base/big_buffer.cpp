// BigBuffer: mmap + MADV_HUGEPAGE on Linux, calloc elsewhere.
#include "core/base/big_buffer.h"

#include <cstdlib>
#include <utility>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define OX_BIG_BUFFER_MMAP 1
#endif

namespace ox {

Result<BigBuffer> BigBuffer::zeroed(size_t bytes) {
  BigBuffer b;
  if (bytes == 0) return b;
#ifdef OX_BIG_BUFFER_MMAP
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without THP the mapping still works
#endif
    b.data_ = static_cast<uint8_t*>(p);
    b.size_ = bytes;
    b.mapped_ = true;
    return b;
  }
#endif
  void* p2 = std::calloc(bytes, 1);
  if (p2 == nullptr) {
    return error(ErrorCode::kTooLarge, strfmt("cannot allocate %.1f MiB", static_cast<double>(bytes) / 1048576.0));
  }
  b.data_ = static_cast<uint8_t*>(p2);
  b.size_ = bytes;
  return b;
}

BigBuffer::BigBuffer(BigBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)) {}

BigBuffer& BigBuffer::operator=(BigBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

BigBuffer::~BigBuffer() { release(); }

void BigBuffer::touch_pages() {
  constexpr size_t kPage = 4096;  // the smallest page: every page of any size gets a write
  volatile uint8_t* p = data_;
  for (size_t i = 0; i < size_; i += kPage) p[i] = 0;
}

void BigBuffer::release() {
  if (data_ == nullptr) return;
#ifdef OX_BIG_BUFFER_MMAP
  if (mapped_) {
    munmap(data_, size_);
    data_ = nullptr;
    return;
  }
#endif
  std::free(data_);
  data_ = nullptr;
}

}  // namespace ox
