// SSD tier: a byte-budgeted cache of blobs in files on a local disk, kept across restarts.
//
// Layout: DIR/mmfs-cache-v1/NAMESPACE/XX/KEY, where NAMESPACE names the dataset (so datasets and
// versions never collide), XX is the key's low byte in hex (256-way fan-out) and KEY the key in
// 16 hex digits. Each file is a 32-byte header (magic "MMFSCE1\0", key, length, XXH3-64 of the
// payload) and the payload. Opening scans the directory and trusts nothing but names and sizes;
// every read checks the header and the checksum, and a damaged or truncated entry is a miss, is
// counted and removed, never served. Writes happen on a background thread from a bounded queue
// (tmp file + rename, no fsync: a torn file fails its checksum), so a slow disk never slows a
// reader. A disk that is nearly full (below the free-space guard) or failing stops admission; the
// tier keeps serving what it has.
//
// Which entries stay is SievePolicy's decision, as in the RAM tier.
//
// Thread-safety: all methods are thread-safe. Lock order: mu_ only; no I/O while holding it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "cache/sieve_policy.h"
#include "cache/tier.h"
#include "fs/base/status.h"

namespace mmfs::cache {

struct SsdTierOptions {
  std::string dir;          // cache directory (created if missing)
  std::string name_space;   // dataset identity; plain file name characters only
  uint64_t budget_bytes = 0;
  uint64_t expected_keys = 1 << 16;
  double min_free_fraction = 0.05;       // stop admitting below this much free space
  uint64_t max_pending_bytes = 64 << 20; // write queue bound
};

class SsdTier final : public CacheTier {
 public:
  static Result<std::unique_ptr<SsdTier>> Open(const SsdTierOptions& options);
  ~SsdTier() override;

  std::string_view name() const override { return "ssd"; }
  Blob Lookup(CacheKey key) override;
  void Insert(CacheKey key, Blob blob) override;
  TierCounters Counters() const override;

  bool Contains(CacheKey key) const override;
  void Erase(CacheKey key) override;
  // Within the budget and the write queue's bound (a larger insert would be dropped).
  uint64_t MaxEntryBytes() const override;

  // Waits until every queued write has reached the disk (tests, clean shutdown).
  void Flush() override;
  std::string PathFor(CacheKey key) const;
  // Bytes admitted but not yet written (bounded by max_pending_bytes; 0 after Flush).
  uint64_t pending_bytes() const override;

  static constexpr uint64_t kHeaderBytes = 32;

 private:
  explicit SsdTier(const SsdTierOptions& options);
  Status Scan();
  void WriterLoop();
  Status WriteEntry(CacheKey key, const std::string& payload);
  bool DiskHasRoom();
  void Forget(CacheKey key);  // drop from the policy and delete the file

  struct Op {
    CacheKey key;
    Blob blob;  // null: delete the file
  };

  const SsdTierOptions options_;
  const std::string root_;  // DIR/mmfs-cache-v1/NAMESPACE

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

  std::atomic<uint64_t> lookups_{0}, hits_{0}, inserts_{0}, corrupt_{0}, write_errors_{0},
      dropped_{0};
  std::thread writer_;
};

}  // namespace mmfs::cache
