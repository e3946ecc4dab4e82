// Warmup: the daemon's side of `mmfs warmup`. Handles the control protocol's lines
// (fs/names/control_protocol.h; paths resolved by fs/names/paths.h): loads files into the RAM or
// SSD tier, evicts them, acknowledges syncs.
//
// Loading runs on the warm-up thread, in batches of neighbours (index order is pack order), so
// warm-up reads the origin in large sequential reads (the miss loader's LoadWarm, counted as
// warm-up origin reads, which also fills the cluster tier for other hosts) and inserts straight
// into the chosen tier. A file counts
// as warmed once the tier holds it after its writes are done (each batch is flushed), so a disk
// that fills or fails shows as files not stored, with the tier's reason, never as warmed. The same
// thread calls `idle_tick` every 10 s while idle (the hit-ratio history of stats --plot), and
// once at start.
//
// Ownership: borrows the dataset, the miss loader and the tier stack, which must outlive it;
// owns its thread (joined by the destructor, which drops what is still queued).
// Thread-safety: all methods are thread-safe; HandleLines runs on the control channel's thread.
// mu_ is not held while loading, nor while calling idle_tick.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/read/miss_loader.h"
#include "fs/readahead/readahead_stats.h"

namespace mmfs::fs {

class Warmup {
 public:
  Warmup(const format::Dataset& dataset, MissLoader& loader, cache::TierStack& tiers,
         std::string mountpoint, uint64_t max_cached_file_bytes, std::function<void()> idle_tick);
  ~Warmup();
  Warmup(const Warmup&) = delete;
  Warmup& operator=(const Warmup&) = delete;

  // Lines of the control protocol, in order. Bad lines are logged and skipped.
  void HandleLines(const std::vector<std::string>& lines);
  void Stats(WarmupStats* out) const;

 private:
  void Loop();
  // Loads one batch into its tiers.
  void Load(const std::vector<std::pair<uint64_t, cache::CacheTier*>>& batch);

  const format::Dataset& dataset_;
  MissLoader& loader_;
  cache::TierStack& tiers_;
  const std::string mountpoint_;
  const uint64_t max_cached_file_bytes_;
  const std::function<void()> idle_tick_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<uint64_t, cache::CacheTier*>> queue_;  // guarded by mu_
  bool stop_ = false;                                         // guarded by mu_
  std::string last_sync_;                                     // guarded by mu_
  std::string problem_;  // why the last files not stored were not; guarded by mu_
  std::atomic<uint64_t> requested_{0}, done_{0}, bytes_{0}, skipped_{0}, rejected_{0},
      errors_{0}, evicted_{0}, not_stored_{0};
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace mmfs::fs
