// MappedFile: mmap (POSIX) or read-into-memory (Emscripten) of a whole file, read-only.
#include "core/base/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#ifndef __EMSCRIPTEN__
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace ox {
namespace {

Status os_error(ErrorCode code, const std::string& path, const char* what, int err) {
  return error(code, strfmt("%s: %s: %s", path.c_str(), what, std::strerror(err)));
}

}  // namespace

#ifndef __EMSCRIPTEN__

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error(ErrorCode::kIo, path, "cannot open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return os_error(ErrorCode::kIo, path, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return error(ErrorCode::kIo, strfmt("%s: not a regular file", path.c_str()));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > std::numeric_limits<size_t>::max()) {
    ::close(fd);
    return error(ErrorCode::kTooLarge,
                 strfmt("%s: %llu bytes do not fit in the address space", path.c_str(),
                        static_cast<unsigned long long>(size)));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = size;
  if (size > 0) {  // mmap of length 0 fails; an empty file is simply an empty span
    void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return os_error(ErrorCode::kIo, path, "cannot mmap", err);
    }
    file->data_ = static_cast<const uint8_t*>(p);
    file->mapped_ = true;
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

void MappedFile::release(std::span<const uint8_t> range) const {
  if (!mapped_ || range.empty()) return;
  OX_CHECK(range.data() >= data_ && range.data() + range.size() <= data_ + size_);
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(range.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(range.data()) + range.size()) / page * page;
  // A private read-only mapping never holds changes, so dropping its pages loses nothing.
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

#else  // __EMSCRIPTEN__: no mmap of host files; read the bytes into the wasm heap.

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return os_error(ErrorCode::kIo, path, "cannot open", errno);
  // fseeko/ftello take off_t, 64-bit under Emscripten, so files past 2 GB size correctly.
  if (fseeko(f, 0, SEEK_END) != 0) {
    const int err = errno;
    std::fclose(f);
    return os_error(ErrorCode::kIo, path, "cannot seek", err);
  }
  const int64_t end = static_cast<int64_t>(ftello(f));
  if (end < 0 || fseeko(f, 0, SEEK_SET) != 0) {
    const int err = errno;
    std::fclose(f);
    return os_error(ErrorCode::kIo, path, "cannot seek", err);
  }
  const uint64_t size = static_cast<uint64_t>(end);
  if (size > std::numeric_limits<size_t>::max() - 1) {
    std::fclose(f);
    return error(ErrorCode::kTooLarge,
                 strfmt("%s: %llu bytes do not fit in wasm memory", path.c_str(),
                        static_cast<unsigned long long>(size)));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = size;
  if (size > 0) {
    // malloc (not new) so that running out of wasm memory is an error, not an abort.
    uint8_t* buf = static_cast<uint8_t*>(std::malloc(static_cast<size_t>(size)));
    if (buf == nullptr) {
      std::fclose(f);
      return error(ErrorCode::kTooLarge,
                   strfmt("%s: cannot allocate %llu bytes to read the file", path.c_str(),
                          static_cast<unsigned long long>(size)));
    }
    size_t done = 0;
    while (done < size) {
      const size_t n = std::fread(buf + done, 1, static_cast<size_t>(size) - done, f);
      if (n == 0) break;
      done += n;
    }
    if (done != size) {
      const int err = std::ferror(f) ? errno : EIO;
      std::free(buf);
      std::fclose(f);
      return os_error(ErrorCode::kIo, path, "short read", err);
    }
    file->data_ = buf;
  }
  std::fclose(f);
  return file;
}

MappedFile::~MappedFile() {
  if (!mapped_) std::free(const_cast<uint8_t*>(data_));  // never mapped here: always our malloc
}

void MappedFile::release(std::span<const uint8_t>) const {}  // read-in bytes are kept

#endif

}  // namespace ox
