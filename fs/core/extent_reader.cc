#include "fs/core/extent_reader.h"

#include <algorithm>

#include "fs/base/units.h"

namespace mmfs::fs {

namespace {
constexpr cache::PrefetchPattern kAreaPattern = cache::PrefetchPattern::kSampleMembers;
constexpr uint64_t kMinFixed = 64ull << 10;
constexpr uint64_t kMaxFixed = 64ull << 20;
// An extent must be this many times the sample read to be worth planning: below it, an extent
// is a sample and its neighbours, if any, are crumbs.
constexpr uint64_t kMinGain = 4;
// Probes that show the cost model reads of another size: at least this large, one miss in
// kFirstExploreEvery until the model first knows the origin, then rare enough that their extra
// bytes are at most kExploreShare of the misses'.
constexpr uint64_t kExploreBytes = 256ull << 10;
constexpr uint64_t kFirstExploreEvery = 16;
constexpr double kExploreShare = 0.05;
constexpr double kExpensiveRequest = 0.001;
// While neighbours are nearly all used, extents grow by doubling up to this many times the
// model's size and this size.
constexpr uint64_t kMaxGrowth = 64;
constexpr uint64_t kMaxGrownExtent = 8ull << 20;  // bytes: larger gains little per request
// Extent reads in flight at most: each holds its raw span and a copy of its files, up to twice
// the extent; more misses at once read sample-sized.
constexpr int kMaxInFlight = 2;
// Area outcomes (used + wasted) folded into the used share at a time.
constexpr uint64_t kJudgeBatch = 64;
// Where the room foretells unused neighbours, one miss in this many times probe_every still
// reads an extent, so a reader whose neighbours are used is found out (1 in 512 by default).
constexpr uint64_t kForesightProbeFactor = 8;
}  // namespace

Result<ExtentOptions> ParseExtentOption(const std::string& value) {
  ExtentOptions o;
  if (value == "auto") return o;
  if (value == "off") {
    o.mode = ExtentMode::kOff;
    return o;
  }
  auto size = ParseSize(value);
  if (!size.ok() || *size < kMinFixed || *size > kMaxFixed) {
    return Status::InvalidArgument("extents must be auto, off or a size from 64K to 64M, not '" +
                                   value + "'");
  }
  o.mode = ExtentMode::kFixed;
  o.fixed_bytes = *size;
  return o;
}

ExtentReader::ExtentReader(const format::Dataset& dataset, OriginReader& origin,
                           cache::TierStack& tiers, ExtentOptions options)
    : dataset_(dataset), origin_(origin), tiers_(tiers), options_(options), area_(0) {
  if (tiers_.ssd() != nullptr && options_.mode != ExtentMode::kOff) {
    on_ssd_ = std::make_unique<std::atomic<uint8_t>[]>(dataset_.entry_count());
  }
}

ExtentReader::~ExtentReader() = default;

ExtentReader::Plan::Plan(Plan&& other) noexcept
    : files(std::move(other.files)),
      owner_(other.owner_),
      loading_(std::move(other.loading_)),
      to_ssd_(other.to_ssd_),
      in_flight_(other.in_flight_),
      room_(other.room_) {
  // The moved-from plan releases nothing: its slot in flight and its waiters are this one's.
  other.owner_ = nullptr;
  other.in_flight_ = false;
  other.loading_.clear();
}

ExtentReader::Plan::~Plan() {
  if (owner_ != nullptr) owner_->EndPlan(*this);
}

void ExtentReader::EndPlan(Plan& plan) {
  if (!plan.loading_.empty()) area_.EndLoad(plan.loading_);
  plan.loading_.clear();
  if (plan.in_flight_) in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  plan.in_flight_ = false;
}

void ExtentReader::Abandon(Plan& plan) {
  EndPlan(plan);
  plan.files.clear();
  plan.owner_ = nullptr;
}

void ExtentReader::SetRoom() {
  // The RAM tier's budget may have changed (memory pressure): the area follows at once.
  area_.SetBudget(RamRoom());
}

uint64_t ExtentReader::RamRoom() const {
  const cache::TierCounters c = tiers_.ram().Counters();
  return c.bytes_budget > c.bytes_used ? c.bytes_budget - c.bytes_used : 0;
}

void ExtentReader::UpdateUsedShare() {
  const cache::PrefetchCounters c = area_.Counters(kAreaPattern);
  const uint64_t used = c.used - judged_used_, wasted = c.wasted - judged_wasted_;
  if (used + wasted < kJudgeBatch) return;
  const double share = static_cast<double>(used) / static_cast<double>(used + wasted);
  // Half the weight on the newest batch: a change of workload shows within a few batches.
  used_share_ = 0.5 * used_share_ + 0.5 * share;
  // Neighbours nearly all used: a larger extent costs less per byte a reader gets (its request
  // is shared by more of them), whatever the model's knee; some unused: back towards it.
  if (share >= 0.9) {
    growth_ = std::min<uint64_t>(growth_ * 2, kMaxGrowth);
  } else if (share < 0.5) {
    growth_ = std::max<uint64_t>(growth_ / 2, 1);
  }
  judged_used_ = c.used;
  judged_wasted_ = c.wasted;
}

ExtentReader::Plan ExtentReader::PlanMiss(const format::Entry& e,
                                          const std::vector<format::Entry>& members) {
  Plan plan;
  if (options_.mode == ExtentMode::kOff || members.empty()) return plan;
  // The tier may have grown since the last neighbour was kept: the area gives way.
  if (area_.bytes_held() > 0) area_.SetBudget(RamRoom());
  const uint64_t span_start = members.front().record.data_offset;
  const uint64_t span_end = members.back().record.data_offset + members.back().size();
  const uint64_t span = std::max<uint64_t>(1, span_end - span_start);
  uint64_t extent = options_.fixed_bytes;
  OriginCostEstimate cost;
  bool probe = false;
  if (options_.mode == ExtentMode::kAuto) {
    cost = options_.cost ? options_.cost() : origin_.CostEstimate();
    // Samples of about one size read one at a time never show the model a slope, and what it
    // learnt fades (its weights halve every 512 reads). So: until it first knows an origin
    // whose requests are expensive, one miss in 16 reads an extent of 8 samples (at least
    // 256 KiB), which gives it reads of another size; otherwise (cheap requests, or it has
    // known and its last estimate stands meanwhile) such probes come only as often as keeps
    // their extra bytes under kExploreShare of the misses' (1 in ~160 for 58 KB samples).
    const uint64_t explore_extent = std::max<uint64_t>(
        kExploreBytes, (2 * kMinGain * span + kMinFixed - 1) / kMinFixed * kMinFixed);
    bool explore = false;
    uint64_t growth = 1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cost.known) last_known_ = cost;
      UpdateUsedShare();
      growth = growth_;
      const bool stale = !cost.known && last_known_.known;
      if (stale) cost = last_known_;
      // A latency-bound estimate from sample reads alone asks for twice a sample: explore.
      const bool stuck = cost.known && cost.latency_bound && cost.extent_bytes < kMinGain * span;
      if (!cost.known || stale || stuck) {
        // Fast while never known only where requests are expensive (a mean of a millisecond or
        // more): elsewhere the probes' bytes would cost more than anything they could find.
        const bool eager = !cost.known && !stale && cost.mean_seconds >= kExpensiveRequest;
        // An origin last known not to pay (bandwidth-bound: there every byte is time) is
        // re-checked five times more rarely.
        const double share = stale && cost.extent_bytes < kMinGain * span ? kExploreShare / 5
                                                                         : kExploreShare;
        const uint64_t rare = std::max<uint64_t>(
            kFirstExploreEvery,
            static_cast<uint64_t>(static_cast<double>(explore_extent - span) /
                                  (share * static_cast<double>(span))));
        const uint64_t every = options_.explore_every > 0 ? options_.explore_every
                               : eager                    ? kFirstExploreEvery
                                                          : rare;
        explore = ++unknown_misses_ % every == 0;
        if (stuck && !explore) cost.known = false;  // read sample-sized, as unknown
      }
    }
    if (explore) {
      probe = true;
      extent = explore_extent;
    } else if (!cost.known) {
      skipped_unknown_.fetch_add(1, std::memory_order_relaxed);
      return plan;
    } else {
      extent = cost.extent_bytes;
      if (extent < kMinGain * span) {
        skipped_small_.fetch_add(1, std::memory_order_relaxed);
        return plan;
      }
      // Grown while the neighbours are used (UpdateUsedShare), up to the model's maximum.
      if (growth > 1) {
        extent = std::min<uint64_t>(extent * growth, kMaxGrownExtent);
        extent -= extent % kMinFixed;
      }
    }
  }
  // Room for the neighbours: the SSD tier while it admits and has space, else the part of the
  // RAM tier's budget it has not filled.
  if (extent == 0) return plan;
  bool to_ssd = false;
  if (cache::CacheTier* ssd = tiers_.ssd(); ssd != nullptr) {
    // Admitting, with space, and a write queue that takes the whole extent.
    const cache::TierCounters c = ssd->Counters();
    to_ssd = !c.admission_paused && c.bytes_used + extent <= c.bytes_budget &&
             ssd->pending_bytes() + extent <= ssd->MaxEntryBytes();
  }
  const uint64_t room = RamRoom();
  if (!to_ssd && room < extent) {
    skipped_no_room_.fetch_add(1, std::memory_order_relaxed);
    return plan;
  }
  if (options_.mode == ExtentMode::kAuto && cost.known && !probe && !to_ssd) {
    // A used neighbour saves a request and its transfer; a wasted one costs its transfer.
    const double transfer = cost.bandwidth_bytes_per_second > 0
                                ? static_cast<double>(span) / cost.bandwidth_bytes_per_second
                                : 0;
    const double pays_above =
        transfer + cost.latency_seconds > 0 ? transfer / (transfer + cost.latency_seconds) : 1;
    // The used share is learnt late: a neighbour counts as wasted only once the area pushes it
    // out, after hundreds of extents. What the area can hold foretells it. In shuffled order
    // the area is a cache of `room` bytes over the `unheld` bytes the RAM tier lacks: a read
    // finds its file there about room / unheld of the time (h), and each miss brings `gain`
    // neighbours' worth of bytes per byte it wanted, so of the neighbours brought about
    // h / (gain x (1 - h)) are ever read; with room for all that is unheld, all of them. The
    // foresight assumes shuffled order, so rare probes (kForesightProbeFactor times rarer than
    // the used share's) go on measuring, and a measured share that pays (a reader in shard
    // order, say) wins.
    const uint64_t total = dataset_.manifest().total_bytes;
    const double unheld =
        static_cast<double>(total - std::min(total, tiers_.ram().Counters().bytes_used));
    const double h = unheld > 0 ? static_cast<double>(room) / unheld : 1;
    const double gain = extent > span ? static_cast<double>(extent - span) / span : 0;
    const double foreseen =
        !options_.foresee_use || h >= 1 || gain <= 0 ? 1 : std::min(1.0, h / (gain * (1 - h)));
    std::lock_guard<std::mutex> lock(mu_);
    UpdateUsedShare();
    const bool measured_pays = judged_used_ + judged_wasted_ >= kJudgeBatch &&
                               used_share_ >= pays_above;
    if (foreseen < pays_above && !measured_pays) {
      if (++foresight_misses_ < kForesightProbeFactor * options_.probe_every) {
        skipped_no_room_.fetch_add(1, std::memory_order_relaxed);
        return plan;
      }
      foresight_misses_ = 0;
      probe = true;
    } else if (used_share_ < pays_above) {
      if (++misses_since_probe_ < options_.probe_every) {
        skipped_unused_.fetch_add(1, std::memory_order_relaxed);
        return plan;
      }
      misses_since_probe_ = 0;
      probe = true;
    }
  }

  // Memory: at most kMaxInFlight extents at once; the others read sample-sized.
  if (in_flight_.fetch_add(1, std::memory_order_acq_rel) >= kMaxInFlight) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    skipped_busy_.fetch_add(1, std::memory_order_relaxed);
    return plan;
  }
  plan.in_flight_ = true;
  plan.owner_ = this;  // from here the plan's end releases what it took

  // The aligned window holding the sample, and files wholly inside it: from the sample, the
  // index's neighbours on each side for as long as they lie in the window (within a directory
  // index order is shard order, as the packer writes samples in path order; across directories
  // it need not be, so the walk stops at the first file outside and may leave some of the
  // window's files out). Directories and empty files in between are stepped over.
  const uint64_t window_start = span_start - span_start % extent;
  const uint64_t window_end = std::max(window_start + extent, span_end);
  const uint32_t shard = e.record.shard;
  auto inside = [&](const format::Entry& o) {
    return o.record.shard == shard && o.record.data_offset >= window_start &&
           o.record.data_offset + o.size() <= window_end;
  };
  // A file some tier or the area already holds ends the walk on its side: the extent is the
  // run of files nobody has around the miss, so windows of different sizes (the estimate moves)
  // and misses next to earlier extents do not read the same bytes again.
  cache::CacheTier* ssd = tiers_.ssd();
  auto held = [&](const format::Entry& o) {
    return tiers_.ram().Contains(o.index) || area_.Contains(o.index) ||
           (ssd != nullptr && ssd->Contains(o.index));
  };
  const size_t max_others = options_.max_files > members.size()
                                ? options_.max_files - members.size()
                                : 0;
  const size_t max_steps = 4 * options_.max_files;
  std::vector<format::Entry> before, after;
  size_t steps = 0;
  for (uint64_t i = members.front().index; i > 0 && before.size() < max_others &&
                                           steps < max_steps;
       --i, ++steps) {
    auto o = dataset_.GetEntry(i - 1);
    if (!o.ok()) break;
    if (!o->is_regular() || o->size() == 0) continue;
    if (!inside(*o) || held(*o)) break;
    before.push_back(*o);
  }
  for (uint64_t i = members.back().index + 1;
       i < dataset_.entry_count() && before.size() + after.size() < max_others &&
       steps < max_steps;
       ++i, ++steps) {
    auto o = dataset_.GetEntry(i);
    if (!o.ok()) break;
    if (!o->is_regular() || o->size() == 0) continue;
    if (!inside(*o) || held(*o)) break;
    after.push_back(*o);
  }
  if (before.empty() && after.empty()) {
    skipped_small_.fetch_add(1, std::memory_order_relaxed);
    return plan;
  }
  plan.files.reserve(before.size() + members.size() + after.size());
  plan.files.assign(before.rbegin(), before.rend());
  plan.files.insert(plan.files.end(), members.begin(), members.end());
  plan.files.insert(plan.files.end(), after.begin(), after.end());
  std::sort(plan.files.begin(), plan.files.end(),
            [](const format::Entry& a, const format::Entry& b) {
              return a.record.data_offset < b.record.data_offset;
            });
  // Readers of the neighbours wait for this read (Take) rather than read the extent again.
  std::vector<uint64_t> keys;
  keys.reserve(before.size() + after.size());
  for (const auto& o : before) keys.push_back(o.index);
  for (const auto& o : after) keys.push_back(o.index);
  plan.loading_ = area_.BeginLoad(keys);
  plan.to_ssd_ = to_ssd;
  plan.room_ = room;
  uint64_t end = 0;
  for (const auto& f : plan.files) end = std::max<uint64_t>(end, f.record.data_offset + f.size());
  const uint64_t bytes = end - plan.files.front().record.data_offset;
  extents_.fetch_add(1, std::memory_order_relaxed);
  extent_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  last_extent_.store(bytes, std::memory_order_relaxed);
  if (probe) probes_.fetch_add(1, std::memory_order_relaxed);
  return plan;
}

void ExtentReader::Keep(const Plan& plan, const format::Entry& neighbour, cache::Blob blob) {
  const uint64_t key = neighbour.index;
  if (tiers_.ram().Contains(key)) return;
  if (plan.to_ssd_) {
    cache::CacheTier* ssd = tiers_.ssd();
    if (ssd->Contains(key)) return;
    const uint64_t bytes = blob->size();
    ssd->Insert(key, std::move(blob));
    if (!ssd->Contains(key)) return;  // not admitted (paused, queue full, refused): not kept
    on_ssd_[key].store(1, std::memory_order_release);
    kept_ssd_files_.fetch_add(1, std::memory_order_relaxed);
    kept_ssd_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return;
  }
  // The area lives in what the RAM tier had not filled when the extent was planned: as the
  // tier grows, the area shrinks (at the next miss) and its oldest neighbours go (wasted), so
  // it never takes the place of a file that was read.
  area_.SetBudget(plan.room_);
  area_.Put(key, std::move(blob), kAreaPattern);
}

cache::Blob ExtentReader::Take(uint64_t key) {
  if (cache::Blob b = area_.Take(key)) return b;
  // A neighbour of an extent that was in flight may have gone to the SSD tier, after this
  // reader's own SSD lookup missed: serve it from there rather than read the origin again.
  if (on_ssd_ != nullptr && key < dataset_.entry_count() &&
      on_ssd_[key].load(std::memory_order_relaxed) != 0) {
    if (cache::Blob b = tiers_.ssd()->Lookup(key)) {
      NoteSsdRead(key);
      return b;
    }
  }
  return nullptr;
}

void ExtentReader::NoteSsdRead(uint64_t entry_index) {
  if (on_ssd_ == nullptr || entry_index >= dataset_.entry_count()) return;
  if (on_ssd_[entry_index].exchange(0, std::memory_order_relaxed) == 0) return;
  used_ssd_files_.fetch_add(1, std::memory_order_relaxed);
  auto e = dataset_.GetEntry(entry_index);
  if (e.ok()) used_ssd_bytes_.fetch_add(e->size(), std::memory_order_relaxed);
}

ExtentCounters ExtentReader::Counters() const {
  ExtentCounters c;
  c.extents = extents_.load(std::memory_order_relaxed);
  c.extent_bytes = extent_bytes_.load(std::memory_order_relaxed);
  c.probes = probes_.load(std::memory_order_relaxed);
  const cache::PrefetchCounters a = area_.Counters(kAreaPattern);
  c.kept_files = a.issued;
  c.kept_bytes = a.bytes_issued;
  c.kept_ssd_files = kept_ssd_files_.load(std::memory_order_relaxed);
  c.kept_ssd_bytes = kept_ssd_bytes_.load(std::memory_order_relaxed);
  c.used_files = a.used + used_ssd_files_.load(std::memory_order_relaxed);
  c.used_bytes = a.bytes_used + used_ssd_bytes_.load(std::memory_order_relaxed);
  c.wasted_files = a.wasted;
  c.wasted_bytes = a.bytes_wasted;
  c.skipped_unknown = skipped_unknown_.load(std::memory_order_relaxed);
  c.skipped_small = skipped_small_.load(std::memory_order_relaxed);
  c.skipped_no_room = skipped_no_room_.load(std::memory_order_relaxed);
  c.skipped_unused = skipped_unused_.load(std::memory_order_relaxed);
  c.skipped_busy = skipped_busy_.load(std::memory_order_relaxed);
  c.area_bytes = area_.bytes_held();
  c.area_budget = area_.budget();
  c.last_extent_bytes = last_extent_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    c.used_share = used_share_;
  }
  switch (options_.mode) {
    case ExtentMode::kAuto: c.mode = "auto"; break;
    case ExtentMode::kOff: c.mode = "off"; break;
    case ExtentMode::kFixed: c.mode = FormatBytes(options_.fixed_bytes); break;
  }
  return c;
}

}  // namespace mmfs::fs
