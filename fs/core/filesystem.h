// Filesystem: the read-only view of a packed dataset, with no FUSE in it.
//
// Every FUSE request has a method here taking inode numbers and returning a Status or a Result;
// fs/fuse/fuse_ops.cc only converts. Tests drive this class directly, without a mount.
//
// Inode numbers: entry i of the index is inode i + 1 (the root is 1). Above the entries live the
// control files: the hidden `.mmfs` directory (absent from root listings, found by name) with
// `stats` (JSON) and `metrics` (Prometheus text), whose every lookup returns a fresh inode holding
// a new snapshot, so that the kernel's page cache (kept for data files) never shows stale numbers,
// and `hint`, a symlink to the daemon's hint pipe (see hint_channel.h) when one is open.
//
// Reads go through the tiered cache; on a miss the whole file is read from its shard and checked
// against its xxh3 before anything is served. A file read in several READs that the RAM tier did
// not keep waits in the read buffer for the rest of its READs; one too large to hold is checked
// once by streaming and then read by range (ranged_reader.h). Whichever way, each byte of a file
// is read from the origin about once per pass.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "cache/access_pattern.h"
#include "cache/cluster_tier.h"
#include "cache/hinted_order.h"
#include "cache/prefetch_buffer.h"
#include "cache/prefetch_workers.h"
#include "cache/ram_tier.h"
#include "cache/read_buffer.h"
#include "cache/tiered_cache.h"
#include "cache/what_if.h"
#include "fs/base/status.h"
#include "fs/core/memory_governor.h"
#include "fs/core/metrics.h"
#include "fs/core/ranged_reader.h"
#include "fs/format/dataset.h"

namespace mmfs::fs {

inline constexpr uint64_t kRootIno = 1;
inline constexpr char kControlDirName[] = ".mmfs";
// Under an overlay front (fs/fuse/overlay_front.h) `.mmfs` is a symlink to the control directory
// under this name on the FUSE mount itself: overlayfs answers ESTALE for files that change under
// one name, as the stats snapshots do (a fresh one per lookup).
inline constexpr char kControlDirDirectName[] = ".mmfs.d";
inline constexpr char kStatsFileName[] = "stats";      // JSON
inline constexpr char kMetricsFileName[] = "metrics";  // Prometheus text format
inline constexpr char kHintFileName[] = "hint";        // symlink to the hint FIFO
inline constexpr char kControlFileName[] = "control";  // symlink to the control FIFO (warmup)

struct Attr {
  uint64_t ino = 0;
  uint32_t mode = 0;  // st_mode
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint32_t nlink = 1;
  // Changes on every access (control files): the kernel must not cache its entry or attributes.
  bool is_volatile = false;
};

struct FilesystemOptions {
  uint64_t ram_cache_bytes = 256ull << 20;
  // Drop a shard's page-cache pages once their file is verified and cached: the bytes are then
  // held by the kernel's cache of the mount and the RAM tier, not a third time (docs/cache.md).
  bool drop_origin_pages = true;
  // Read samples from the shards with O_DIRECT where the filesystem allows it: no page cache
  // work and no kernel copy for bytes the tiers keep anyway (format/dataset.h).
  bool direct_reads = true;
  // Readahead: a miss loads the file's whole sample (k.jpg brings k.txt, k.json) in one read and
  // keeps the other members in the prefetch buffer for their reader.
  bool readahead = true;
  uint64_t prefetch_buffer_bytes = 64ull << 20;
  int prefetch_threads = 2;
  cache::ReadaheadConfig readahead_config;
  // The largest file loaded whole into memory (for the tiers, the read buffer, a prefetch). A
  // larger one, or one that neither the RAM tier could admit nor the read buffer hold, is
  // verified once by streaming, then read by range (ranged_reader.h).
  uint64_t max_cached_file_bytes = 64ull << 20;
  // Holds files read in several READs that the RAM tier did not keep (cache/read_buffer.h).
  uint64_t read_buffer_bytes = 64ull << 20;
  // Where `.mmfs/hint` points (the hint FIFO); empty: no hint file.
  std::string hint_target;
  // Where `.mmfs/control` points (the control FIFO of mmfs warmup); empty: none.
  std::string control_target;
  // The mount point, so that hint lines may be absolute paths under it.
  std::string mountpoint;
  // Where `.mmfs` points when it is a symlink (kControlDirDirectName); empty: it is the control
  // directory itself.
  std::string control_link_target;
};

struct StatFsInfo {
  uint64_t block_size = 4096;
  uint64_t blocks = 0;
  uint64_t files = 0;
  uint64_t name_max = 255;
};

// Bytes a read returns: a view into `owner`, which keeps them alive.
struct ReadData {
  cache::Blob owner;
  const char* data = nullptr;
  size_t size = 0;
};

class Filesystem {
 public:
  // `ssd_tier` (may be null) sits below the RAM tier, `cluster_tier` (may be null) below that.
  Filesystem(std::unique_ptr<format::Dataset> dataset, FilesystemOptions options,
             std::unique_ptr<cache::CacheTier> ssd_tier = nullptr,
             std::unique_ptr<cache::ClusterTier> cluster_tier = nullptr);
  ~Filesystem();

  Result<Attr> Lookup(uint64_t parent, std::string_view name);
  Result<Attr> GetAttr(uint64_t ino);
  // Emits entries after position `offset` (0 = from the start). `emit(name, attr, next_offset)`
  // returns false when the caller's buffer is full; that entry is then emitted again next call.
  Status ReadDir(uint64_t ino, uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit);
  // Checks that `ino` may be opened with `flags`: EROFS for any write access, EISDIR for dirs.
  Status Open(uint64_t ino, int flags);
  // `stream` names the reader (the caller's pid at the FUSE layer; 0: unknown), whose access
  // pattern drives readahead.
  Result<ReadData> Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream = 0);
  // Pushing prefetched files into the kernel's page cache, so that their READ never comes.
  // ClaimPrefetched gives the whole of `ino` if it is a regular file of at most `max_bytes` that
  // the prefetcher has loaded, no reader has taken and no other push has claimed (with `wait`,
  // another push's claim is waited for); empty otherwise, without I/O. EndPush must follow, with
  // the claimed owner: when `stored`, the kernel holds the bytes and the file is taken as a READ
  // of all of it would take it (into the cache, the hint and the access patterns advanced;
  // counted as pushed, not in bytes_served, which counts READ replies); else it stays for its
  // reader.
  Result<ReadData> ClaimPrefetched(uint64_t ino, size_t max_bytes, bool wait);
  void EndPush(uint64_t ino, uint64_t stream, cache::Blob claimed, bool stored);
  // Waits until queued prefetch work is done (tests).
  void DrainPrefetch();
  Result<std::string> ReadLink(uint64_t ino);
  StatFsInfo StatFs();
  // nullopt when the attribute does not exist (ENODATA).
  Result<std::optional<std::string>> GetXattr(uint64_t ino, std::string_view name);
  Result<std::vector<std::string>> ListXattr(uint64_t ino);
  // The kernel dropped `ino`; frees stats snapshots.
  void Forget(uint64_t ino);
  // A modifying request arrived (write, create, unlink, ...): always EROFS, counted.
  Status RefuseWrite();
  // An ioctl arrived: mmfs has none (NotSupported, ENOTTY at the FUSE layer); counted, because
  // the kernel forwards every ioctl to the daemon, even isatty() on an open file.
  Status Ioctl(uint64_t ino);

  // The hint protocol (hint_channel.h): a new order, its lines (paths), the end of it.
  void BeginHint();
  void AddHintLines(const std::vector<std::string>& lines);
  void EndHint();
  // Sets or clears (empty) the target of `.mmfs/hint`; call before serving.
  void SetHintTarget(std::string target);
  // The control protocol (lines written to .mmfs/control by mmfs warmup), in order:
  //   warm ram|ssd PATH   load PATH (a file or a folder, recursively) into that tier
  //   evict PATH          drop PATH's files from the RAM and SSD tiers
  //   sync TOKEN          shown as control.last_sync in stats once every earlier line is handled
  void HandleControlLines(const std::vector<std::string>& lines);
  void SetControlTarget(std::string target) { options_.control_target = std::move(target); }
  // Makes `.mmfs` a symlink to `target` (the control directory's direct name on the FUSE mount).
  void SetControlLinkTarget(std::string target) {
    options_.control_link_target = std::move(target);
  }
  // Waits until queued warm-up work is done (tests).
  void DrainWarmup();

  // The memory governor's hooks (fs/core/memory_governor.h): new budgets for the RAM tier and
  // the buffers (shrinking evicts and returns the memory at once) and whether to push; and the
  // bytes the RAM tier holds.
  void SetMemoryTargets(const MemoryTargets& targets);
  uint64_t RamBytesUsed() const { return ram_tier_.Counters().bytes_used; }
  // Shows `governor`'s budget and pressure in stats; it must outlive serving (or be reset).
  void SetMemoryGovernor(const MemoryGovernor* governor) { governor_.store(governor); }

  // The JSON document served as .mmfs/stats.
  std::string StatsJson() const;
  // Waits until the cluster tier's fill queue is written (tests).
  void FlushCluster() {
    if (cluster_tier_ != nullptr) cluster_tier_->Flush();
  }

  const format::Dataset& dataset() const { return *dataset_; }
  Metrics& metrics() { return metrics_; }

 private:
  uint64_t control_dir_ino() const { return dataset_->entry_count() + 1; }
  uint64_t hint_ino() const { return control_dir_ino() + 1; }
  uint64_t control_ino() const { return control_dir_ino() + 2; }
  uint64_t control_link_ino() const { return control_dir_ino() + 3; }
  bool IsSnapshotIno(uint64_t ino) const { return ino > control_link_ino(); }
  bool HasControlLink() const { return !options_.control_link_target.empty(); }
  Attr HintAttr() const;
  Attr LinkAttr(uint64_t ino, const std::string& target) const;
  // Regular files at or below `path` (a file or a folder), in index order.
  Result<std::vector<format::Entry>> FilesAt(std::string_view path) const;
  void WarmLoop();
  // Reads `entries` with neighbours coalesced into large origin reads; calls `found` with each
  // file whose bytes pass their checksum.
  void ReadCoalesced(std::vector<format::Entry> entries,
                         const std::function<void(const format::Entry&, cache::Blob)>& found);
  // The entry at `path` (relative to the root, or absolute under the mount point).
  Result<format::Entry> ResolvePath(std::string_view path) const;
  // Queues prefetch of `keys` and the other members of their samples.
  void SubmitPrefetch(const std::vector<uint64_t>& keys, cache::PrefetchPattern pattern);
  Attr EntryAttr(const format::Entry& e) const;
  Attr ControlDirAttr() const;
  Result<format::Entry> EntryForIno(uint64_t ino) const;
  // A new inode holding a fresh copy of control file `name`.
  Result<Attr> NewSnapshot(std::string_view name);
  // Whether a file of `size` bytes is loaded whole on a miss: if it is not too large to hold
  // and the RAM tier could admit it or the read buffer hold it. Otherwise it is streamed.
  bool LoadsWhole(uint64_t size) const;
  // The largest file worth prefetching: one the prefetch buffer holds next to others.
  uint64_t PrefetchLimit() const;
  // `known`: the file's bytes, already at hand (pushed), used instead of loading on a miss.
  Result<ReadData> ReadRegular(const format::Entry& e, uint64_t offset, size_t size,
                               cache::Blob known = nullptr);
  // A read of a regular file: feeds readahead and the hint, then ReadRegular.
  Result<ReadData> ReadFile(const format::Entry& e, uint64_t offset, size_t size,
                            uint64_t stream, cache::Blob known = nullptr);
  // The cache's loader: a prefetched copy if there is one, else the sample from its shard.
  Result<cache::Blob> LoadForRead(const format::Entry& e);
  // Reads `members` (SampleMembers(e)) in one origin read; returns e's bytes.
  Result<cache::Blob> LoadSample(const format::Entry& e, const std::vector<format::Entry>& members);
  // `e` and the other files of its sample that lie next to it in the shard (at most 32).
  std::vector<format::Entry> SampleMembers(const format::Entry& e) const;
  // Feeds the stream's access pattern and queues a prefetch of the samples it predicts.
  void PredictAndPrefetch(const format::Entry& e, uint64_t stream);
  // On a prefetch worker: loads the job's files, neighbours in one read, into the buffer.
  void RunPrefetch(const cache::PrefetchJob& job);
  Status CountError(const Status& s);
  nlohmann::json ClusterJson() const;
  nlohmann::json WhatIfJson() const;
  void RecordHistory();  // REQUIRES: warm_mu_ held

  std::unique_ptr<format::Dataset> dataset_;
  FilesystemOptions options_;
  Metrics metrics_;
  cache::RamTier ram_tier_;
  std::unique_ptr<cache::CacheTier> ssd_tier_;  // may be null
  std::unique_ptr<cache::ClusterTier> cluster_tier_;  // may be null
  cache::TieredCache cache_;
  cache::PrefetchBuffer prefetch_;
  cache::ReadBuffer read_buffer_;
  std::atomic<uint64_t> origin_reads_{0};
  std::atomic<uint64_t> origin_bytes_{0};
  RangedReader ranged_;  // after the counters it adds to
  std::atomic<uint64_t> prefetch_reads_{0};
  std::atomic<uint64_t> prefetch_bytes_{0};
  cache::AccessPatternDetector detector_;
  cache::HintedOrder hint_;
  std::atomic<bool> hint_active_{false};
  std::atomic<bool> push_allowed_{true};  // off while memory is tight
  std::atomic<const MemoryGovernor*> governor_{nullptr};
  // What-if curves of the RAM tier (every file read the daemon sees) and of the SSD tier (the
  // reads the RAM tier missed).
  cache::WhatIf ram_what_if_;
  std::unique_ptr<cache::WhatIf> ssd_what_if_;  // null without an SSD tier
  // Hit ratios over time for mmfs stats --plot: a sample every 10 s, the last 6 hours.
  struct HistoryPoint {
    double uptime;
    std::vector<std::pair<uint64_t, uint64_t>> tiers;  // (hits, lookups) per tier
  };
  std::deque<HistoryPoint> history_;  // guarded by warm_mu_

  // Warm-up (mmfs warmup): a queue of (entry index, tier) run by its own thread.
  mutable std::mutex warm_mu_;
  std::condition_variable warm_cv_, warm_idle_cv_;
  std::deque<std::pair<uint64_t, cache::CacheTier*>> warm_queue_;  // guarded by warm_mu_
  bool warm_busy_ = false;                                         // guarded by warm_mu_
  bool warm_stop_ = false;                                         // guarded by warm_mu_
  std::string control_sync_;                                       // guarded by warm_mu_
  std::atomic<uint64_t> warm_requested_{0}, warm_done_{0}, warm_bytes_{0}, warm_skipped_{0},
      warm_rejected_{0}, warm_errors_{0}, evicted_{0};
  std::thread warm_thread_;
  // Declared last: destroyed first, so no job runs against members already gone.
  std::unique_ptr<cache::PrefetchWorkers> workers_;

  mutable std::mutex mu_;
  uint64_t next_snapshot_ = 0;                     // guarded by mu_
  std::map<uint64_t, cache::Blob> snapshots_;      // by inode; guarded by mu_
};

}  // namespace mmfs::fs
