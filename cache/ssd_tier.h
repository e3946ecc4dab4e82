// SSD tier: a byte-budgeted cache of blobs in files on a local disk, kept across restarts.
//
// Layout: DIR/mmfs-cache-v1/NAMESPACE/XX/KEY, where NAMESPACE names the dataset (so datasets and
// versions never collide), XX is the key's low byte in hex (256-way fan-out) and KEY the key in
// 16 hex digits. Each file is a 32-byte header (magic "MMFSCE1\0", key, length, XXH3-64 of the
// payload) and the payload. Opening scans the directory and trusts nothing but names and sizes;
// every read checks the header and the checksum, and a damaged or truncated entry is a miss, is
// counted and removed, never served. A file gone missing (evicted while a lookup opened it, or
// deleted by hand) is a plain miss. Writes happen on a background thread from a bounded queue
// (tmp file + rename, no fsync: a torn file fails its checksum), so a slow disk never slows a
// reader. Before each write the free space is checked: below the free-space guard, or when the
// disk is failing, admission stops and the tier keeps serving what it has.
//
// The directory may sit on a shared disk: its folders are opened level by level without
// following links and must belong to the daemon's user (cache_dir.h); folders are 0700, entries
// 0600, and all I/O is relative to the held descriptor of NAMESPACE. The tier deletes only names
// of its own scheme (KEY, KEY.tmp) in folders it verified; anything else is left and logged.
// The tier holds an exclusive flock on NAMESPACE while open: a second mount of the same dataset
// on the same directory fails to open it rather than delete the first one's files.
//
// A budget of 0 means the default: half of what the disk could give the tier, counting the
// bytes its own entries already hold as available (a remount keeps a warmed cache), at most 1 TiB.
//
// Which entries stay is SievePolicy's decision, as in the RAM tier.
//
// Thread-safety: all methods are thread-safe. Lock order: mu_ only; no I/O while holding it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/file_util.h"
#include "base/status.h"
#include "cache/sieve_policy.h"
#include "cache/ssd_disk.h"
#include "cache/tier.h"

namespace mmfs::cache {

struct SsdTierOptions {
  std::string dir;          // cache directory (created if missing)
  std::string name_space;   // dataset identity; plain file name characters only
  uint64_t budget_bytes = 0;  // 0: the default (see above)
  uint64_t expected_keys = 1 << 16;
  double min_free_fraction = 0.05;       // stop admitting below this much free space
  uint64_t max_pending_bytes = 64 << 20; // write queue bound
  // Tests only: called on the writer thread before each write, outside the lock (a test holds
  // the writer back to fill the queue first, as a slow disk would).
  std::function<void()> before_write;
  // Tests only: the disk's answers (free space, writes, reads of entries), ssd_disk.h; null: the
  // real disk.
  std::shared_ptr<SsdDisk> disk;
};

class SsdTier final : public CacheTier {
 public:
  static Result<std::unique_ptr<SsdTier>> Open(const SsdTierOptions& options);
  ~SsdTier() override;

  std::string_view name() const override { return "ssd"; }
  TierRole role() const override { return TierRole::kLocalDisk; }
  Blob Lookup(CacheKey key) override;
  void Insert(CacheKey key, Blob blob) override;
  TierCounters Counters() const override;

  bool Contains(CacheKey key) const override;
  void SetAdmitBelow(CacheKey bound) override { admit_below_.store(bound); }
  void Erase(CacheKey key) override;
  // Within the budget and the write queue's bound (a larger insert would be dropped).
  uint64_t MaxEntryBytes() const override;

  // Waits until every queued write has reached the disk (tests, clean shutdown).
  void Flush() override;
  std::string PathFor(CacheKey key) const;
  // Bytes admitted but not yet written (bounded by max_pending_bytes; 0 after Flush).
  uint64_t pending_bytes() const override;

  // Why the tier is not storing what it is given, or "" (a full budget is not a problem):
  // the disk is below its guard, a write failed (with its errno text), the directory is gone.
  std::string AdmissionProblem() const override;
  // Files in the tier's folders that are not of its naming scheme, found (and left) at opening.
  uint64_t foreign_files() const { return foreign_files_; }

  static constexpr uint64_t kHeaderBytes = 32;

 private:
  explicit SsdTier(const SsdTierOptions& options);
  Status Scan();
  void WriterLoop();
  Status WriteEntry(CacheKey key, const std::string& payload);
  // Whether `bytes` more can be written and leave the free-space guard; a Status saying why not.
  Status CheckRoom(uint64_t bytes) const;
  // Drops `key` from the policy and has the writer delete its file (after any queued write of it).
  void DropLocked(CacheKey key);
  std::string RelPath(CacheKey key) const;  // "XX/KEY", relative to dir_fd_
  // The reason for a failed write, naming the directory when it was removed under us.
  std::string Describe(const Status& s) const;

  struct Op {
    CacheKey key;
    Blob blob;  // null: delete the file
  };

  const SsdTierOptions options_;
  SsdDisk& disk_;           // options_.disk, or the real disk
  const std::string root_;  // DIR/mmfs-cache-v1/NAMESPACE (messages; I/O goes through dir_fd_)
  UniqueFd dir_fd_;         // NAMESPACE, opened and checked by Open
  uint64_t foreign_files_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  SievePolicy policy_;                          // guarded by mu_
  std::deque<Op> queue_;                        // guarded by mu_
  std::unordered_map<CacheKey, Blob> pending_;  // admitted, not yet written; guarded by mu_
  uint64_t pending_bytes_ = 0;                  // guarded by mu_
  bool writing_ = false;                        // guarded by mu_
  bool stop_ = false;                           // guarded by mu_
  std::chrono::steady_clock::time_point paused_until_{};  // guarded by mu_
  bool disk_full_ = false;                      // guarded by mu_
  std::chrono::steady_clock::time_point next_space_check_{};  // guarded by mu_
  std::string problem_;                         // guarded by mu_

  std::atomic<uint64_t> lookups_{0}, hits_{0}, inserts_{0}, corrupt_{0}, read_errors_{0},
      write_errors_{0}, dropped_{0};
  std::atomic<CacheKey> admit_below_{kAdmitAll};
  std::atomic<uint64_t> refused_{0};  // inserts outside the admitted keys (SetAdmitBelow)
  std::thread writer_;
};

}  // namespace mmfs::cache
