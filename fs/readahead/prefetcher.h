// Prefetcher: loads files before their reader asks, and hands them over (to the miss loader, or
// into the kernel's page cache by a push).
//
// Three sources of predictions: the access pattern of each reader stream (cache/access_pattern.h:
// runs of consecutive or strided samples, found by walking the index around the file read,
// fs/read/neighbour_walk.h), the hinted order (MNT/.mmfs/hint, hinted_order.h), and the other
// members of a sample a demand read brought along (PutMember: the prefetch buffer is the demand
// load's MemberBuffer, fs/read/miss_loader.h). Jobs run on the prefetch workers: a prediction
// an extent read kept is moved over from the extent reader; the rest is loaded by the miss
// loader (LoadAhead: one cluster multi-get, then coalesced shard reads, cause prefetch). All of
// it is held in the prefetch buffer until its reader takes it (counted used) or it is pushed
// out (wasted).
//
// Every tree of the mount (view_files.h) is predicted the same way: a read in `@256/` predicts
// the same neighbours and sample members as in the original tree, as files of `@256/` (resized
// images from the view's shards, under their own keys; everything else the originals). The hint
// takes paths of any tree; its positions are (tree, entry) pairs.
//
// The push (the FUSE layer queues one after a LOOKUP reply and at the ioctl Python's open()
// sends, for files MayPush says are here, and its pushers, fs/fuse/page_pusher.h, call
// Filesystem::Push): a prefetched file is claimed, stored into the kernel's page
// cache by the front-end's `store`, and on success taken as a READ of the whole file would take
// it. The claim keeps two pushes (or a push and a reader) from serving one copy twice.
//
// Ownership: borrows the dataset, the view files, the tier stack and the miss loader, which
// must outlive it;
// owns the buffer, the detector, the hinted order and the worker threads (stopped first in the
// destructor, so no job runs against members already gone).
// Thread-safety: all methods are thread-safe; RunJob runs on the workers. Lock order: none held
// across rooms (the buffer, the detector and the hint each lock only themselves).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cache/access_pattern.h"
#include "cache/hinted_order.h"
#include "cache/prefetch_buffer.h"
#include "cache/prefetch_workers.h"
#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/read/miss_loader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/readahead_stats.h"

namespace mmfs::fs {

struct PrefetcherOptions {
  bool enabled = true;  // readahead on: patterns and the hint prefetch (members always)
  int threads = 2;
  uint64_t buffer_bytes = 64ull << 20;
  uint64_t max_cached_file_bytes = 64ull << 20;
  cache::ReadaheadConfig readahead;
  std::string mountpoint;  // hint lines may be absolute paths under it
  // Hint lines count only for files open to every user (FilesystemOptions says why).
  bool hint_open_to_all_only = false;
};

class Prefetcher final : public MemberBuffer {
 public:
  // Stores `size` bytes at `data` as the whole of the file in the kernel's page cache: 0 on
  // success, -ENOENT when the kernel has no inode for it yet, another -errno otherwise.
  using Store = std::function<int(const char* data, size_t size)>;

  Prefetcher(const format::Dataset& dataset, ViewFiles& views, cache::TierStack& tiers,
             MissLoader& loader, PrefetcherOptions options);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // A READ of `f` at `offset` by `stream` (0: unknown): feeds the stream's pattern and the hint
  // and queues what they predict, as files of f's tree.
  void OnRead(const TreeFile& f, uint64_t offset, uint64_t stream);
  // The demand load's MemberBuffer (miss_loader.h). A prefetched copy of `key` (taken: counted
  // used; waits for a load in flight), or null.
  cache::Blob Take(uint64_t key) override { return buffer_.Take(key); }
  cache::Blob TakeHeld(uint64_t key, bool* loading) override {
    return buffer_.TakeHeld(key, loading);
  }
  // A member of a sample that a demand read loaded with its file: held for its reader unless
  // the RAM tier has it already.
  void PutMember(uint64_t key, cache::Blob blob) override;
  // The largest file worth prefetching: one the buffer holds next to others.
  uint64_t FileLimit() const override;

  // The hint protocol, read from MNT/.mmfs/hint (a LinePipe, line_pipe.h): one writer session
  // is one order, which replaces the previous one; each line is a path (relative to the mount
  // root, or absolute under it).
  void BeginHint();
  void AddHintLines(const std::vector<std::string>& lines);
  void EndHint();

  // The push. Claim gives the whole of regular file `f` if it is at most `max_bytes`, loaded,
  // untaken and unclaimed (with `wait`, another push's claim is waited for); null otherwise,
  // without I/O. EndPush must follow with the claimed blob; it returns true when the file was
  // stored and taken from the buffer, so that the caller must treat it as a READ of all of it.
  // The buffer is keyed by f.key, so a resized file's push stores the resized bytes.
  cache::Blob Claim(const TreeFile& f, size_t max_bytes, bool wait);
  // Whether Claim could give anything now or soon: `f` held or loading, and pushes allowed
  // (a held file not pushed for want of memory is counted skipped, as Claim counts it).
  bool MayPush(const TreeFile& f);
  bool EndPush(const TreeFile& f, const cache::Blob& claimed, bool stored);
  // Claim, store, count, EndPush: the blob to treat as read, or null.
  cache::Blob Push(const TreeFile& f, size_t max_bytes, bool wait, const Store& store);

  // New budget for the buffer (shrinking drops what is held beyond it) and whether to push.
  void SetBudget(uint64_t buffer_bytes, bool push);
  uint64_t budget() const { return buffer_.budget(); }
  // Waits until queued work is done (tests).
  void Drain();
  void Stats(bool hint_available, ReadaheadStats* out) const;

 private:
  // Hint positions: tree * entries + entry (a key space of entries * trees).
  uint64_t Position(const TreeFile& f) const {
    return f.tree * dataset_.entry_count() + f.entry.index;
  }
  // Whether every user may read `e`: o+r on it, o+x on each directory above it.
  bool OpenToAll(const format::Entry& e) const;
  // Queues prefetch of the files at hint `positions` and the other members of their samples.
  void Submit(const std::vector<uint64_t>& positions, cache::PrefetchPattern pattern);
  void PredictAndSubmit(const TreeFile& f, uint64_t stream);
  // On a worker: loads the job's files (cache keys) into the buffer: kept neighbours moved
  // over, the rest through the miss loader.
  void RunJob(const cache::PrefetchJob& job);

  const format::Dataset& dataset_;
  ViewFiles& views_;
  cache::TierStack& tiers_;
  MissLoader& loader_;
  const PrefetcherOptions options_;
  cache::PrefetchBuffer buffer_;
  cache::AccessPatternDetector detector_;
  cache::HintedOrder hint_;
  std::atomic<bool> hint_active_{false};
  std::atomic<uint64_t> hint_closed_lines_{0};  // this order's lines for files not open to all
  std::atomic<bool> push_allowed_{true};  // off while memory is tight
  std::atomic<uint64_t> pushed_files_{0}, pushed_bytes_{0}, push_failures_{0}, push_skipped_{0};
  // Declared last: destroyed first, so no job runs against members already gone.
  std::unique_ptr<cache::PrefetchWorkers> workers_;
};

}  // namespace mmfs::fs
