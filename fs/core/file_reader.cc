#include "fs/core/file_reader.h"

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cache/ram_tier.h"
#include "cache/ssd_tier.h"

namespace mmfs::fs {

FileReader::FileReader(const format::Dataset& dataset, cache::TierStack& tiers,
                       OriginReader& origin, Prefetcher& prefetcher,
                       uint64_t max_cached_file_bytes)
    : tiers_(tiers),
      origin_(origin),
      prefetcher_(prefetcher),
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

Result<cache::Blob> FileReader::LoadForRead(const format::Entry& e) {
  if (cache::Blob b = prefetcher_.Take(e.index)) return b;
  std::vector<format::Entry> members = origin_.SampleMembers(e, prefetcher_.FileLimit());
  // Members the RAM tier holds are not read again: the tier admits files one by one, so a
  // sample's image may be held where its caption is not, and reading the caption's sample
  // would fetch the image's bytes once more every epoch (issue 19). The run of members around
  // `e` that the tier lacks is read; they are neighbours, so it is still one read.
  size_t first = 0, last = members.size();
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].index == e.index || !tiers_.ram().Contains(members[i].index)) continue;
    if (members[i].index < e.index) {
      first = i + 1;
    } else {
      last = std::min(last, i);
    }
  }
  members = std::vector<format::Entry>(members.begin() + static_cast<std::ptrdiff_t>(first),
                                       members.begin() + static_cast<std::ptrdiff_t>(last));
  cache::ClusterTier* cluster = tiers_.cluster();
  if (cluster != nullptr) {
    // One multi-get for the whole sample: k.jpg brings k.txt from the cluster as from a shard.
    std::vector<uint64_t> keys;
    for (const format::Entry& m : members) {
      if (m.index == e.index || !tiers_.ram().Contains(m.index)) keys.push_back(m.index);
    }
    cache::Blob wanted;
    for (auto& [key, blob] : cluster->LookupMany(keys)) {
      if (key == e.index) {
        wanted = std::move(blob);
      } else {
        prefetcher_.PutMember(key, std::move(blob));
      }
    }
    if (wanted != nullptr) return wanted;
  }
  auto wanted = origin_.LoadSample(e, members, [&](const format::Entry& m, cache::Blob blob) {
    if (cluster != nullptr) cluster->Insert(m.index, blob);  // fill for other hosts
    prefetcher_.PutMember(m.index, std::move(blob));
  });
  if (wanted.ok() && cluster != nullptr) cluster->Insert(e.index, *wanted);
  return wanted;
}

Result<ReadData> FileReader::Read(const format::Entry& e, uint64_t offset, size_t size,
                                  cache::Blob known) {
  ReadData out;
  if (offset >= e.size() || size == 0) return out;
  size_t len = static_cast<size_t>(std::min<uint64_t>(size, e.size() - offset));
  auto serve = [&](cache::Blob blob, uint64_t base) {
    out.data = blob->data() + (offset - base);
    out.size = len;
    out.owner = std::move(blob);
    // The file's bytes reached the reader (the origin re-read count, refetch_tracker.h).
    if (offset + len == e.size()) origin_.NoteDelivered(e.index);
    return out;
  };
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  // Bytes an earlier READ of this file loaded and the RAM tier did not keep.
  if (auto span = read_buffer.Find(e.index, offset, len)) {
    if (offset == 0) ram_what_if_.Record(e.index, e.size());
    return serve(std::move(span->blob), span->base);
  }
  if (!LoadsWhole(e.size())) {
    if (offset == 0) ram_what_if_.Record(e.index, e.size());
    auto span = origin_.ReadRange(e, offset, len);
    if (!span.ok()) return span.status();
    return serve(std::move(span->blob), span->base);
  }
  size_t served_by = 0;
  auto blob = tiers_.cache().Get(
      e.index,
      [&]() -> Result<cache::Blob> {
        if (known != nullptr) return known;
        return LoadForRead(e);
      },
      &served_by);
  if (offset == 0) {
    // One read of the file, for the what-if curves.
    ram_what_if_.Record(e.index, e.size());
    if (served_by > 0 && ssd_what_if_ != nullptr) ssd_what_if_->Record(e.index, e.size());
  }
  if (!blob.ok()) return blob.status();
  // More READs of this file will follow: if the RAM tier did not keep it, hold it for them
  // rather than load it again for each (or read it again from the SSD tier).
  const bool held = tiers_.ram().Contains(e.index);
  if (len < e.size() && !held) read_buffer.Put(e.index, 0, *blob);
  out.tier_holds = held && offset + len == e.size();
  return serve(std::move(blob).value(), 0);
}

Result<ReadData> FileReader::ReadKeyed(cache::CacheKey key, uint64_t file_size, uint64_t offset,
                                       size_t size, const cache::TieredCache::Loader& load) {
  ReadData out;
  if (offset >= file_size || size == 0) return out;
  size_t len = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
  auto serve = [&](cache::Blob blob, uint64_t base) {
    out.data = blob->data() + (offset - base);
    out.size = len;
    out.owner = std::move(blob);
    return out;
  };
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  if (auto span = read_buffer.Find(key, offset, len)) return serve(std::move(span->blob), span->base);
  cache::ClusterTier* cluster = tiers_.cluster();
  auto blob = tiers_.cache().Get(key, [&]() -> Result<cache::Blob> {
    if (cluster != nullptr) {
      auto found = cluster->LookupMany({key});
      if (auto it = found.find(key); it != found.end() && it->second != nullptr &&
                                     it->second->size() == file_size) {
        return it->second;
      }
    }
    auto loaded = load();
    if (loaded.ok() && cluster != nullptr) cluster->Insert(key, *loaded);  // for other hosts
    return loaded;
  });
  if (!blob.ok()) return blob.status();
  if ((*blob)->size() != file_size) return Status::Corruption("cached copy has the wrong size");
  if (len < file_size && !tiers_.ram().Contains(key)) read_buffer.Put(key, 0, *blob);
  return serve(std::move(blob).value(), 0);
}

void FileReader::SetMemoryTargets(const MemoryTargets& t) {
  cache::ReadBuffer& read_buffer = origin_.read_buffer();
  const bool shrinking = t.ram_cache_bytes < tiers_.ram().Counters().bytes_budget ||
                         t.prefetch_bytes < prefetcher_.budget() ||
                         t.read_buffer_bytes < read_buffer.budget();
  tiers_.ram().SetBudget(t.ram_cache_bytes);
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

}  // namespace mmfs::fs
