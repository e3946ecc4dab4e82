#include "fs/core/file_reader.h"

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cache/ram_tier.h"
#include "cache/ssd_tier.h"

namespace mmfs::fs {

FileReader::FileReader(const format::Dataset& dataset, cache::TierStack& tiers,
                       OriginReader& origin, ViewFiles& views, Prefetcher& prefetcher,
                       ExtentReader& extents, uint64_t max_cached_file_bytes)
    : tiers_(tiers),
      origin_(origin),
      views_(views),
      prefetcher_(prefetcher),
      extents_(extents),
      max_cached_file_bytes_(max_cached_file_bytes),
      ram_what_if_(tiers.ram().Counters().bytes_budget, dataset.manifest().files,
                   cache::RamTier::kEntryOverhead, cache::WhatIf::kFractions,
                   cache::WhatIf::kMaxKeys, cache::RamTier::kShards) {
  if (tiers_.ssd() != nullptr) {
    ssd_what_if_ = std::make_unique<cache::WhatIf>(tiers_.ssd()->Counters().bytes_budget,
                                                   dataset.manifest().files,
                                                   cache::SsdTier::kHeaderBytes);
  }
}

bool FileReader::LoadsWhole(uint64_t size) const {
  return size <= max_cached_file_bytes_ &&
         (size <= tiers_.ram().MaxEntryBytes() || size <= origin_.read_buffer().budget());
}

Result<cache::Blob> FileReader::LoadForRead(const TreeFile& f) {
  if (cache::Blob b = prefetcher_.Take(f.key)) return b;
  // Neighbours an extent read kept are originals, keyed by entry (in any tree: an original's
  // key is its entry's, a resized file's a ViewKey).
  if (!IsViewKey(f.key)) {
    if (cache::Blob b = extents_.Take(f.key)) return b;
  }
  std::vector<format::Entry> base = origin_.SampleMembers(f.entry, prefetcher_.FileLimit());
  std::vector<TreeFile> members = views_.Members(f.tree, base);
  cache::ClusterTier* cluster = tiers_.cluster();
  if (cluster != nullptr) {
    // One multi-get for the whole sample: k.jpg brings k.txt from the cluster as from a shard.
    std::vector<uint64_t> keys;
    for (const TreeFile& m : members) {
      if (m.key == f.key || !tiers_.ram().Contains(m.key)) keys.push_back(m.key);
    }
    cache::Blob wanted;
    for (auto& [key, blob] : cluster->LookupMany(keys)) {
      if (key == f.key) {
        wanted = std::move(blob);
      } else {
        prefetcher_.PutMember(key, std::move(blob));
      }
    }
    if (wanted != nullptr && wanted->size() == f.size()) return wanted;
  }
  Result<cache::Blob> wanted = Status::Ok();
  if (f.tree == 0) {
    // Originals only, back to back in one shard: one read. Members the RAM tier holds are not
    // read again: the tier admits files one by one, so a sample's image may be held where its
    // caption is not, and the caption's miss would fetch the image's bytes once more every
    // epoch. The run of members around `f` that the tier lacks is read: still one
    // read, of neighbours.
    size_t first = 0, last = base.size();
    for (size_t i = 0; i < base.size(); ++i) {
      if (base[i].index == f.entry.index || !tiers_.ram().Contains(base[i].index)) continue;
      if (base[i].index < f.entry.index) {
        first = i + 1;
      } else {
        last = std::min(last, i);
      }
    }
    base = std::vector<format::Entry>(base.begin() + static_cast<std::ptrdiff_t>(first),
                                      base.begin() + static_cast<std::ptrdiff_t>(last));
    // From a slow origin, the extent around the sample, in one read (extent_reader.h).
    ExtentReader::Plan extent = extents_.PlanMiss(f.entry, base);
    const uint64_t first_member = base.front().index, last_member = base.back().index;
    auto found = [&](const format::Entry& m, cache::Blob blob) {
      if (cluster != nullptr) cluster->Insert(m.index, blob);  // fill for other hosts
      if (m.index < first_member || m.index > last_member) {
        extents_.Keep(extent, m, std::move(blob));
      } else {
        prefetcher_.PutMember(m.index, std::move(blob));
      }
    };
    wanted = origin_.LoadSample(f.entry, extent.empty() ? base : extent.files, found);
    if (!wanted.ok() && !extent.empty() && wanted.status().code() == StatusCode::kIoError) {
      // A bad spot anywhere in the extent must not cost this sample its read: read it alone.
      extents_.Abandon(extent);
      wanted = origin_.LoadSample(f.entry, base, found);
    }
  } else {
    wanted = LoadViewSample(f, members);
  }
  if (wanted.ok() && cluster != nullptr) cluster->Insert(f.key, *wanted);
  return wanted;
}

Result<cache::Blob> FileReader::LoadViewSample(const TreeFile& f,
                                               const std::vector<TreeFile>& members) {
  cache::ClusterTier* cluster = tiers_.cluster();
  auto put = [&](cache::CacheKey key, cache::Blob blob) {
    if (cluster != nullptr) cluster->Insert(key, blob);
    prefetcher_.PutMember(key, std::move(blob));
  };
  // The sample's originals (captions, small images) and resized images live in different
  // shards: one read for each run of neighbours.
  std::vector<format::Entry> originals;
  std::vector<TreeFile> resized;
  for (const TreeFile& m : members) {
    if (m.key == f.key) continue;
    if (m.resized()) {
      resized.push_back(m);
    } else {
      originals.push_back(m.entry);
    }
  }
  Result<cache::Blob> wanted = Status::Ok();
  if (f.resized()) {
    wanted = views_.Load(f, ReadCause::kDemand);
  } else {
    // f with the originals that lie back to back with it (a sample's captions): one read.
    std::vector<format::Entry> run = originals;
    run.push_back(f.entry);
    std::sort(run.begin(), run.end(), [](const format::Entry& a, const format::Entry& b) {
      return a.record.data_offset < b.record.data_offset;
    });
    bool back_to_back = true;
    for (size_t i = 1; i < run.size(); ++i) {
      back_to_back = back_to_back && run[i].record.shard == run[0].record.shard &&
                     run[i - 1].record.data_offset + run[i - 1].size() == run[i].record.data_offset;
    }
    if (!back_to_back) run = {f.entry};
    wanted = origin_.LoadSample(f.entry, run,
                                [&](const format::Entry& m, cache::Blob b) { put(m.index, b); });
    if (back_to_back) originals.clear();
  }
  if (!wanted.ok()) return wanted;
  if (!originals.empty()) {
    origin_.ReadCoalesced(std::move(originals), ReadCause::kDemand,
                          [&](const format::Entry& m, cache::Blob b) { put(m.index, b); });
  }
  if (!resized.empty()) {
    views_.LoadMany(std::move(resized), ReadCause::kDemand,
                    [&](const TreeFile& m, cache::Blob b) { put(m.key, b); });
  }
  return wanted;
}

Result<ReadData> FileReader::Read(const TreeFile& f, uint64_t offset, size_t size,
                                  cache::Blob known) {
  ReadData out;
  const uint64_t file_size = f.size();
  if (offset >= file_size || size == 0) return out;
  size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  auto serve = [&](cache::Blob blob, uint64_t base) {
    out.data = blob->data() + (offset - base);
    out.size = len;
    out.owner = std::move(blob);
    // The file's bytes reached the reader (the origin re-read count, refetch_tracker.h; it
    // tracks originals, by entry).
    if (offset + len == file_size && !f.resized()) origin_.NoteDelivered(f.entry.index);
    return out;
  };
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  // Bytes an earlier READ of this file loaded and the RAM tier did not keep.
  if (auto span = read_buffer.Find(f.key, offset, len)) {
    if (offset == 0) ram_what_if_.Record(f.key, file_size);
    return serve(std::move(span->blob), span->base);
  }
  if (!f.resized() && !LoadsWhole(file_size)) {
    if (offset == 0) ram_what_if_.Record(f.key, file_size);
    auto span = origin_.ReadRange(f.entry, offset, len);
    if (!span.ok()) return span.status();
    return serve(std::move(span->blob), span->base);
  }
  size_t served_by = 0;
  auto blob = tiers_.cache().Get(
      f.key,
      [&]() -> Result<cache::Blob> {
        if (known != nullptr) return known;
        return LoadForRead(f);
      },
      &served_by);
  if (offset == 0) {
    // One read of the file, for the what-if curves; an extent's neighbour on SSD is now used.
    ram_what_if_.Record(f.key, file_size);
    if (!IsViewKey(f.key) && tiers_.ssd() != nullptr && served_by == 1) {
      extents_.NoteSsdRead(f.entry.index);
    }
    if (served_by > 0 && ssd_what_if_ != nullptr) ssd_what_if_->Record(f.key, file_size);
  }
  if (!blob.ok()) return blob.status();
  if ((*blob)->size() != file_size) {
    return origin_.CountError(Status::Corruption("cached copy of a file has the wrong size"));
  }
  // More READs of this file will follow: if the RAM tier did not keep it, hold it for them
  // rather than load it again for each (or read it again from the SSD tier).
  const bool held = tiers_.ram().Contains(f.key);
  if (len < file_size && !held) read_buffer.Put(f.key, 0, *blob);
  out.tier_holds = held && offset + len == file_size;
  return serve(std::move(blob).value(), 0);
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
  bool ssd = tiers_.ssd() != nullptr && tiers_.ssd()->Contains(key);
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
