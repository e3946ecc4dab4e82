#include "fs/read/extent_reader.h"

#include <utility>

#include "base/units.h"

namespace mmfs::fs {

namespace {
constexpr cache::PrefetchPattern kAreaPattern = cache::PrefetchPattern::kSampleMembers;
}  // namespace

Result<ExtentOptions> ParseExtentOption(const std::string& value) {
  ExtentOptions o;
  if (value == "auto") return o;
  if (value == "off") {
    o.mode = ExtentMode::kOff;
    return o;
  }
  auto size = ParseSize(value);
  if (!size.ok() || *size < kMinExtentBytes || *size > kMaxExtentBytes) {
    return Status::InvalidArgument("extents must be auto, off or a size from 64K to 64M, not '" +
                                   value + "'");
  }
  o.mode = ExtentMode::kFixed;
  o.fixed_bytes = *size;
  return o;
}

ExtentReader::ExtentReader(const format::Dataset& dataset, cache::TierStack& tiers,
                           ExtentOptions options)
    : dataset_(dataset), tiers_(tiers), options_(std::move(options)), area_(0) {
  if (tiers_.local_disk() != nullptr && options_.mode != ExtentMode::kOff) {
    on_ssd_ = std::make_unique<std::atomic<uint8_t>[]>(dataset_.entry_count());
  }
}

ExtentReader::~ExtentReader() = default;

ExtentReader::Extent::Extent(Extent&& other) noexcept
    : files(std::move(other.files)),
      owner_(other.owner_),
      plan_(other.plan_),
      loading_(std::move(other.loading_)),
      in_flight_(other.in_flight_) {
  // The moved-from extent releases nothing: its slot in flight and its waiters are this one's.
  other.owner_ = nullptr;
  other.in_flight_ = false;
  other.loading_.clear();
}

ExtentReader::Extent::~Extent() {
  if (owner_ != nullptr) owner_->EndExtent(*this);
}

void ExtentReader::EndExtent(Extent& extent) {
  if (!extent.loading_.empty()) area_.EndLoad(extent.loading_);
  extent.loading_.clear();
  if (extent.in_flight_) in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  extent.in_flight_ = false;
}

void ExtentReader::Abandon(Extent& extent) {
  EndExtent(extent);
  extent.files.clear();
  extent.owner_ = nullptr;
}

void ExtentReader::FitArea() {
  if (area_.bytes_held() > 0) area_.SetBudget(RamRoom());
}

void ExtentReader::SetRoom() {
  // The RAM tier's budget may have changed (memory pressure): the area follows at once.
  area_.SetBudget(RamRoom());
}

uint64_t ExtentReader::RamRoom() const {
  const cache::TierCounters c = tiers_.ram().Counters();
  return c.bytes_budget > c.bytes_used ? c.bytes_budget - c.bytes_used : 0;
}

void ExtentReader::Count(ExtentDecision decision) {
  std::atomic<uint64_t>* counter = nullptr;
  switch (decision) {
    case ExtentDecision::kUnknown: counter = &skipped_unknown_; break;
    case ExtentDecision::kSmall: counter = &skipped_small_; break;
    case ExtentDecision::kNoRoom: counter = &skipped_no_room_; break;
    case ExtentDecision::kUnused: counter = &skipped_unused_; break;
    case ExtentDecision::kBusy: counter = &skipped_busy_; break;
    case ExtentDecision::kExtent:
    case ExtentDecision::kOff: return;
  }
  counter->fetch_add(1, std::memory_order_relaxed);
}

ExtentSize ExtentReader::SizeMiss(uint64_t span, const OriginCostEstimate& cost) {
  ExtentSizeInputs in;
  in.mode = options_.mode;
  in.fixed_bytes = options_.fixed_bytes;
  in.explore_every = options_.explore_every;
  in.span = span;
  in.cost = cost;
  ExtentSize size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.mode == ExtentMode::kAuto) {
      const cache::PrefetchCounters a = area_.Counters(kAreaPattern);
      in.area_used = a.used;
      in.area_wasted = a.wasted;
    }
    in.learning = learning_;
    size = SizeExtent(in);
    learning_ = size.learning;
  }
  Count(size.decision);
  return size;
}

ExtentReader::Extent ExtentReader::Reserve(ExtentPlanInputs in) {
  in.mode = options_.mode;
  in.probe_every = options_.probe_every;
  in.foresee_use = options_.foresee_use;
  in.max_files = options_.max_files;
  Extent extent;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in.learning = learning_;
    in.in_flight = in_flight_.load(std::memory_order_acquire);
    extent.plan_ = PlanExtent(in);
    learning_ = extent.plan_.learning;
    if (extent.plan_.decision == ExtentDecision::kExtent) {
      // Slots are taken only here, under mu_: the count the plan saw is still the count.
      in_flight_.fetch_add(1, std::memory_order_acq_rel);
      extent.in_flight_ = true;
      extent.owner_ = this;  // from here the extent's end releases what it took
    }
  }
  Count(extent.plan_.decision);
  return extent;
}

void ExtentReader::Start(Extent& extent, ExtentFiles files) {
  if (files.files.empty()) {
    Count(ExtentDecision::kSmall);
    Abandon(extent);
    return;
  }
  extent.files = std::move(files.files);
  // Readers of the neighbours wait for this read (Take) rather than read the extent again.
  extent.loading_ = area_.BeginLoad(files.neighbours);
  extents_.fetch_add(1, std::memory_order_relaxed);
  extent_bytes_.fetch_add(files.bytes, std::memory_order_relaxed);
  last_extent_.store(files.bytes, std::memory_order_relaxed);
  if (extent.plan_.probe) probes_.fetch_add(1, std::memory_order_relaxed);
}

void ExtentReader::Keep(const Extent& extent, const format::Entry& neighbour, cache::Blob blob) {
  const uint64_t key = neighbour.index;
  if (tiers_.ram().Contains(key)) return;
  if (extent.plan_.to_ssd) {
    cache::CacheTier* ssd = tiers_.local_disk();
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
  area_.SetBudget(extent.plan_.room);
  area_.Put(key, std::move(blob), kAreaPattern);
}

cache::Blob ExtentReader::Take(uint64_t key) {
  if (cache::Blob b = area_.Take(key)) return b;
  return FromSsd(key);
}

cache::Blob ExtentReader::TakeHeld(uint64_t key, bool* loading) {
  if (cache::Blob b = area_.TakeHeld(key, loading)) return b;
  return *loading ? nullptr : FromSsd(key);
}

cache::Blob ExtentReader::FromSsd(uint64_t key) {
  // A neighbour of an extent that was in flight may have gone to the SSD tier, after this
  // reader's own SSD lookup missed: serve it from there rather than read the origin again.
  if (on_ssd_ != nullptr && key < dataset_.entry_count() &&
      on_ssd_[key].load(std::memory_order_relaxed) != 0) {
    if (cache::Blob b = tiers_.local_disk()->Lookup(key)) {
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
    c.used_share = learning_.used_share;
  }
  switch (options_.mode) {
    case ExtentMode::kAuto: c.mode = "auto"; break;
    case ExtentMode::kOff: c.mode = "off"; break;
    case ExtentMode::kFixed: c.mode = FormatBytes(options_.fixed_bytes); break;
  }
  return c;
}

}  // namespace mmfs::fs
