// Status and Result<T>: the error type of the mmfs core.
//
// Every fallible operation in fs/, cache/ and tools/ returns a Status (or a Result<T>, a value or a
// Status). errno values are turned into a Status where the system call is made; a Status becomes an
// errno again only at the FUSE boundary (fs/fuse/fuse_ops.cc). No exceptions cross module seams.
//
// Thread-safety: values; distinct objects may be used from distinct threads freely.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mmfs {

enum class StatusCode {
  kOk = 0,
  kNotFound,          // a name or file that does not exist (ENOENT)
  kInvalidArgument,   // bad input from the user (EINVAL)
  kCorruption,        // data on disk does not match what was written (EIO)
  kIoError,           // a system call failed (errno kept)
  kReadOnly,          // a write to the read-only view (EROFS)
  kNotSupported,      // an operation this component does not offer (ENOTSUP)
  kAlreadyExists,     // refusing to overwrite (EEXIST)
  kCancelled,         // stopped on request (SIGINT)
  kResourceExhausted, // budget, disk or memory limit reached (the errno kept, else ENOMEM)
  kNotADirectory,     // a path step or a directory operation on a non-directory (ENOTDIR)
  kIsADirectory,      // a file operation on a directory (EISDIR)
  kNoSuchIoctl,       // an ioctl the file does not take: "not a terminal" (ENOTTY)
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
  static Status InvalidArgument(std::string msg) {
    return Status(StatusCode::kInvalidArgument, std::move(msg));
  }
  static Status Corruption(std::string msg) {
    return Status(StatusCode::kCorruption, std::move(msg));
  }
  static Status IoError(std::string msg) { return Status(StatusCode::kIoError, std::move(msg)); }
  static Status ReadOnly(std::string msg) { return Status(StatusCode::kReadOnly, std::move(msg)); }
  static Status NotSupported(std::string msg) {
    return Status(StatusCode::kNotSupported, std::move(msg));
  }
  static Status AlreadyExists(std::string msg) {
    return Status(StatusCode::kAlreadyExists, std::move(msg));
  }
  static Status Cancelled(std::string msg) {
    return Status(StatusCode::kCancelled, std::move(msg));
  }
  static Status ResourceExhausted(std::string msg) {
    return Status(StatusCode::kResourceExhausted, std::move(msg));
  }
  static Status NotADirectory(std::string msg) {
    return Status(StatusCode::kNotADirectory, std::move(msg));
  }
  static Status IsADirectory(std::string msg) {
    return Status(StatusCode::kIsADirectory, std::move(msg));
  }
  static Status NoSuchIoctl(std::string msg) {
    return Status(StatusCode::kNoSuchIoctl, std::move(msg));
  }
  // An I/O error from a system call: `what` names the call and the file, e.g. "open /data/x".
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // errno the failing system call reported (from FromErrno; 0 otherwise).
  int sys_errno() const { return errno_; }
  const std::string& message() const { return message_; }
  // "corruption: shard-00001.mdb: bad magic".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` ("packing /src: ...").
  Status WithContext(std::string_view context) const;
  // Returns a copy whose message ends with `note` (" (failed 2.0 s ago)").
  Status WithNote(std::string_view note) const;

 private:
  Status(StatusCode code, std::string msg, int err = 0)
      : code_(code), errno_(err), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  int errno_ = 0;
  std::string message_;
};

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}         // NOLINT: implicit by design
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace mmfs

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define MMFS_RETURN_IF_ERROR(expr)              \
  do {                                          \
    ::mmfs::Status mmfs_status_ = (expr);       \
    if (!mmfs_status_.ok()) return mmfs_status_; \
  } while (0)

#define MMFS_CONCAT_INNER_(a, b) a##b
#define MMFS_CONCAT_(a, b) MMFS_CONCAT_INNER_(a, b)
// Declares `lhs` from a Result, returning its Status early on error.
#define MMFS_ASSIGN_OR_RETURN(lhs, expr) \
  MMFS_ASSIGN_OR_RETURN_IMPL_(MMFS_CONCAT_(mmfs_result_, __LINE__), lhs, expr)
#define MMFS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
