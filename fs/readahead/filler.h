// Filler: fetches a dataset from a remote store into the local cache ahead of its readers, in
// large ranged reads with as many in flight as fill the link, so that a first epoch from a
// bucket runs at the speed of the link and every byte crosses it once.
//
// What is fetched: the dataset's files in index order (pack order, so runs of neighbours in a
// shard are one request of up to `chunk_bytes`), skipping what the target tier holds already (a
// remount, the readers' own misses) and files too large to load whole (left to their readers).
// Into the SSD tier, or the RAM tier without one; with an SSD tier, the RAM tier takes a copy too
// while it has free room (never in place of what it holds), so that the epoch reads from memory.
// When the dataset fits the tier (a margin kept), all of it; when it does not, a share: the files in index order up to the tier's budget
// times `share_of_cache`, and the tier admits from then on only that share (SetAdmitBelow), so
// the share stays from epoch to epoch and only the rest is read per epoch, sample by sample.
//
// When: `on` at once; `auto` once a training job is seen, not a look into the mount: when
// `trigger_files` distinct files (or half the dataset's files, if fewer) have been read (READs at
// offset 0 of originals), or an order is written to the hint. `ls`, `stat`, `find` and reading a handful of files fetch nothing.
//
// How fast: a hill-climb on requests in flight (in_flight_climb.h), from `first_in_flight`,
// judged every `window` on the link's throughput and the requests the store was offered (store
// requests integrated over time, plus demand misses). The requests in flight hold at most
// `max_bytes_in_flight`. Demand misses go first: each READ being served on a miss thread takes
// one of the fill's places (`demand_in_flight`).
//
// A store that fails: files of a read that failed are left to their readers, counted; after
// failures the fill waits (1 s, doubling to 30 s) before its next request, and goes on; up to
// two more passes fetch what failed. After 8 reads in a row that found nothing the fill stops
// ("failed"): the readers read what they need. A tier that stores nothing now (a full or
// failing disk) pauses it. A file the tier did not keep is counted as not stored, not fetched.
//
// The link's throughput the hill-climb follows is every byte read from the origin (the readers'
// misses included), over windows that saw a read end.
//
// With a cluster tier the job's hosts share the fill: each reads from the store the chunks it
// claims and writes them to the cluster; the rest it reads from the cluster (fill_share.h).
// When the tier keeps only a share and the cluster's servers can hold the whole dataset (three
// quarters of their memory and extstore, as memcached's `stats` report them), the chunks past
// the share are fetched too, into the cluster only, so the job's readers find everything there.
//
// Ownership: borrows the dataset, the origin reader and the tier stack, which must outlive it;
// owns its threads (the controller and up to max_in_flight workers), stopped and joined by the
// destructor, whose requests then retry no more (fs/origin/read_deadline.h).
// Thread-safety: all methods are thread-safe. mu_ guards the cursor and the controller's state;
// no lock is held while reading the origin or inserting into a tier.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/read/origin_reader.h"
#include "fs/readahead/fill_share.h"
#include "fs/readahead/fill_types.h"
#include "fs/readahead/in_flight_climb.h"

namespace mmfs::fs {

class Filler {
 public:
  // `demand_in_flight`: READs being served from the store now (the miss threads' running jobs).
  Filler(const format::Dataset& dataset, OriginReader& origin, cache::TierStack& tiers,
         FillOptions options, std::function<uint64_t()> demand_in_flight);
  ~Filler();
  Filler(const Filler&) = delete;
  Filler& operator=(const Filler&) = delete;

  // A READ at offset 0 of original `entry_index` (auto: counted towards the trigger).
  void NoteRead(uint64_t entry_index);
  // Starts the fill now (auto or on), saying why; later calls do nothing.
  void Trigger(const std::string& why);
  // Waits until the fill is done or stopped, or `timeout` passes (tests, tools); true if done.
  bool WaitDone(std::chrono::milliseconds timeout);
  FillStats Stats() const;
  // The fill shared with the job's other hosts, for the readers' misses (null: not shared).
  PeerFetches* peer_fetches() { return hosts_.get(); }

 private:
  struct Batch {
    std::vector<format::Entry> files;
    uint64_t bytes = 0;
  };
  void Control();  // the controller thread
  void Work();     // a worker thread
  // A worker of a fill shared with other hosts. REQUIRES: mu_ (held on entry, released within).
  void WorkShared(std::unique_lock<std::mutex>& lock);
  // Reads `files` from the store in runs of neighbours, stores what came unless `cluster_only`
  // (and, shared, writes it to the cluster); returns how many came.
  uint64_t FetchFromStore(const std::vector<format::Entry>& files, bool cluster_only);
  // After a read that brought `found` of `wanted` files: backoff and the failure count.
  // REQUIRES: mu_.
  void NoteReadLocked(uint64_t found, uint64_t wanted);
  // Whether the fill fetches `e`: a regular file the target tier can hold.
  bool Fetchable(const format::Entry& e) const;
  // Plans what the fill covers (the share, if any) and bounds the tier to it.
  void Plan();
  // Stores a fetched file in the target tier, counted as fetched if the tier kept it.
  void Store(const format::Entry& e, cache::Blob blob);
  // Requests in flight at most: max_in_flight, within max_bytes_in_flight.
  unsigned MaxInFlight() const;
  // The next run of neighbours to read, from the cursor. REQUIRES: mu_.
  Batch NextLocked();
  // Waits until a worker may start a request (true), or the fill ends (false). REQUIRES: mu_
  // held by `lock`.
  bool WaitForPlaceLocked(std::unique_lock<std::mutex>& lock);
  // Whether a worker may start a request now. REQUIRES: mu_.
  bool MayStartLocked() const;
  // A fill request to the store starts (+1) or ends (-1): kept integrated over time, so that a
  // window knows how many requests the store was offered. REQUIRES: mu_.
  void StoreRequestsLocked(int delta);

  const format::Dataset& dataset_;
  OriginReader& origin_;
  cache::CacheTier* const target_;
  cache::CacheTier* const ram_;
  cache::ClusterTier* const cluster_;  // null: not shared
  std::unique_ptr<FillShare> hosts_;   // the fill shared with the job's other hosts; or null
  const FillOptions options_;
  const std::function<uint64_t()> demand_in_flight_;

  // auto: the files read so far, one bit each, until the trigger.
  std::unique_ptr<std::atomic<uint64_t>[]> seen_;
  std::atomic<uint64_t> distinct_{0};
  std::atomic<bool> triggered_{false};
  std::atomic<bool> stop_{false};

  mutable std::mutex mu_;
  std::condition_variable cv_;  // the cursor, the places in flight, the trigger, the stop
  std::string state_ = "waiting";  // guarded by mu_
  std::string trigger_;            // guarded by mu_
  bool share_ = false;             // guarded by mu_
  bool cluster_rest_ = false;      // shared, the rest past the share into the cluster; mu_
  uint64_t dataset_bytes_ = 0, budget_ = 0;  // what the plan saw; guarded by mu_
  int pass_ = 1;                   // guarded by mu_
  uint64_t batches_done_ = 0;      // guarded by mu_
  int failures_in_a_row_ = 0;      // reads that found nothing; guarded by mu_
  bool failing_ = false;           // too many of them: the fill stops; guarded by mu_
  uint64_t cursor_ = 0;            // the next entry to look at; guarded by mu_
  uint64_t end_ = 0;               // entries below it are covered; guarded by mu_
  uint64_t target_files_ = 0, target_bytes_ = 0;  // guarded by mu_
  unsigned in_flight_ = 0;         // guarded by mu_
  uint64_t bytes_in_flight_ = 0;   // guarded by mu_
  InFlightClimb climb_{1, 1};      // set as the fill starts; guarded by mu_
  double last_rate_ = 0;           // guarded by mu_
  // The fill's requests to the store now (in shared mode fewer than in_flight_: a worker may
  // be reading the cluster), and their sum over time in request-seconds; guarded by mu_.
  unsigned store_in_flight_ = 0;
  double offered_seconds_ = 0;
  std::chrono::steady_clock::time_point offered_since_{};
  bool exhausted_ = false;         // the cursor reached the end; guarded by mu_
  bool finished_ = false;          // no pass follows: the workers end; guarded by mu_
  std::chrono::steady_clock::time_point resume_at_{};  // after failures; guarded by mu_
  std::chrono::milliseconds backoff_{0};               // guarded by mu_
  std::chrono::steady_clock::time_point started_{};    // guarded by mu_
  std::chrono::steady_clock::time_point ended_{};      // guarded by mu_

  std::mutex store_mu_;  // one insert at a time, so that the tier's write queue never overflows
  uint64_t ram_room_ = 0;  // what the fill may still put in the RAM tier; guarded by store_mu_
  std::atomic<uint64_t> fetched_files_{0}, fetched_bytes_{0}, present_files_{0},
      present_bytes_{0}, failed_files_{0}, not_stored_files_{0};
  std::thread controller_;  // last: started once the members it uses exist
};

}  // namespace mmfs::fs
