// ToErrno: the one place where a Status becomes an errno (the FUSE boundary, fuse_ops.cc).
//
// Every code of StatusCode maps here and nowhere else; a Status made from a system call
// (Status::FromErrno) keeps that call's errno where the code does not say more.
//
// Thread-safety: a pure function.
#pragma once

#include <cerrno>

#include "base/status.h"

namespace mmfs::fs {

inline int ToErrno(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kNotFound: return ENOENT;
    case StatusCode::kInvalidArgument: return EINVAL;
    case StatusCode::kCorruption: return EIO;
    case StatusCode::kIoError: return s.sys_errno() != 0 ? s.sys_errno() : EIO;
    case StatusCode::kReadOnly: return EROFS;
    case StatusCode::kNotSupported: return ENOTSUP;
    case StatusCode::kAlreadyExists: return EEXIST;
    case StatusCode::kCancelled: return EINTR;
    // ENOSPC from a full disk stays ENOSPC; a budget or an allocation is ENOMEM.
    case StatusCode::kResourceExhausted: return s.sys_errno() != 0 ? s.sys_errno() : ENOMEM;
    case StatusCode::kNotADirectory: return ENOTDIR;
    case StatusCode::kIsADirectory: return EISDIR;
    case StatusCode::kNoSuchIoctl: return ENOTTY;
  }
  return EIO;
}

}  // namespace mmfs::fs
