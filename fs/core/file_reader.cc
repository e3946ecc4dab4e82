#include "fs/core/file_reader.h"

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "cache/ram_tier.h"
#include "cache/ssd_tier.h"

namespace mmfs::fs {

FileReader::FileReader(const format::Dataset& dataset, cache::TierStack& tiers,
                       OriginReader& origin, Prefetcher& prefetcher, ExtentReader& extents,
                       MissLoader& loader, uint64_t max_cached_file_bytes)
    : tiers_(tiers),
      origin_(origin),
      prefetcher_(prefetcher),
      extents_(extents),
      loader_(loader),
      max_cached_file_bytes_(max_cached_file_bytes),
      ram_what_if_(tiers.ram().Counters().bytes_budget, dataset.manifest().files,
                   cache::RamTier::kEntryOverhead, cache::WhatIf::kFractions,
                   cache::WhatIf::kMaxKeys, cache::RamTier::kShards) {
  if (tiers_.local_disk() != nullptr) {
    ssd_what_if_ = std::make_unique<cache::WhatIf>(tiers_.local_disk()->Counters().bytes_budget,
                                                   dataset.manifest().files,
                                                   cache::SsdTier::kHeaderBytes);
  }
}

bool FileReader::LoadsWhole(uint64_t size) const {
  return size <= max_cached_file_bytes_ &&
         (size <= tiers_.ram().MaxEntryBytes() || size <= origin_.read_buffer().budget());
}

Result<ReadData> FileReader::Serve(const TreeFile& f, uint64_t offset, size_t size,
                                   cache::Blob blob, uint64_t base) {
  ReadData out;
  const uint64_t file_size = f.size();
  const size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  out.data = blob->data() + (offset - base);
  out.size = len;
  out.owner = std::move(blob);
  // The file's bytes reached the reader (the origin re-read count, refetch_tracker.h; it tracks
  // originals, by entry).
  if (offset + len == file_size && !f.resized()) origin_.NoteDelivered(f.entry.index);
  return out;
}

Result<ReadData> FileReader::ServeWhole(const TreeFile& f, uint64_t offset, size_t size,
                                        cache::Blob blob, size_t served_by) {
  const uint64_t file_size = f.size();
  if (offset == 0) {
    // One read of the file, for the what-if curves; an extent's neighbour on SSD is now used.
    ram_what_if_.Record(f.key, file_size);
    const std::optional<cache::TierRole> role = tiers_.RoleOf(served_by);
    if (!IsViewKey(f.key) && role == cache::TierRole::kLocalDisk) {
      extents_.NoteSsdRead(f.entry.index);
    }
    // Past the RAM tier: a read the SSD tier saw (a hit there, or a miss to the origin).
    if (role != cache::TierRole::kMemory && ssd_what_if_ != nullptr) {
      ssd_what_if_->Record(f.key, file_size);
    }
  }
  if (blob->size() != file_size) {
    return origin_.CountError(Status::Corruption("cached copy of a file has the wrong size"));
  }
  // More READs of this file will follow: if the RAM tier did not keep it, hold it for them
  // rather than load it again for each (or read it again from the SSD tier).
  const size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  const bool held = tiers_.ram().Contains(f.key);
  if (len < file_size && !held) origin_.read_buffer().Put(f.key, 0, blob);
  MMFS_ASSIGN_OR_RETURN(ReadData out, Serve(f, offset, size, std::move(blob), 0));
  out.tier_holds = held;
  out.at_end = offset + len == file_size;
  return out;
}

std::optional<Result<ReadData>> FileReader::TryRead(const TreeFile& f, uint64_t offset,
                                                    size_t size, bool* looked_up) {
  *looked_up = false;
  const uint64_t file_size = f.size();
  if (offset >= file_size || size == 0) return Result<ReadData>(ReadData{});
  const size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  // Bytes an earlier READ of this file loaded and the RAM tier did not keep.
  if (auto span = origin_.read_buffer().Find(f.key, offset, len)) {
    if (offset == 0) ram_what_if_.Record(f.key, file_size);
    return Serve(f, offset, size, std::move(span->blob), span->base);
  }
  if (!f.resized() && !LoadsWhole(file_size)) return std::nullopt;  // streamed: the origin's
  *looked_up = true;
  size_t served_by = 0;
  std::optional<cache::Blob> blob = tiers_.cache().TryGet(
      f.key, [&] { return loader_.TakeAtHand(f, prefetcher_); }, &served_by);
  if (!blob.has_value()) return std::nullopt;
  return ServeWhole(f, offset, size, std::move(*blob), served_by);
}

Result<ReadData> FileReader::Read(const TreeFile& f, uint64_t offset, size_t size,
                                  cache::Blob known, bool tried) {
  const uint64_t file_size = f.size();
  if (offset >= file_size || size == 0) return ReadData{};
  const size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  // Bytes an earlier READ of this file loaded and the RAM tier did not keep.
  if (auto span = read_buffer.Find(f.key, offset, len)) {
    if (offset == 0) ram_what_if_.Record(f.key, file_size);
    return Serve(f, offset, size, std::move(span->blob), span->base);
  }
  if (!f.resized() && !LoadsWhole(file_size)) {
    if (offset == 0) ram_what_if_.Record(f.key, file_size);
    auto span = origin_.ReadRange(f.entry, offset, len);
    if (!span.ok()) return span.status();
    return Serve(f, offset, size, std::move(span->blob), span->base);
  }
  size_t served_by = 0;
  auto blob = tiers_.cache().Get(
      f.key,
      [&]() -> Result<cache::Blob> {
        // A pushed or claimed copy of another size is not this file's (never cached: each
        // later read would fail on it); the loader reads the file afresh.
        if (known != nullptr && known->size() == file_size) return known;
        return loader_.Load(f, prefetcher_);
      },
      &served_by, tried);
  if (!blob.ok()) {
    if (offset == 0) {
      ram_what_if_.Record(f.key, file_size);
      if (tiers_.RoleOf(served_by) != cache::TierRole::kMemory && ssd_what_if_ != nullptr) {
        ssd_what_if_->Record(f.key, file_size);
      }
    }
    return blob.status();
  }
  return ServeWhole(f, offset, size, std::move(blob).value(), served_by);
}

void FileReader::SetMemoryTargets(const MemoryTargets& t) {
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  const bool shrinking = t.ram_cache_bytes < tiers_.ram().Counters().bytes_budget ||
                         t.prefetch_bytes < prefetcher_.budget() ||
                         t.read_buffer_bytes < read_buffer.budget();
  tiers_.ram().SetBudget(t.ram_cache_bytes);
  extents_.SetRoom();  // the neighbour area lives in what the tier has not filled
  prefetcher_.SetBudget(t.prefetch_bytes, t.push);
  read_buffer.SetBudget(t.read_buffer_bytes);
  // Freed small blobs stay in the allocator's arenas; hand them back to the kernel.
  if (shrinking) ::malloc_trim(0);
}

std::string FileReader::Residency(uint64_t key) const {
  bool ram = tiers_.ram().Contains(key);
  bool ssd = tiers_.local_disk() != nullptr && tiers_.local_disk()->Contains(key);
  return ram && ssd ? "ram,ssd" : ram ? "ram" : ssd ? "ssd" : "none";
}

void FileReader::RecordHistory() {
  HistoryPoint p;
  p.uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  for (const cache::CacheTier* tier : tiers_.cache().tiers()) {
    cache::TierCounters c = tier->Counters();
    p.tiers.emplace_back(c.hits, c.lookups);
  }
  std::lock_guard<std::mutex> lock(history_mu_);
  history_.push_back(std::move(p));
  while (history_.size() > 6 * 360) history_.pop_front();
}

void FileReader::Stats(WhatIfStats* out) const {
  auto curve = [](const cache::WhatIf& w) {
    WhatIfCurveStats c;
    c.budget = w.budget();
    c.sampling_rate = w.sampling_rate();
    c.sampled_reads = w.sampled_reads();
    c.working_set_bytes = w.WorkingSetBytes();
    c.points = w.Curve();
    return c;
  };
  out->ram = curve(ram_what_if_);
  if (ssd_what_if_ != nullptr) out->ssd = curve(*ssd_what_if_);
  std::lock_guard<std::mutex> lock(history_mu_);
  out->history.assign(history_.begin(), history_.end());
}

void FileReader::CacheStats(StatsSnapshot* out) const {
  for (const cache::CacheTier* t : tiers_.all()) {
    out->tiers.push_back({std::string(t->name()), t->Counters()});
  }
  const cache::OriginCounters loads = tiers_.cache().origin_counters();
  out->origin.errors = loads.errors;
  out->origin.coalesced = loads.coalesced;
  if (tiers_.cluster() != nullptr) out->cluster = tiers_.cluster()->ClusterStats();
}

uint64_t FileReader::RamBytesUsed() const { return tiers_.ram().Counters().bytes_used; }

}  // namespace mmfs::fs
