#include "fs/read/extent_plan.h"

#include <algorithm>

namespace mmfs::fs {

ExtentLearning FoldOutcomes(ExtentLearning l, uint64_t area_used, uint64_t area_wasted) {
  const uint64_t used = area_used - l.judged_used, wasted = area_wasted - l.judged_wasted;
  if (used + wasted < kJudgeBatch) return l;
  const double share = static_cast<double>(used) / static_cast<double>(used + wasted);
  // Half the weight on the newest batch: a change of workload shows within a few batches.
  l.used_share = 0.5 * l.used_share + 0.5 * share;
  // Neighbours nearly all used: a larger extent costs less per byte a reader gets (its request
  // is shared by more of them), whatever the model's knee; some unused: back towards it.
  if (share >= 0.9) {
    l.growth = std::min<uint64_t>(l.growth * 2, kMaxExtentGrowth);
  } else if (share < 0.5) {
    l.growth = std::max<uint64_t>(l.growth / 2, 1);
  }
  l.judged_used = area_used;
  l.judged_wasted = area_wasted;
  return l;
}

ExtentSize SizeExtent(const ExtentSizeInputs& in) {
  ExtentSize out;
  out.learning = in.learning;
  if (in.mode == ExtentMode::kOff) {
    out.decision = ExtentDecision::kOff;
    return out;
  }
  if (in.mode == ExtentMode::kFixed) {
    out.bytes = in.fixed_bytes;
    if (out.bytes == 0) out.decision = ExtentDecision::kOff;  // no extent to speak of
    return out;
  }
  const uint64_t span = std::max<uint64_t>(1, in.span);
  ExtentLearning& l = out.learning;
  OriginCostEstimate cost = in.cost;
  // Samples of about one size read one at a time never show the model a slope, and what it
  // learnt fades (its weights halve every 512 reads). So: until it first knows an origin whose
  // requests are expensive, one miss in 16 reads an extent of 8 samples (at least 256 KiB),
  // which gives it reads of another size; otherwise (cheap requests, or it has known and its
  // last estimate stands meanwhile) such probes come only as often as keeps their extra bytes
  // under kExploreShare of the misses' (1 in ~160 for 58 KB samples).
  const uint64_t explore_extent =
      std::max<uint64_t>(kExploreBytes, (2 * kMinExtentGain * span + kMinExtentBytes - 1) /
                                            kMinExtentBytes * kMinExtentBytes);
  if (cost.known) l.last_known = cost;
  l = FoldOutcomes(l, in.area_used, in.area_wasted);
  const bool stale = !cost.known && l.last_known.known;
  if (stale) cost = l.last_known;
  // A latency-bound estimate from sample reads alone asks for twice a sample: explore.
  const bool stuck = cost.known && cost.latency_bound && cost.extent_bytes < kMinExtentGain * span;
  bool explore = false;
  if (!cost.known || stale || stuck) {
    // Fast while never known only where requests are expensive (a mean of a millisecond or
    // more): elsewhere the probes' bytes would cost more than anything they could find.
    const bool eager = !cost.known && !stale && cost.mean_seconds >= kExpensiveRequest;
    // An origin last known not to pay (bandwidth-bound: there every byte is time) is re-checked
    // five times more rarely.
    const double share =
        stale && cost.extent_bytes < kMinExtentGain * span ? kExploreShare / 5 : kExploreShare;
    const uint64_t rare = std::max<uint64_t>(
        kFirstExploreEvery, static_cast<uint64_t>(static_cast<double>(explore_extent - span) /
                                                  (share * static_cast<double>(span))));
    const uint64_t every = in.explore_every > 0 ? in.explore_every
                           : eager              ? kFirstExploreEvery
                                                : rare;
    explore = ++l.unknown_misses % every == 0;
    if (stuck && !explore) cost.known = false;  // read sample-sized, as unknown
  }
  if (explore) {
    out.probe = true;
    out.bytes = explore_extent;
    return out;  // judged by no estimate: out.cost stays unknown
  }
  if (!cost.known) {
    out.decision = ExtentDecision::kUnknown;
    return out;
  }
  out.cost = cost;
  out.bytes = cost.extent_bytes;
  if (out.bytes < kMinExtentGain * span) {
    out.decision = ExtentDecision::kSmall;
    return out;
  }
  // Grown while the neighbours are used (FoldOutcomes), up to the model's maximum.
  if (l.growth > 1) {
    out.bytes = std::min<uint64_t>(out.bytes * l.growth, kMaxGrownExtent);
    out.bytes -= out.bytes % kMinExtentBytes;
    if (out.bytes == 0) out.decision = ExtentDecision::kOff;  // grown from under 64 KiB
  }
  return out;
}

ExtentPlan PlanExtent(const ExtentPlanInputs& in) {
  ExtentPlan plan;
  plan.learning = in.learning;
  if (in.size.decision != ExtentDecision::kExtent) {
    plan.decision = in.size.decision;
    return plan;
  }
  const uint64_t extent = in.size.bytes;
  const uint64_t span = std::max<uint64_t>(1, in.span_end - in.span_start);
  const ExtentRoom& r = in.room;
  plan.probe = in.size.probe;
  // Room for the neighbours: the SSD tier while it admits, has space and a write queue that
  // takes the whole extent; else the part of the RAM tier's budget it has not filled.
  plan.to_ssd = r.ssd && !r.ssd_paused && r.ssd_used + extent <= r.ssd_budget &&
                r.ssd_pending + extent <= r.ssd_max_entry;
  plan.room = r.ram_budget > r.ram_used ? r.ram_budget - r.ram_used : 0;
  if (!plan.to_ssd && plan.room < extent) {
    plan.decision = ExtentDecision::kNoRoom;
    return plan;
  }
  const OriginCostEstimate& cost = in.size.cost;
  if (in.mode == ExtentMode::kAuto && cost.known && !plan.probe && !plan.to_ssd) {
    ExtentLearning& l = plan.learning;
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
    const uint64_t total = r.dataset_bytes;
    const double unheld = static_cast<double>(total - std::min(total, r.ram_used));
    const double h = unheld > 0 ? static_cast<double>(plan.room) / unheld : 1;
    const double gain = extent > span ? static_cast<double>(extent - span) / span : 0;
    const double foreseen =
        !in.foresee_use || h >= 1 || gain <= 0 ? 1 : std::min(1.0, h / (gain * (1 - h)));
    const bool measured_pays =
        l.judged_used + l.judged_wasted >= kJudgeBatch && l.used_share >= pays_above;
    if (foreseen < pays_above && !measured_pays) {
      if (++l.foresight_misses < kForesightProbeFactor * in.probe_every) {
        plan.decision = ExtentDecision::kNoRoom;
        return plan;
      }
      l.foresight_misses = 0;
      plan.probe = true;
    } else if (l.used_share < pays_above) {
      if (++l.misses_since_probe < in.probe_every) {
        plan.decision = ExtentDecision::kUnused;
        return plan;
      }
      l.misses_since_probe = 0;
      plan.probe = true;
    }
  }
  // Memory: at most kMaxExtentsInFlight extents at once; the others read sample-sized.
  if (in.in_flight >= kMaxExtentsInFlight) {
    plan.decision = ExtentDecision::kBusy;
    return plan;
  }
  plan.decision = ExtentDecision::kExtent;
  // The aligned window holding the sample, and files wholly inside it.
  plan.shard = in.shard;
  plan.window_start = in.span_start - in.span_start % extent;
  plan.window_end = std::max(plan.window_start + extent, in.span_end);
  plan.max_neighbours = in.max_files > in.members ? in.max_files - in.members : 0;
  plan.max_steps = 4 * in.max_files;
  return plan;
}

ExtentFiles AssembleExtent(const std::vector<format::Entry>& members,
                           const std::vector<format::Entry>& below,
                           const std::vector<format::Entry>& above) {
  ExtentFiles out;
  if (below.empty() && above.empty()) return out;
  out.files.reserve(below.size() + members.size() + above.size());
  out.files.assign(below.rbegin(), below.rend());
  out.files.insert(out.files.end(), members.begin(), members.end());
  out.files.insert(out.files.end(), above.begin(), above.end());
  std::sort(out.files.begin(), out.files.end(), [](const format::Entry& a, const format::Entry& b) {
    return a.record.data_offset < b.record.data_offset;
  });
  out.neighbours.reserve(below.size() + above.size());
  for (const auto& o : below) out.neighbours.push_back(o.index);
  for (const auto& o : above) out.neighbours.push_back(o.index);
  uint64_t end = 0;
  for (const auto& f : out.files) end = std::max<uint64_t>(end, f.record.data_offset + f.size());
  out.bytes = end - out.files.front().record.data_offset;
  return out;
}

}  // namespace mmfs::fs
