// FillShare: how the hosts of a job split the fill through their cluster tier (memcached), so
// that each byte of a dataset comes from the store once per job, not once per host.
//
// The fetchable files are cut into chunks, the same on every host: runs of index-order
// neighbours in one shard, `chunk_bytes` of span at most (what one request reads). A host claims
// a chunk before it reads it from the store (a mark added with memcached's atomic `add`, kept
// for `claim_ttl`), writes the chunk's files to the cluster, then marks the chunk done and drops
// the claim (a host that claims a done chunk later, joining late, reads the cluster). It
// claims first the chunks whose claim hashes to its own memcached server (`self`, --cluster-self),
// then the others from the far end, so that a host with time left takes work from a slower one
// rather than race it. A chunk another host holds is read from the cluster once that host marked
// it done; what is missing then (evicted, a server lost), or once the claim has lapsed (the host
// is gone) or the chunk waited `peer_wait`, comes from the store. A server that does not answer
// makes its chunks this host's own: the job may fetch a byte twice, never miss one. A reader's
// miss of a file in a chunk another host holds waits for the cluster too (PeerFetches, at most
// `demand_wait`), so that readers faster than the fill do not read the store once per host.
//
// When this host's tier keeps only a share of the dataset but the cluster can hold all of it,
// the chunks past the share are cluster-only: claimed and read from the store as the others,
// but written to the cluster alone (a file the cluster fails to take is left to its readers,
// which read it alone from the store); one another host holds is looked at again every second until it is done, or its claim lapses and this
// host takes it (this host's readers find its files in the cluster, or wait for them as for any
// chunk another host holds). It is never read into this host's tier. The job's fill then brings
// the whole dataset into the cluster once, and each host keeps its share.
//
// Ownership: borrows the cluster tier, which must outlive it. Thread-safety: all methods are
// thread-safe; no lock is held over a request to the cluster.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/cluster_tier.h"
#include "fs/format/dataset.h"
#include "fs/read/peer_fetches.h"
#include "fs/readahead/fill_types.h"

namespace mmfs::fs {

struct FillShareOptions {
  std::string self;  // "host:port" of this host's memcached server; empty: none is
  std::chrono::seconds claim_ttl{30};
  std::chrono::milliseconds peer_wait{20000};   // a chunk another host holds, waited for at most
  std::chrono::milliseconds peer_retry{100};    // between looks at a chunk not done yet
  // A demand miss of a file in a chunk another host holds, waited for at most (PeerFetches):
  // a chunk is claimed as its reads start, so its files land within a few requests' time unless
  // its holder is in trouble.
  std::chrono::milliseconds demand_wait{3000};
};


class FillShare final : public PeerFetches {
 public:
  FillShare(cache::ClusterTier& cluster, FillShareOptions options);

  // Cuts entries [0, end) into chunks (`fetchable` says which entries count) and orders them;
  // those of entries [keep_end, end) are cluster-only (keep_end <= end; a chunk never spans it).
  void Plan(const format::Dataset& dataset, uint64_t keep_end, uint64_t end, uint64_t chunk_bytes,
            const std::function<bool(const format::Entry&)>& fetchable);
  // Orders again the chunks whose files `missing` says are not all held, and the cluster-only
  // chunks whose read from the store did not complete (a later pass).
  void Replan(const std::function<bool(const std::vector<format::Entry>&)>& missing);

  enum class Kind {
    kStore,   // read the chunk's files from the store, then Fetched()
    kPeers,   // read them from the cluster, then AfterPeers()
    kWait,    // nothing due now (chunks wait for other hosts): ask again a little later
    kNone,    // nothing left in this pass
  };
  struct Task {
    Kind kind = Kind::kNone;
    size_t chunk = 0;
    std::vector<format::Entry> files;  // to read (the chunk's files the tier lacks)
    std::vector<format::Entry> held;   // kStore: the chunk's files the tier holds, to publish
    bool cluster_only = false;         // kStore: written to the cluster, not kept here
    std::chrono::steady_clock::time_point due;  // kWait: when to ask again
  };
  // The next chunk to work on; `files` are those `held` does not say the target holds. May
  // claim a chunk (requests to the cluster). Every kStore and kPeers task is ended by one
  // Fetched() or AfterPeers() returning false; after kWait, ask again at `due`.
  Task Next(const std::function<bool(const format::Entry&)>& held);
  // The chunk's read from the store ended: `complete` marks it done for the other hosts;
  // otherwise this host's claim on it is dropped, so that another pass (or host) can take it.
  void Fetched(size_t chunk, bool complete);
  // After a read from the cluster that gave `files` files (`bytes`) of the chunk and left
  // `missing`: true if those are to be read from the store now (then Fetched() ends the task):
  // the chunk is done but lost them, or its claim lapsed and this host took it, or it waited
  // `peer_wait`. False ends the task: nothing was missing, or the chunk waits for its holder.
  bool AfterPeers(size_t chunk, uint64_t files, uint64_t bytes, uint64_t missing);

  // PeerFetches, for the demand misses of this host: a chunk another host claimed (its claim
  // mark there, this host not its holder) and not yet done, unless a wait for it ran out less
  // than `claim_ttl` ago.
  bool FetchingElsewhere(uint64_t entry) override;
  void WaitedOut(uint64_t entry) override;
  std::chrono::milliseconds DemandWait() const override { return options_.demand_wait; }
  void CountDemandWait(bool served) override;

  FillHostsStats Stats() const;
  // The claim marks of the plan's chunks, in order (tests: a host that claimed and went).
  std::vector<std::string> ClaimNames() const;

 private:
  struct Waiting {
    size_t chunk;
    std::chrono::steady_clock::time_point next;  // due to be looked at
  };
  // Marks of a chunk. chunks_ and chunk_bytes_ are set by Plan before any other call.
  std::string ChunkName(size_t chunk) const;
  std::string ClaimName(size_t chunk) const;
  std::string DoneName(size_t chunk) const;

  cache::ClusterTier& cluster_;
  const FillShareOptions options_;

  mutable std::mutex mu_;
  std::vector<std::vector<format::Entry>> chunks_;  // guarded by mu_ (set by Plan)
  std::vector<bool> own_;                           // guarded by mu_
  std::vector<bool> cluster_only_;                  // guarded by mu_ (set by Plan)
  // A cluster-only chunk that needs nothing more from this host: read into the cluster, or
  // left to another host; guarded by mu_.
  std::vector<bool> settled_;
  uint64_t chunk_bytes_ = 0;                        // guarded by mu_
  std::deque<size_t> order_;                        // to claim; guarded by mu_
  std::deque<Waiting> waiting_;                     // held by others; guarded by mu_
  std::vector<bool> mine_;      // this host holds the claim; guarded by mu_
  std::vector<bool> counted_;   // its held files counted as present; guarded by mu_
  // Found done with files missing once already: the cluster was read again before the store
  // (the holder may have finished between the read and the look at its mark); guarded by mu_.
  std::vector<bool> rechecked_;
  // Until when readers' misses do not wait for each chunk (a wait for it ran out); guarded by mu_.
  std::vector<std::chrono::steady_clock::time_point> no_wait_until_;
  // Queues `chunk` to be looked at again at `next`, keeping waiting_ in due order. REQUIRES: mu_.
  void WaitLocked(size_t chunk, std::chrono::steady_clock::time_point next);
  // Next() for cluster-only chunk `c`: claims it (mu_ released meanwhile) and returns its task,
  // or nothing when it needs nothing from this host. REQUIRES: mu_ held by `lock`.
  std::optional<Task> NextClusterOnlyLocked(size_t c, std::unique_lock<std::mutex>& lock);
  // The chunk holding entry `entry`, or chunks_.size(). REQUIRES: mu_.
  size_t ChunkOfLocked(uint64_t entry) const;
  // When each chunk first waited for another host; guarded by mu_.
  std::vector<std::chrono::steady_clock::time_point> waited_since_;
  unsigned outstanding_ = 0;    // tasks and claims under way; guarded by mu_
  FillHostsStats stats_;                            // guarded by mu_
};

}  // namespace mmfs::fs
