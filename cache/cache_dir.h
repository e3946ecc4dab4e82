// Opening the SSD tier's directories without trusting the path they sit on.
//
// A cache directory may live on a shared disk (/tmp): another user may plant a symbolic link or
// a directory of their own where the tier expects its folders, hoping the daemon (maybe root)
// writes or deletes through it. So every level below the directory the operator gave is opened
// with openat(O_NOFOLLOW | O_DIRECTORY) from the level above and checked with fstat on the open
// descriptor (no race between the check and the use): it must be a real directory owned by the
// daemon's effective user. What is missing is created with mode 0700, and a folder of ours that
// is more open than 0700 is tightened (cached bytes are the daemon's alone).
//
// The directory the operator gave must belong to the daemon's user or to root (/tmp for a user;
// root's must then be sticky or not writable by others). It may be a symbolic link only if the
// link belongs to one of them too (an operator's link, e.g. /var/cache/mmfs -> /nvme/mmfs).
//
// Thread-safety: the functions are reentrant.
#pragma once

#include <string>

#include "fs/base/file_util.h"
#include "fs/base/status.h"

namespace mmfs::cache {

// Opens DIR (creating it, mode 0700, and its missing parents when absent).
Result<UniqueFd> OpenCacheRootDir(const std::string& dir);

// Opens the directory `name` (one plain component) in `parent_fd`, creating it with mode 0700
// when missing. `shown` is its full path, for messages.
Result<UniqueFd> OpenOwnSubdir(int parent_fd, const std::string& name, const std::string& shown);

}  // namespace mmfs::cache
