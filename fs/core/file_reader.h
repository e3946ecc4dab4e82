// FileReader: the bytes of one READ of a regular file of any tree (view_files.h), wherever they
// are.
//
// A READ on a thread that must not wait (a FUSE request thread: cache hits need it) is tried
// first (TryRead): only what is at hand, never the origin or another caller's load; what that
// cannot serve is read again with Read on a thread that may wait (fs/read/miss_queue.h).
//
// In order: the read buffer (a file read in several READs that the RAM tier did not keep), the
// streamed path for a file too large to load whole (OriginReader::ReadRange), else the tier
// stack (RAM, then SSD, single flight) with the miss loader behind it (fs/read/miss_loader.h:
// a prefetched copy or a kept neighbour, else the sample from the cluster tier, from its shard
// or the extent around it, or a view's sample), lending it the prefetch buffer for the sample's
// other members. Every first READ of a file is recorded for the what-if curves, and the hit
// ratios are sampled into a history for `mmfs stats --plot`. A READ of a file the RAM tier
// holds says so, and whether it reached the end (ReadData::tier_holds, at_end): the FUSE layer
// then drops the file's pages from the page cache, so the bytes are held once. A READ the SSD
// tier served tells the extent reader, whose neighbour written there is then used.
//
// In fs/core, above the rooms it composes: the read path of fs/read with the Prefetcher
// (fs/readahead: lent to the miss loader as its MemberBuffer, and its buffer's budget set with the
// others in SetMemoryTargets), and the tier stack's part of the StatsSnapshot (fs/stats).
//
// Ownership: borrows the tier stack, the origin reader, the prefetcher, the extent reader and
// the miss loader, which must outlive it.
// Thread-safety: all methods are thread-safe. history_mu_ is a leaf lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/tier_stack.h"
#include "cache/what_if.h"
#include "fs/memory/memory_governor.h"
#include "fs/names/fs_types.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/prefetcher.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

class FileReader {
 public:
  // `max_cached_file_bytes`: the largest file loaded whole into memory.
  FileReader(const format::Dataset& dataset, cache::TierStack& tiers, OriginReader& origin,
             Prefetcher& prefetcher, ExtentReader& extents, MissLoader& loader,
             uint64_t max_cached_file_bytes);

  // [offset, offset + size) of regular file `f`, clipped to its end. `known`: the file's bytes,
  // already at hand (pushed), used instead of loading on a miss. A resized file is always loaded
  // whole (they are small); only an original can be too large and streamed. `tried`: a TryRead
  // of the same bytes came first (its tier lookups are counted already).
  Result<ReadData> Read(const TreeFile& f, uint64_t offset, size_t size,
                        cache::Blob known = nullptr, bool tried = false);
  // The same READ if its bytes are at hand: the read buffer, a tier, a prefetched copy that has
  // landed, a kept neighbour. nullopt when they need the origin or a load in flight: then Read
  // serves it, on a thread that may wait, with `tried` = `*looked_up` (whether this looked the
  // tiers up). Never waits.
  std::optional<Result<ReadData>> TryRead(const TreeFile& f, uint64_t offset, size_t size,
                                          bool* looked_up);
  // The memory governor's targets: RAM tier, prefetch and read buffers, the push.
  void SetMemoryTargets(const MemoryTargets& targets);
  // "ram", "ssd", "ram,ssd" or "none" (user.mmfs.resident).
  std::string Residency(uint64_t key) const;
  // Samples every keyed tier's (hits, lookups) into the history (every 10 s; the last 6 hours).
  void RecordHistory();
  void Stats(WhatIfStats* out) const;
  // The tier stack's part of a snapshot: each tier's counters (ram, ssd, cluster), the cluster
  // servers' health, and the loads that failed or waited for another caller's (in out->origin).
  void CacheStats(StatsSnapshot* out) const;
  // The bytes the RAM tier holds now (the memory governor's reading).
  uint64_t RamBytesUsed() const;

 private:
  // Whether a file of `size` bytes is loaded whole on a miss: if it is not too large to hold
  // and the RAM tier could admit it or the read buffer hold it. Otherwise it is streamed.
  bool LoadsWhole(uint64_t size) const;
  // [offset, offset + size) of `f` out of `blob`, which holds the file's bytes from `base` on.
  Result<ReadData> Serve(const TreeFile& f, uint64_t offset, size_t size, cache::Blob blob,
                         uint64_t base);
  // The same from the whole file, as the tier stack gave it (tier `served_by`): recorded for the
  // what-if curves, checked for size, held in the read buffer for the READs that follow.
  Result<ReadData> ServeWhole(const TreeFile& f, uint64_t offset, size_t size, cache::Blob blob,
                              size_t served_by);

  cache::TierStack& tiers_;
  OriginReader& origin_;
  Prefetcher& prefetcher_;
  ExtentReader& extents_;
  MissLoader& loader_;
  const uint64_t max_cached_file_bytes_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // What-if curves of the RAM tier (every file read the daemon sees) and of the SSD tier (the
  // reads the RAM tier missed).
  cache::WhatIf ram_what_if_;
  std::unique_ptr<cache::WhatIf> ssd_what_if_;  // null without an SSD tier
  mutable std::mutex history_mu_;
  std::deque<HistoryPoint> history_;  // guarded by history_mu_
};

}  // namespace mmfs::fs
