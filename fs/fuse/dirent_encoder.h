// Writing READDIR replies: one entry in the kernel's `struct fuse_dirent` layout, as
// libfuse's fuse_add_direntry does, but from a name that is a view into the index (no NUL
// terminator, so no copy to add one and no strlen) and without a `struct stat` to fill.
//
// Why: a cold walk of a million entries encodes a million dirents on the daemon's critical
// path; the copy, the strlen and the libfuse call were 13% of the daemon's profile
// (a cold walk of 1,000,000 entries, bench/README.md "Listing a million files").
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mmfs::fs {

// Appends the entry (`ino`, the S_IFMT bits of `mode`, `name`, and `next`, the offset the
// kernel passes back to continue after it) at `buf` when it fits in `room` bytes, and returns
// the bytes it takes, whether or not it fit (fuse_add_direntry's contract: a return larger
// than `room` means the reply is full). The padding to 8 bytes is zeroed.
size_t EncodeDirent(char* buf, size_t room, std::string_view name, uint64_t ino, uint32_t mode,
                    uint64_t next);

}  // namespace mmfs::fs
