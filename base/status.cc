#include "base/status.h"

#include <cstring>

namespace mmfs {

Status Status::FromErrno(int err, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += std::strerror(err);
  StatusCode code = StatusCode::kIoError;
  if (err == ENOENT) code = StatusCode::kNotFound;
  if (err == EEXIST) code = StatusCode::kAlreadyExists;
  if (err == ENOSPC || err == EDQUOT) code = StatusCode::kResourceExhausted;
  if (err == EROFS) code = StatusCode::kReadOnly;
  return Status(code, std::move(msg), err);
}

static const char* CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kReadOnly: return "read-only";
    case StatusCode::kNotSupported: return "not supported";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kNotADirectory: return "not a directory";
    case StatusCode::kIsADirectory: return "is a directory";
    case StatusCode::kNoSuchIoctl: return "no such ioctl";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status copy = *this;
  copy.message_ = std::string(context) + ": " + message_;
  return copy;
}

Status Status::WithNote(std::string_view note) const {
  if (ok()) return *this;
  Status copy = *this;
  copy.message_ += note;
  return copy;
}

}  // namespace mmfs
