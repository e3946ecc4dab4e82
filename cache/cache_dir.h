// Opening the SSD tier's directories without trusting the path they sit on.
//
// A cache directory may live on a shared disk (/tmp): another user may plant a symbolic link or
// a directory of their own where the tier expects its folders, hoping the daemon (maybe root)
// writes or deletes through it. So the path is walked from / one level at a time, each level
// opened with openat(O_NOFOLLOW | O_DIRECTORY) from the level above and checked with fstat on
// the open descriptor (no race between the check and the use).
//
// Up to and including the directory the operator gave, every level must belong to root or to
// the daemon's user and must not be writable by group or others unless sticky (/tmp is fine;
// root's 0777 directory without the sticky bit is not, for root too), so nobody else can swap a
// level once checked. In a user namespace an owner it has no uid for (shown as the overflow uid:
// the host's root, seen from `unshare -Urm`) counts as root for a parent directory that nobody
// but its owners may write above. A symbolic link on the way is
// followed only if it belongs to root or the daemon's user (an operator's link, e.g.
// /var/cache/mmfs -> /nvme/mmfs); its target is walked
// the same way. Missing levels are created by the walk itself (0755 parents, 0700 for the
// directory given) and never chmod-ed afterwards.
//
// Below it (mmfs-cache-v1, the dataset's folder, its 256 folders) every level must be a real
// directory owned by the daemon's user; missing ones are created 0700, and one of ours that is
// more open than 0700 is tightened (cached bytes are the daemon's alone).
//
// Ownership: every function returns an owned descriptor (UniqueFd) that the caller keeps;
// LockCacheDir's lock lasts as long as the descriptor it was taken on stays open.
//
// Thread-safety: the functions are reentrant.
#pragma once

#include <string>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::cache {

// True inside a user namespace other than the host's (a rootless container, `unshare -U`): uid 0
// there is not the host's root, and cannot write where root can.
bool InUserNamespace();

// Opens DIR (creating it, mode 0700, and its missing parents, 0755, when absent); a relative
// DIR is taken from the working directory.
Result<UniqueFd> OpenCacheRootDir(const std::string& dir);

// Opens the directory `name` (one plain component) in `parent_fd`, creating it with mode 0700
// when missing. `shown` is its full path, for messages.
Result<UniqueFd> OpenOwnSubdir(int parent_fd, const std::string& name, const std::string& shown);

// Takes an exclusive, non-blocking flock on the directory `fd` (a dataset's folder), so that two
// mounts never scan and evict each other's files. Fails, naming the holder's pid when
// /proc/locks tells it, if another open of that folder holds it.
Status LockCacheDir(int fd, const std::string& shown);

}  // namespace mmfs::cache
