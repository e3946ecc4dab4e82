// OriginReader: the daemon's reads of the origin (fs/origin/origin.h), and their counters. Every
// shard byte the daemon reads passes ReadSpan: the dataset's own shards (tree 0) for the files
// below, and a view's shards for its resized images (ViewFiles, view_files.h, which checks them
// against the view's index).
//
// - A demand miss loads the file's whole sample (k.jpg with k.txt, k.json, back to back in the
//   shard: the miss loader's SampleMembers, fs/read/miss_loader.h), or the extent around it, in
//   one read (LoadSample).
// - The prefetcher and warm-up read lists of files with neighbours coalesced into large
//   sequential reads (ReadCoalesced).
// - A file too large to load whole is checked once by streaming, then read by range
//   (ReadRange, ranged_reader.h), through the read buffer it owns.
// Every file's bytes pass one check, Dataset::CheckSum (the message names shard, offset, path),
// before anything is served or cached. Reads are counted by cause (demand, prefetch, warm-up);
// damaged files and failed reads a reader asked for are counted in Metrics (CountError) and
// logged, thinned after 100.
//
// The read buffer lives here because it is how each origin byte is read about once per pass:
// it holds the bytes of a file read in several READs that the RAM tier did not keep, and the
// verified head of a streamed large file.
//
// Every origin read is timed into an OriginCostModel (origin_cost_model.h): the origin's latency
// and bandwidth as this daemon sees them, and the read size that would pay.
//
// Every file fetched whole is noted in a RefetchTracker (cache/refetch_tracker.h), which counts
// the fetches that repeat one whose bytes never reached a reader (origin re-reads); FileReader
// reports the deliveries (NoteDelivered). Ranges of a streamed large file are not tracked.
//
// Ownership: borrows the dataset, the origin and the metrics (which must outlive it); owns the
// read buffer and the ranged reader.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/read_buffer.h"
#include "cache/refetch_tracker.h"
#include "cache/tier.h"
#include "fs/format/dataset.h"
#include "fs/metrics/metrics.h"
#include "fs/origin/origin.h"
#include "fs/read/origin_cost_model.h"
#include "fs/read/ranged_reader.h"
#include "fs/read/read_stats.h"

namespace mmfs::fs {

// The origin's types as the daemon's readers name them.
using origin::OriginBytes;
using origin::ShardRef;

enum class ReadCause : int {
  kDemand,    // a READ missed every tier (origin.reads / origin.bytes)
  kPrefetch,  // readahead, the hint, sample members loaded ahead (readahead.reads / .bytes)
  kWarmup,    // mmfs warmup (counted in origin.reads / origin.bytes too: it is not readahead)
  kFill,      // a remote dataset fetched into the cache ahead of its readers (fill.reads / .bytes)
  kCount,
};

struct CauseCounters {
  uint64_t reads = 0;
  uint64_t bytes = 0;
};

// The index range of a sample's own members; an extent's files outside it are neighbours.
struct MemberRange {
  uint64_t first = 0, last = UINT64_MAX;
  bool Contains(uint64_t index) const { return index >= first && index <= last; }
};

struct OriginReaderOptions {
  uint64_t read_buffer_bytes = 64ull << 20;
};

class OriginReader {
 public:
  using Found = std::function<void(const format::Entry&, cache::Blob)>;

  // Reads `dataset`'s files (its shards: `origin`'s kDatasetTree) and any other tree's spans.
  OriginReader(const format::Dataset& dataset, origin::Origin& origin, Metrics& metrics,
               OriginReaderOptions options);

  // Reads `members` (a sample's, or an extent's files: one shard, e among them) in one
  // demand read of the span covering them all and returns e's bytes, checked;
  // `other` receives each other member whose bytes pass their check (a damaged one is left for
  // its own read to report). Errors are counted (CountError). The span's bytes are counted as
  // e's, the sample members' (files in `sample`) and the neighbours' (the rest, padding
  // included).
  Result<cache::Blob> LoadSample(const format::Entry& e, const std::vector<format::Entry>& members,
                                 const Found& other, MemberRange sample = {});
  // Reads `entries` with neighbours coalesced into reads of at most 8 MiB; calls `found` with each
  // file whose bytes pass their check. Failures are not errors of any reader: not counted in
  // Metrics (the files' own reads report them); the caller sees them as files never found.
  void ReadCoalesced(std::vector<format::Entry> entries, ReadCause cause, const Found& found);
  // Bytes covering [offset, offset + len) of a file too large to load whole (ranged_reader.h).
  Result<cache::ReadBuffer::Span> ReadRange(const format::Entry& e, uint64_t offset, size_t len);
  // One read of the origin, of any tree, counted under `cause` and timed into the cost model; a
  // short read is an IoError.
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len, ReadCause cause);
  // The one checksum path: XXH3 of `bytes` against e's sum in the index (Dataset::CheckSum).
  Status Check(const format::Entry& e, std::string_view bytes) const;
  // Counts a Corruption or IoError a reader gets in Metrics and logs it; returns `s`.
  Status CountError(const Status& s);

  cache::ReadBuffer& read_buffer() { return read_buffer_; }
  const cache::ReadBuffer& read_buffer() const { return read_buffer_; }
  const format::Dataset& dataset() const { return dataset_; }
  CauseCounters Counters(ReadCause cause) const;
  // File `key` reached a reader (served to its end, or pushed): see refetch_tracker.h.
  void NoteDelivered(uint64_t key) { refetch_.NoteDelivered(key); }
  cache::RefetchCounters RefetchCounters() const { return refetch_.Counters(); }
  RangedCounters StreamedCounters() const { return ranged_.Counters(); }
  OriginCostEstimate CostEstimate() const { return cost_.Estimate(); }
  // These counters' part of a snapshot: reads by cause, streamed files, re-reads, the cost model
  // (the loads' errors and coalescing are the tier stack's: FileReader::CacheStats).
  void Report(OriginStats* out) const;

 private:
  const format::Dataset& dataset_;
  origin::Origin& origin_;
  Metrics& metrics_;
  const OriginReaderOptions options_;
  struct AtomicCause {
    std::atomic<uint64_t> reads{0};
    std::atomic<uint64_t> bytes{0};
  };
  std::array<AtomicCause, static_cast<size_t>(ReadCause::kCount)> causes_;
  // Of the demand bytes: the other members of the asked file's sample, and an extent's
  // neighbours (other samples' files and the padding between them), read with it.
  std::atomic<uint64_t> member_bytes_{0}, neighbour_bytes_{0};
  cache::RefetchTracker refetch_;
  OriginCostModel cost_;
  cache::ReadBuffer read_buffer_;
  RangedReader ranged_;  // after what it borrows
};

}  // namespace mmfs::fs
