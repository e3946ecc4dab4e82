// MissLoader: loads what missed every cache tier, for each room that loads: a READ's miss
// (FileReader, as the tier stack's loader), prefetch jobs (Prefetcher) and warm-up batches
// (Warmup). It owns what a miss reads besides the file itself: the sample's members, the extent
// around them from a slow origin, the cluster tier's multi-get and fill, the samples of a view.
//
// A demand miss of file f of any tree (Load), in order:
//  1. a copy already at hand: prefetched (the MemberBuffer: the prefetch buffer), or a neighbour
//     an extent read kept (ExtentReader::Take; originals only);
//  2. the sample's members (SampleMembers: k.jpg with k.txt, k.json, next to f in the index and
//     back to back in its shard), as files of f's tree (ViewFiles::Members);
//  3. with a cluster tier, the whole sample in one multi-get (one round trip, not one per file):
//     f found there is served, the other members wait in the prefetch buffer; an original that
//     another host of the job is fetching into the cluster now (PeerFetches) is waited for
//     there, looked up every 20 ms, until it lands, its holder ends, the daemon stops, or the
//     demand wait (or half of what is left of the READ's deadline) passes;
//  4. an original: the run of members around f the RAM tier lacks, in one read of its shard
//     (OriginReader::LoadSample); from a slow origin the extent around them instead (the extent
//     plan, extent_plan.h: steps 1 and 2 on the extent reader's state, the index walk, step 3),
//     whose neighbours go to the extent reader (Keep). An extent read that fails with an I/O
//     error is read again as the sample alone. A file of a view (a view sample): f from its
//     shard (view or base), the other members from theirs, one read for each run of
//     neighbours: a resized image read from the view's shard brings its caption from the base
//     shard, and the other way round;
//  5. members go to the prefetch buffer, and every file read from a shard is filled into the
//     cluster tier for other hosts.
// Members the RAM tier holds are not asked of the cluster, nor read again with an original.
// Prefetch (LoadAhead): a batch of keys, one cluster multi-get, then what it lacked from the view
// shards and the base shards in coalesced reads; filled into the cluster. Warm-up (LoadWarm):
// originals in coalesced reads, filled into the cluster (warm-up does not ask it).
//
// Ownership: borrows the dataset, the origin reader, the view files, the tier stack and the
// extent reader, which must outlive it. The prefetch buffer is lent per call (MemberBuffer): the
// Prefetcher, which owns it, calls the loader.
// Thread-safety: all methods are thread-safe; the loader has no lock of its own (each room it
// calls locks only itself).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "cache/tier.h"
#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/read/extent_reader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/peer_fetches.h"
#include "fs/read/view_files.h"

namespace mmfs::fs {

struct MissLoaderOptions {
  // Whether a miss loads the file's whole sample (off: just the file).
  bool sample_members = true;
};

// Where a demand load finds a prefetched copy of its file and leaves the sample's other members:
// the prefetch buffer, implemented by the Prefetcher.
class MemberBuffer {
 public:
  // The prefetched copy of `key` (taken: counted used; waits for a load in flight), or null.
  virtual cache::Blob Take(uint64_t key) = 0;
  // The same without waiting: null while it is still loading (then `*loading` is set).
  virtual cache::Blob TakeHeld(uint64_t key, bool* loading) = 0;
  // A member of a sample that a demand read loaded with its file: held for its reader unless
  // the RAM tier has it already.
  virtual void PutMember(uint64_t key, cache::Blob blob) = 0;
  // The largest file worth holding there: the other members together are at most this.
  virtual uint64_t FileLimit() const = 0;

 protected:
  ~MemberBuffer() = default;
};

class MissLoader {
 public:
  // Receives each file a load found, checked, by cache key.
  using Found = std::function<void(cache::CacheKey key, cache::Blob blob)>;

  MissLoader(const format::Dataset& dataset, OriginReader& origin, ViewFiles& views,
             cache::TierStack& tiers, ExtentReader& extents, MissLoaderOptions options);

  // The fill shared with the job's other hosts, once it exists (null: none); must outlive every
  // Load that may use it (the Filesystem stops the FUSE and miss threads, then clears it, before
  // the fill goes).
  void SetPeerFetches(PeerFetches* peers) { peers_.store(peers, std::memory_order_release); }

  // `e` and the other files of its sample that lie next to it in the index and back to back in
  // its shard (at most 32), if the others together are at most `max_other_bytes` (and the span
  // 16 MiB); else just `e`. Index order.
  std::vector<format::Entry> SampleMembers(const format::Entry& e, uint64_t max_other_bytes) const;
  // A demand miss of regular file `f` (see above): its bytes, checked. `buffer` gives a
  // prefetched copy and takes the other members. Errors are counted (OriginReader::CountError).
  Result<cache::Blob> Load(const TreeFile& f, MemberBuffer& buffer);
  // Step 1 alone, without waiting and without I/O beyond the SSD tier: a prefetched copy that
  // has landed, or a kept neighbour; null otherwise (also while its prefetch is still loading).
  cache::Blob TakeAtHand(const TreeFile& f, MemberBuffer& buffer);
  // A neighbour an extent read kept for `key` (ExtentReader::Take), taken, or null: a prediction
  // found there is moved into the prefetch buffer instead of being read again. `loading`: do not
  // wait for an extent in flight that brings it, say so (ExtentReader::TakeHeld).
  cache::Blob TakeNeighbour(cache::CacheKey key, bool* loading = nullptr);
  // Prefetch: `keys` (any tree; files over `file_limit` bytes are left to their readers), asked
  // of the cluster in one multi-get, the rest read in coalesced reads (cause prefetch). Files
  // that fail are left for their own reads to report.
  void LoadAhead(const std::vector<cache::CacheKey>& keys, uint64_t file_limit, const Found& found);
  // Warm-up: originals `entries` in coalesced reads (cause warm-up). Files that fail are not
  // found.
  void LoadWarm(std::vector<format::Entry> entries, const Found& found);

 private:
  // Step 3 of a miss: the sample from the cluster tier in one multi-get; f's bytes or null.
  cache::Blob LookupSample(const TreeFile& f, const std::vector<TreeFile>& members,
                           MemberBuffer& buffer);
  // Step 3's wait: original `f`, which another host is fetching into the cluster, looked up
  // there until it lands (its bytes), its holder ends or the demand wait passes (null).
  cache::Blob WaitForPeer(const TreeFile& f, MemberBuffer& buffer);
  // Step 4 for an original: `base` (SampleMembers) from its shard, or the extent around it.
  Result<cache::Blob> LoadOriginal(const TreeFile& f, std::vector<format::Entry> base,
                                   MemberBuffer& buffer);
  // Step 4 for a file of a view: `f` from its shard, the other `members` from theirs.
  Result<cache::Blob> LoadViewSample(const TreeFile& f, const std::vector<TreeFile>& members,
                                     MemberBuffer& buffer);
  // The extent to read for a miss of `e` whose sample read would be `members` (back to back in
  // one shard, e among them), or an empty one for the sample read.
  ExtentReader::Extent PlanExtent(const format::Entry& e,
                                  const std::vector<format::Entry>& members);
  // The room for an extent's neighbours now (step 2's readings).
  ExtentRoom Room() const;
  // Coalesced reads of originals / resized files, each file found filled into the cluster.
  void ReadOriginals(std::vector<format::Entry> entries, ReadCause cause, const Found& found);
  void ReadResized(std::vector<TreeFile> files, ReadCause cause, const Found& found);

  const format::Dataset& dataset_;
  OriginReader& origin_;
  ViewFiles& views_;
  cache::TierStack& tiers_;
  ExtentReader& extents_;
  const MissLoaderOptions options_;
  std::atomic<PeerFetches*> peers_{nullptr};
};

}  // namespace mmfs::fs
