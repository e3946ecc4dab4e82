// Filesystem: the read-only view of a packed dataset, with no FUSE in it; a dispatcher.
//
// Every FUSE request has a method here taking inode numbers and returning a Status or a Result;
// fs/fuse/fuse_ops.cc only converts. Tests drive this class directly, without a mount.
//
// What it does itself: inode <-> entry (entry i of the index is inode i + 1, the root is 1),
// attributes, directory listing, xattrs, and which room a request goes to. The rooms
// (docs/architecture.md):
//   ControlDir   the hidden `.mmfs` directory: stats snapshots, the hint and control links
//   FileReader   the bytes of a READ: read buffer, tier stack, and on a miss the MissLoader
//   MissLoader   what missed every tier, for FileReader, Prefetcher and Warmup: sample members,
//                the extent plan, the cluster multi-get and fill, a view's samples
//   OriginReader every read of the origin (the dataset's and the views' shards), counted by
//                cause
//   Prefetcher   patterns, the hint, sample members, the push into the page cache
//   ExtentReader what extent reads share (a miss from a slow origin reads the extent around its
//                sample): the plan's state, the neighbours waiting in the SSD tier or a RAM area
//   Warmup       `mmfs warmup`'s control lines, on its own thread
//   MissQueue    the READs that wait on a remote or slow origin, on threads of their own, so that
//                a request thread is never held by the origin (StartRead, FinishLater)
//   Filler       a remote dataset fetched into the cache ahead of its readers, at link speed,
//                once a training job is seen (every READ at offset 0 is noted, a hint starts it)
//   ViewFiles    the mount's trees (original, views): which bytes a file is, its cache key
//   ViewNamespace the derived image views, `@N/` (and the root with `mount --view N`)
// A READ of a regular file feeds the prefetcher (patterns, hint), then FileReader serves it:
// from the tiers, or on a miss through the MissLoader from a prefetched copy, the cluster or the
// sample's shard read, checked against its xxh3 before anything is served. Each byte of a file
// is read from the origin about once per pass.
//
// Its code is in four files: filesystem.cc (dispatch and namespace), filesystem_rooms.cc (the
// composition root: the rooms built and stopped), filesystem_read.cc (READs and pushes) and
// filesystem_stats.cc (the snapshot gathered from the rooms).
//
// Ownership: owns the dataset, the origin (its shards, fs/origin/origin.h) and every room. Rooms
// are destroyed in reverse order of construction: warm-up and the prefetch workers stop before
// what they use goes.
// Thread-safety: all methods are thread-safe, except SetHintTarget, SetControlTarget and
// SetControlLinkTarget, which must be called before serving.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/core/filesystem_options.h"
#include "fs/format/dataset.h"
#include "fs/memory/memory_governor.h"
#include "fs/metrics/metrics.h"
#include "fs/names/fs_types.h"
#include "fs/origin/origin.h"
#include "fs/read/view_files.h"
#include "fs/stats/stats.h"

namespace mmfs::cache {
class TierStack;
}  // namespace mmfs::cache

namespace mmfs::fs {

class ControlDir;
class ExtentReader;
class FileReader;
class Filler;
class MissLoader;
class MissQueue;
class ReaderAccounting;
class OriginReader;
class Prefetcher;
class ViewFiles;
class ViewNamespace;
class Warmup;

class Filesystem {
 public:
  // `tiers`: the mount's cache tiers (cache::BuildTierStack). `origin`: where the shards are,
  // the dataset's own added as origin::kDatasetTree (format::OpenLocalDataset; tests wrap it to
  // count or fail reads); it is advised as `options` say (random access, direct reads,
  // drop-behind: for the dataset's shards), and the published views' shards are added to it
  // here (ViewSet::Open).
  Filesystem(std::unique_ptr<format::Dataset> dataset, FilesystemOptions options,
             std::unique_ptr<cache::TierStack> tiers, std::unique_ptr<origin::Origin> origin);
  ~Filesystem();

  Result<Attr> Lookup(uint64_t parent, std::string_view name);
  Result<Attr> GetAttr(uint64_t ino);
  // GetAttr for an OPENDIR, counted as one; NotADirectory for anything else.
  Result<Attr> OpenDir(uint64_t ino);
  // A READDIR(PLUS) reply of `entries` entries to a request for `request_bytes` (counters).
  void NoteListing(size_t request_bytes, uint64_t entries);
  // Emits entries after position `offset` (0 = from the start). `emit(name, attr, next_offset)`
  // returns false when the caller's buffer is full; that entry is then emitted again next call.
  Status ReadDir(uint64_t ino, uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit);
  // Checks that `ino` may be opened with `flags`: ReadOnly (EROFS) for any write access.
  Status Open(uint64_t ino, int flags);
  // `stream` names the reader (the caller's pid at the FUSE layer; 0: unknown), whose access
  // pattern drives readahead.
  Result<ReadData> Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream = 0);
  // The same READ in two steps, for a thread that must not wait on the origin (a request thread
  // over /dev/fuse, which cache hits need). StartRead answers it when its bytes are at hand, or
  // when the origin is fast (a local disk: read at once, as Read does); otherwise it hands back
  // a PendingRead, which FinishLater serves on a miss thread (fs/read/miss_queue.h), calling
  // `done` there with the answer. Either way the READ is counted once, as Read counts it.
  struct PendingRead;
  struct ReadStart {
    std::optional<Result<ReadData>> answer;  // served now
    std::shared_ptr<PendingRead> pending;    // else: for FinishLater
  };
  using ReadDone = std::function<void(Result<ReadData>)>;
  ReadStart StartRead(uint64_t ino, uint64_t offset, size_t size, uint64_t stream);
  void FinishLater(std::shared_ptr<PendingRead> pending, ReadDone done);
  // Serves what was handed to the miss threads and stops them; READs started later are served
  // on their own threads. For the FUSE layer, once the session no longer takes requests.
  void StopMissThreads();
  // Pushes `ino` into the kernel's page cache through `store` if the prefetcher holds it
  // (prefetcher.h): a stored file is then taken as a READ of all of it would take it (into the
  // cache, the hint and the access patterns advanced; counted as pushed, not in bytes_served,
  // which counts READ replies). `store` returns 0, -ENOENT (no inode yet) or another -errno.
  // True when the file was pushed and the RAM tier holds it now: the pushed pages are a second
  // copy once their reader has read them (fs/fuse/page_cache_dropper.h).
  // Whether a push of `ino` could store anything now (the prefetcher holds or is loading it and
  // pushes are allowed): a cheap test, without I/O, so that the FUSE layer hands nothing else to
  // its pushers.
  bool MayPush(uint64_t ino);
  bool Push(uint64_t ino, uint64_t stream, size_t max_bytes, bool wait,
            const std::function<int(const char*, size_t)>& store);
  // Push in two steps (tests): ClaimPrefetched gives the whole of `ino` if it is a regular file
  // of at most `max_bytes` that the prefetcher has loaded, no reader has taken and no other push
  // has claimed (with `wait`, another push's claim is waited for); empty otherwise, without
  // I/O. EndPush must follow with the claimed owner; `stored`: the kernel holds the bytes.
  Result<ReadData> ClaimPrefetched(uint64_t ino, size_t max_bytes, bool wait);
  void EndPush(uint64_t ino, uint64_t stream, std::shared_ptr<const std::string> claimed,
               bool stored);
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
  // An ioctl arrived: mmfs has none (NoSuchIoctl, ENOTTY at the FUSE layer); counted, because
  // the kernel forwards every ioctl to the daemon, even isatty() on an open file.
  Status Ioctl(uint64_t ino);

  // The hint protocol (Prefetcher, prefetcher.h): a new order, its lines (paths), the end of it.
  void BeginHint();
  void AddHintLines(const std::vector<std::string>& lines);
  void EndHint();
  // The control protocol (fs/names/control_protocol.h), lines written to .mmfs/control by mmfs
  // warmup.
  void HandleControlLines(const std::vector<std::string>& lines);
  // Targets of `.mmfs/hint`, `.mmfs/control` (empty: none) and of `.mmfs` as a symlink to the
  // control directory's direct name on the FUSE mount (empty: `.mmfs` is the directory).
  // REQUIRES: not serving yet.
  void SetHintTarget(std::string target);
  void SetControlTarget(std::string target);
  void SetControlLinkTarget(std::string target);

  // The memory governor's hooks (fs/memory/memory_governor.h): new budgets for the RAM tier and
  // the buffers (shrinking evicts and returns the memory at once) and whether to push; and the
  // bytes the RAM tier holds.
  void SetMemoryTargets(const MemoryTargets& targets);
  uint64_t RamBytesUsed() const;
  // The FUSE layer dropped (or could not drop) a tier-held file's pages from the page cache.
  void CountPageCacheDrop(bool dropped) {
    (dropped ? metrics_.page_cache_drops : metrics_.page_cache_drops_skipped)
        .fetch_add(1, std::memory_order_relaxed);
  }
  // What became of a push the FUSE layer queued.
  void CountPush(PushQueueEvent e) {
    std::atomic<uint64_t>* counter = &metrics_.push_queue_full;
    switch (e) {
      case PushQueueEvent::kQueueFull: counter = &metrics_.push_queue_full; break;
      case PushQueueEvent::kWaited: counter = &metrics_.push_waited; break;
      case PushQueueEvent::kWaitSkipped: counter = &metrics_.push_wait_skipped; break;
      case PushQueueEvent::kWaitExpired: counter = &metrics_.push_wait_expired; break;
    }
    counter->fetch_add(1, std::memory_order_relaxed);
  }
  // Shows `governor`'s budget and pressure in stats; it must outlive serving (or be reset).
  void SetMemoryGovernor(const MemoryGovernor* governor) { governor_.store(governor); }

  // Every counter, typed; .mmfs/stats and .mmfs/metrics render it (stats_format.h).
  StatsSnapshot Stats(const StatsQuery& query = {}) const;
  // The JSON document served as .mmfs/stats.
  std::string StatsJson() const;

  // Who reads the mount (null without options.reader_accounting): the FUSE layer brackets each
  // request with Begin/End. Requests for the control files are not a reader's loading work:
  // IsControl tells them apart (`ino`, or `name` looked up in `parent`).
  ReaderAccounting* readers() { return readers_.get(); }
  bool IsControl(uint64_t ino) const;
  bool IsControlLookup(uint64_t parent, std::string_view name) const;

  const format::Dataset& dataset() const { return *dataset_; }
  Metrics& metrics() { return metrics_; }

 private:
  // Builds the rooms over dataset_, shard_origin_ and tiers_, in member order.
  void MakeRooms();
  Result<format::Entry> EntryForIno(uint64_t ino) const;
  Attr EntryAttr(const format::Entry& e) const;
  // The attributes of `ino` in whichever room owns it.
  Result<Attr> AttrOf(uint64_t ino) const;
  // `e` as a file of the original tree.
  TreeFile BaseFile(const format::Entry& e) const;
  // The file of any tree `ino` is (NotFound for control inodes).
  Result<TreeFile> FileForIno(uint64_t ino) const;
  // A READ of `f` at `offset` for the rooms that learn from reads: the prefetcher's patterns
  // and the hint, the fill's trigger.
  void NoteRead(const TreeFile& f, uint64_t offset, uint64_t stream);
  // A read of a regular file of any tree: NoteRead, then FileReader.
  Result<ReadData> ReadFile(const TreeFile& f, uint64_t offset, size_t size, uint64_t stream,
                            std::shared_ptr<const std::string> known = nullptr);
  // The regular file a READ of `ino` reads, or why there is none (control files excepted).
  Result<TreeFile> ReadTarget(uint64_t ino);
  // A READ's answer counted: bytes served (and a view's, by tree), or the timer failed.
  Result<ReadData> Counted(Result<ReadData> r, const TreeFile& f, uint64_t offset, bool view,
                           OpTimer& timer);
  // Whether a READ that missed waits for the origin on a miss thread: the origin is remote, or
  // slow enough that a request thread would be held for long (a millisecond or more a read).
  bool QueuesMisses() const;

  // In construction order (each room borrows only rooms above it).
  std::unique_ptr<format::Dataset> dataset_;
  // The shards, the views' trees added by MakeRooms; read only through origin_ (OriginReader).
  std::unique_ptr<origin::Origin> shard_origin_;
  const FilesystemOptions options_;
  Metrics metrics_;
  std::unique_ptr<cache::TierStack> tiers_;
  std::unique_ptr<OriginReader> origin_;
  std::unique_ptr<ViewFiles> view_files_;
  std::unique_ptr<ExtentReader> extents_;
  std::unique_ptr<MissLoader> loader_;
  std::unique_ptr<Prefetcher> prefetcher_;
  std::unique_ptr<FileReader> reader_;
  std::unique_ptr<ViewNamespace> views_;
  std::unique_ptr<Warmup> warmup_;
  std::unique_ptr<ReaderAccounting> readers_;
  std::unique_ptr<ControlDir> control_;
  std::unique_ptr<MissQueue> misses_;  // null with options_.miss_threads == 0
  std::unique_ptr<Filler> filler_;     // null with fill off
  const bool remote_origin_;  // the origin sends requests over a network (RequestStats)
  std::atomic<const MemoryGovernor*> governor_{nullptr};
};

}  // namespace mmfs::fs
