#include "fs/read/miss_loader.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>
#include <unordered_map>
#include <utility>

#include "fs/origin/read_deadline.h"
#include "fs/read/extent_plan.h"
#include "fs/read/neighbour_walk.h"

namespace mmfs::fs {

MissLoader::MissLoader(const format::Dataset& dataset, OriginReader& origin, ViewFiles& views,
                       cache::TierStack& tiers, ExtentReader& extents, MissLoaderOptions options)
    : dataset_(dataset),
      origin_(origin),
      views_(views),
      tiers_(tiers),
      extents_(extents),
      options_(options) {}

std::vector<format::Entry> MissLoader::SampleMembers(const format::Entry& e,
                                                     uint64_t max_other_bytes) const {
  constexpr size_t kMaxMembers = 32;
  if (!options_.sample_members) return {e};
  const uint64_t max_span = std::min<uint64_t>(16ull << 20, e.size() + max_other_bytes);
  // Members are neighbours: names sharing a key sort together within their directory.
  auto member = [&](const format::Entry& o, std::vector<format::Entry>& out) {
    if (!o.is_regular() || o.record.parent != e.record.parent ||
        o.record.sample != e.record.sample || o.record.shard != e.record.shard) {
      return WalkStep::kStop;
    }
    out.push_back(o);
    return WalkStep::kOn;
  };
  std::vector<format::Entry> below, above;
  WalkNeighbours(dataset_, e.index, WalkDirection::kDown, kMaxMembers - 1,
                 [&](const format::Entry& o) { return member(o, below); });
  WalkNeighbours(dataset_, e.index, WalkDirection::kUp, kMaxMembers - 1 - below.size(),
                 [&](const format::Entry& o) { return member(o, above); });
  std::vector<format::Entry> members(below.rbegin(), below.rend());
  members.push_back(e);
  members.insert(members.end(), above.begin(), above.end());
  // They must be back to back in the shard (the packer writes them so) and not too large.
  for (size_t i = 1; i < members.size(); ++i) {
    if (members[i - 1].record.data_offset + members[i - 1].size() !=
        members[i].record.data_offset) {
      return {e};
    }
  }
  uint64_t span = members.back().record.data_offset + members.back().size() -
                  members.front().record.data_offset;
  if (span > max_span) return {e};
  return members;
}

cache::Blob MissLoader::TakeNeighbour(cache::CacheKey key, bool* loading) {
  // Neighbours an extent read kept are originals, keyed by entry (in any tree: an original's
  // key is its entry's, a resized file's a ViewKey).
  if (IsViewKey(key)) return nullptr;
  return loading != nullptr ? extents_.TakeHeld(key, loading) : extents_.Take(key);
}

cache::Blob MissLoader::TakeAtHand(const TreeFile& f, MemberBuffer& buffer) {
  bool loading = false;
  if (cache::Blob b = buffer.TakeHeld(f.key, &loading)) return b;
  if (loading) return nullptr;  // its prefetch lands soon: Load waits for it
  return TakeNeighbour(f.key, &loading);  // an extent in flight brings it: Load waits for it
}

Result<cache::Blob> MissLoader::Load(const TreeFile& f, MemberBuffer& buffer) {
  if (cache::Blob b = buffer.Take(f.key)) return b;
  if (cache::Blob b = TakeNeighbour(f.key)) return b;
  std::vector<format::Entry> base = SampleMembers(f.entry, buffer.FileLimit());
  std::vector<TreeFile> members = views_.Members(f.tree, base);
  cache::ClusterTier* cluster = tiers_.cluster();
  if (cluster != nullptr) {
    if (cache::Blob b = LookupSample(f, members, buffer)) return b;
    if (cache::Blob b = WaitForPeer(f, buffer)) return b;
  }
  Result<cache::Blob> wanted =
      f.tree == 0 ? LoadOriginal(f, std::move(base), buffer) : LoadViewSample(f, members, buffer);
  if (wanted.ok() && cluster != nullptr) cluster->Insert(f.key, *wanted);
  return wanted;
}

cache::Blob MissLoader::LookupSample(const TreeFile& f, const std::vector<TreeFile>& members,
                                     MemberBuffer& buffer) {
  // One multi-get for the whole sample: k.jpg brings k.txt from the cluster as from a shard.
  std::vector<uint64_t> keys;
  for (const TreeFile& m : members) {
    if (m.key == f.key || !tiers_.ram().Contains(m.key)) keys.push_back(m.key);
  }
  cache::Blob wanted;
  for (auto& [key, blob] : tiers_.cluster()->LookupMany(keys)) {
    // Anyone who can reach a memcached server can write to it: an original's bytes must be
    // the ones the index names, whatever the value's own header says.
    const uint64_t k = key;  // clang 14 does not capture a structured binding
    auto m = std::find_if(members.begin(), members.end(),
                          [k](const TreeFile& t) { return t.key == k; });
    if (m == members.end() || blob == nullptr || blob->size() != m->size() ||
        (!m->resized() && XXH3_64bits(blob->data(), blob->size()) != m->entry.record.checksum)) {
      continue;
    }
    if (key == f.key) {
      wanted = std::move(blob);
    } else {
      buffer.PutMember(key, std::move(blob));
    }
  }
  if (wanted != nullptr && wanted->size() == f.size()) return wanted;
  return nullptr;
}

cache::Blob MissLoader::WaitForPeer(const TreeFile& f, MemberBuffer& buffer) {
  PeerFetches* peers = peers_.load(std::memory_order_acquire);
  if (peers == nullptr || f.tree != 0 || !peers->FetchingElsewhere(f.entry.index)) return nullptr;
  // The holder writes each file to the cluster as its read lands, before the chunk is marked
  // done: a short poll finds it about when the holder's read ends, without a second store read.
  // The poll asks for `f` alone: the first look-up (LookupSample in Load) asked for its members.
  constexpr std::chrono::milliseconds kPoll{20};
  peers->CountDemandWait(false);
  const auto now = std::chrono::steady_clock::now();
  auto deadline = now + peers->DemandWait();
  if (const auto read_deadline = origin::CurrentReadDeadline()) {
    deadline = std::min(deadline, now + (*read_deadline - now) / 2);
  }
  const std::vector<TreeFile> alone{f};
  cache::Blob b;
  for (;;) {
    std::this_thread::sleep_for(kPoll);
    if ((b = LookupSample(f, alone, buffer)) != nullptr) break;
    if (!peers->FetchingElsewhere(f.entry.index)) {
      // Done (or given up) between the look-up and the question: one more look-up.
      b = LookupSample(f, alone, buffer);
      break;
    }
    if (origin::ReadsStopping()) break;  // the daemon is going away
    if (std::chrono::steady_clock::now() >= deadline) {
      peers->WaitedOut(f.entry.index);
      break;
    }
  }
  if (b != nullptr) peers->CountDemandWait(true);
  return b;
}

Result<cache::Blob> MissLoader::LoadOriginal(const TreeFile& f, std::vector<format::Entry> base,
                                             MemberBuffer& buffer) {
  // Originals only, back to back in one shard: one read. Members the RAM tier holds are not
  // read again: the tier admits files one by one, so a sample's image may be held where its
  // caption is not, and the caption's miss would fetch the image's bytes once more every
  // epoch. The run of members around `f` that the tier lacks is read: still one read, of
  // neighbours.
  // The whole sample, before the trim: members the tier holds that an extent reads anyway are
  // the sample's, not neighbours.
  const MemberRange sample{base.front().index, base.back().index};
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
  // From a slow origin, the extent around the sample, in one read.
  ExtentReader::Extent extent = PlanExtent(f.entry, base);
  cache::ClusterTier* cluster = tiers_.cluster();
  const uint64_t first_member = base.front().index, last_member = base.back().index;
  auto found = [&](const format::Entry& m, cache::Blob blob) {
    if (cluster != nullptr) cluster->Insert(m.index, blob);  // fill for other hosts
    if (m.index < first_member || m.index > last_member) {
      extents_.Keep(extent, m, std::move(blob));
    } else {
      buffer.PutMember(m.index, std::move(blob));
    }
  };
  Result<cache::Blob> wanted =
      origin_.LoadSample(f.entry, extent.empty() ? base : extent.files, found, sample);
  if (!wanted.ok() && !extent.empty() && wanted.status().code() == StatusCode::kIoError) {
    // A bad spot anywhere in the extent must not cost this sample its read: read it alone.
    extents_.Abandon(extent);
    wanted = origin_.LoadSample(f.entry, base, found, sample);
  }
  return wanted;
}

ExtentReader::Extent MissLoader::PlanExtent(const format::Entry& e,
                                            const std::vector<format::Entry>& members) {
  const ExtentOptions& options = extents_.options();
  if (options.mode == ExtentMode::kOff || members.empty()) return {};
  extents_.FitArea();
  const uint64_t span_start = members.front().record.data_offset;
  const uint64_t span_end = members.back().record.data_offset + members.back().size();
  // Step 1: the size, from the origin's cost.
  OriginCostEstimate cost;
  if (options.mode == ExtentMode::kAuto) {
    cost = options.cost ? options.cost() : origin_.CostEstimate();
  }
  ExtentPlanInputs in;
  in.size = extents_.SizeMiss(std::max<uint64_t>(1, span_end - span_start), cost);
  if (in.size.decision != ExtentDecision::kExtent) return {};
  // Step 2: the window, given the room (and a slot in flight).
  in.shard = e.record.shard;
  in.span_start = span_start;
  in.span_end = span_end;
  in.members = members.size();
  in.room = Room();
  ExtentReader::Extent extent = extents_.Reserve(std::move(in));
  if (extent.plan().decision != ExtentDecision::kExtent) return extent;
  // Step 3: the files of the window, from the sample the index's neighbours on each side for as
  // long as they lie in the window (within a directory index order is shard order, as the
  // packer writes samples in path order; across directories it need not be, so the walk stops
  // at the first file outside and may leave some of the window's files out). A file some tier
  // or the area already holds ends the walk on its side: the extent is the run of files nobody
  // has around the miss, so windows of different sizes (the estimate moves) and misses next to
  // earlier extents do not read the same bytes again. Directories and empty files in between
  // are stepped over; both ways share one budget of steps.
  const ExtentPlan& plan = extent.plan();
  cache::CacheTier* ssd = tiers_.local_disk();
  std::vector<format::Entry> below, above;
  auto neighbour = [&](const format::Entry& o, std::vector<format::Entry>& out) {
    if (ExtentPlan::Skips(o)) return WalkStep::kOn;
    if (!plan.Covers(o) || tiers_.ram().Contains(o.index) || extents_.Holds(o.index) ||
        (ssd != nullptr && ssd->Contains(o.index))) {
      return WalkStep::kStop;
    }
    out.push_back(o);
    return below.size() + above.size() < plan.max_neighbours ? WalkStep::kOn : WalkStep::kStop;
  };
  size_t steps = 0;
  if (plan.max_neighbours > 0) {
    steps = WalkNeighbours(dataset_, members.front().index, WalkDirection::kDown, plan.max_steps,
                           [&](const format::Entry& o) { return neighbour(o, below); });
  }
  if (below.size() < plan.max_neighbours) {
    WalkNeighbours(dataset_, members.back().index, WalkDirection::kUp, plan.max_steps - steps,
                   [&](const format::Entry& o) { return neighbour(o, above); });
  }
  extents_.Start(extent, AssembleExtent(members, below, above));
  return extent;
}

ExtentRoom MissLoader::Room() const {
  ExtentRoom r;
  if (cache::CacheTier* ssd = tiers_.local_disk(); ssd != nullptr) {
    const cache::TierCounters c = ssd->Counters();
    r.ssd = true;
    r.ssd_paused = c.admission_paused;
    r.ssd_used = c.bytes_used;
    r.ssd_budget = c.bytes_budget;
    r.ssd_pending = ssd->pending_bytes();
    r.ssd_max_entry = ssd->MaxEntryBytes();
  }
  const cache::TierCounters ram = tiers_.ram().Counters();
  r.ram_used = ram.bytes_used;
  r.ram_budget = ram.bytes_budget;
  r.dataset_bytes = dataset_.manifest().total_bytes;
  return r;
}

Result<cache::Blob> MissLoader::LoadViewSample(const TreeFile& f,
                                               const std::vector<TreeFile>& members,
                                               MemberBuffer& buffer) {
  auto put = [&](cache::CacheKey key, cache::Blob blob) { buffer.PutMember(key, std::move(blob)); };
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
    cache::ClusterTier* cluster = tiers_.cluster();
    wanted = origin_.LoadSample(f.entry, run, [&](const format::Entry& m, cache::Blob b) {
      if (cluster != nullptr) cluster->Insert(m.index, b);
      put(m.index, std::move(b));
    });
    if (back_to_back) originals.clear();
  }
  if (!wanted.ok()) return wanted;
  if (!originals.empty()) ReadOriginals(std::move(originals), ReadCause::kDemand, put);
  if (!resized.empty()) ReadResized(std::move(resized), ReadCause::kDemand, put);
  return wanted;
}

void MissLoader::LoadAhead(const std::vector<cache::CacheKey>& keys, uint64_t file_limit,
                           const Found& found) {
  cache::ClusterTier* cluster = tiers_.cluster();
  std::unordered_map<uint64_t, cache::Blob> from_cluster;
  if (cluster != nullptr) {
    // One multi-get for the batch; only what the cluster lacks is read from the shards.
    from_cluster = cluster->LookupMany(keys);
    for (auto& [k, blob] : from_cluster) found(k, blob);
  }
  std::vector<format::Entry> entries;
  std::vector<TreeFile> resized;
  for (uint64_t k : keys) {
    if (from_cluster.count(k) > 0) continue;
    // A file the buffer cannot hold next to others would push out what waits there, or be
    // dropped on arrival: its reader loads it.
    if (IsViewKey(k)) {
      auto f = views_.FileOfKey(k);
      if (f.ok() && f->size() <= file_limit) resized.push_back(*f);
      continue;
    }
    auto e = dataset_.GetEntry(k);
    if (e.ok() && e->is_regular() && e->size() <= file_limit) entries.push_back(*e);
  }
  ReadResized(std::move(resized), ReadCause::kPrefetch, found);
  // Damaged files are not loaded ahead; their own reads report them.
  ReadOriginals(std::move(entries), ReadCause::kPrefetch, found);
}

void MissLoader::LoadWarm(std::vector<format::Entry> entries, const Found& found) {
  ReadOriginals(std::move(entries), ReadCause::kWarmup, found);
}

void MissLoader::ReadOriginals(std::vector<format::Entry> entries, ReadCause cause,
                               const Found& found) {
  cache::ClusterTier* cluster = tiers_.cluster();
  origin_.ReadCoalesced(std::move(entries), cause, [&](const format::Entry& e, cache::Blob blob) {
    if (cluster != nullptr) cluster->Insert(e.index, blob);  // other hosts
    found(e.index, std::move(blob));
  });
}

void MissLoader::ReadResized(std::vector<TreeFile> files, ReadCause cause, const Found& found) {
  cache::ClusterTier* cluster = tiers_.cluster();
  views_.LoadMany(std::move(files), cause, [&](const TreeFile& f, cache::Blob blob) {
    if (cluster != nullptr) cluster->Insert(f.key, blob);
    found(f.key, std::move(blob));
  });
}

}  // namespace mmfs::fs
