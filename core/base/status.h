// Status and Result<T>: how untrusted input reports failure without exceptions.
// The engine builds with -fno-exceptions; every fallible path returns one of these.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace ox {

// Coarse category, kept stable because JS and the CLI expose it next to the message.
enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // caller passed something malformed (flags, ids, options)
  kInvalidFile = 2,      // bytes of a model/template/etc. are malformed
  kUnsupported = 3,      // well-formed but not something we implement (arch, quant type, version)
  kOutOfRange = 4,       // prompt longer than the context, index past the end
  kTooLarge = 5,         // does not fit in memory (e.g. model larger than wasm memory)
  kIo = 6,               // the OS refused (open, read, mmap)
  kAborted = 7,          // the caller cancelled
  kInternal = 8,         // a bug of ours surfaced as an error instead of a crash
};

const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Adds context in front of the message ("loading model.gguf: " + message).
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// printf-style formatting into std::string (no <format> in g++ 12 / emscripten's libc++).
std::string strfmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

inline Status error(ErrorCode code, std::string message) { return Status(code, std::move(message)); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)), has_value_(true) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {              // NOLINT: implicit by design
    if (status_.is_ok()) status_ = Status(ErrorCode::kInternal, "Result built from an OK status");
  }

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }

  T& value() & { check(); return value_; }
  const T& value() const& { check(); return value_; }
  T&& value() && { check(); return std::move(value_); }
  T* operator->() { check(); return &value_; }
  const T* operator->() const { check(); return &value_; }
  T& operator*() & { check(); return value_; }
  const T& operator*() const& { check(); return value_; }
  T&& operator*() && { check(); return std::move(value_); }

 private:
  void check() const {
    if (!has_value_) {
      std::fprintf(stderr, "oxidize: Result::value() on error: %s\n", status_.message().c_str());
      std::abort();
    }
  }
  Status status_;
  T value_{};
  bool has_value_ = false;
};

}  // namespace ox

// Propagate an error Status from an expression returning Status.
#define OX_TRY(expr)                              \
  do {                                            \
    ::ox::Status ox_try_status_ = (expr);         \
    if (!ox_try_status_.is_ok()) return ox_try_status_; \
  } while (0)

#define OX_CONCAT_INNER(a, b) a##b
#define OX_CONCAT(a, b) OX_CONCAT_INNER(a, b)

// `OX_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result or returns its Status.
#define OX_ASSIGN_OR_RETURN(lhs, expr) OX_ASSIGN_OR_RETURN_IMPL(OX_CONCAT(ox_result_, __LINE__), lhs, expr)
#define OX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

// Always-on invariant check for our own logic (never for untrusted input: that returns Status).
#define OX_CHECK(cond)                                                                   \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "oxidize: internal check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
