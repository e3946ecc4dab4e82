#include "fs/core/memory_governor.h"

#include "fs/core/stats_format.h"

#include <algorithm>

namespace mmfs::fs {

MemoryGovernor::MemoryGovernor(MemoryLimit limit, MemoryBudget plan, bool push_wanted,
                               Hooks hooks, std::string root)
    : limit_(std::move(limit)),
      plan_(std::move(plan)),
      push_wanted_(push_wanted),
      hooks_(std::move(hooks)),
      root_(std::move(root)) {
  counters_.targets = {plan_.ram_cache_bytes, plan_.prefetch_bytes, plan_.read_buffer_bytes,
                       push_wanted_};
}

MemoryGovernor::~MemoryGovernor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MemoryGovernor::Start(std::chrono::milliseconds interval) {
  thread_ = std::thread([this, interval] {
    for (;;) {
      Step(SampleMemory(limit_, root_));
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, interval, [&] { return stop_; })) return;
    }
  });
}

void MemoryGovernor::Step(const MemorySample& sample) {
  const uint64_t limit = plan_.limit_bytes;
  MemoryTargets before, t;
  Pressure level;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const MemorySample& prev = have_prev_ ? counters_.last : sample;
    level = plan_.explicit_memory() ? AssessWithin(prev, sample)
                                    : AssessPressure(limit, prev, sample);
    before = t = counters_.targets;
  }
  const uint64_t used = hooks_.ram_used ? hooks_.ram_used() : 0;
  // With --memory the page cache is what gives way: what reclaim cannot take back must stay
  // below the limit less the page-cache share. Otherwise the working set below 80% of it.
  const uint64_t target = plan_.explicit_memory()
                              ? WithinTarget()
                              : static_cast<uint64_t>(kHighFraction * static_cast<double>(limit));
  const uint64_t working =
      plan_.explicit_memory() ? sample.unreclaimable_bytes() : sample.working_bytes();
  auto halve = [](uint64_t b) { return std::max(kMinBufferBytes, b / 2); };
  if (level == Pressure::kCritical) {
    t.ram_cache_bytes = std::min(t.ram_cache_bytes, used / 2);
    t.prefetch_bytes = halve(t.prefetch_bytes);
    t.read_buffer_bytes = halve(t.read_buffer_bytes);
  } else if (working > target || level == Pressure::kHigh) {
    // Give back the excess over the target (at least an eighth: high PSI below the target).
    // With --memory just the excess: every byte evicted is a miss next epoch, and the target
    // already keeps the page-cache share free.
    const uint64_t over = working > target ? working - target : 0;
    const uint64_t excess =
        plan_.explicit_memory() && over > 0 ? over : std::max(over, used / 8);
    t.ram_cache_bytes = std::min(t.ram_cache_bytes, used > excess ? used - excess : 0);
    t.prefetch_bytes = halve(t.prefetch_bytes);
    t.read_buffer_bytes = halve(t.read_buffer_bytes);
  } else {
    // Grow by no more than the headroom, and no more than a step of the limit per sample: what
    // others allocate between two samples (a reader's batch) then finds room.
    const uint64_t step = std::max<uint64_t>(limit / kGrowthStepDivisor, 1);
    const uint64_t headroom = target > working ? target - working : 0;
    // With --memory the headroom is measured to the limit less the page-cache share, which is
    // what absorbs others' allocations between two samples: no step. (A step also starved the
    // tier of files larger than a sixteenth of it: used + step stayed below what one shard
    // needs to admit one, so the tier never held anything and never grew.)
    // Growing back right up to the target after a shrink churned the tier (a loader's workers
    // hovering at the target: 114 shrinks in three epochs, each evicting files that then
    // missed): with --memory it grows only to half the page-cache share below the target.
    const uint64_t band = plan_.page_cache_bytes / 2;
    const uint64_t grow = plan_.explicit_memory() ? (headroom > band ? headroom - band : 0)
                                                  : std::min(headroom, step);
    t.ram_cache_bytes = std::min(plan_.ram_cache_bytes, used + grow);
    if (level == Pressure::kLow) {
      t.prefetch_bytes = std::min(plan_.prefetch_bytes, t.prefetch_bytes * 2);
      t.read_buffer_bytes = std::min(plan_.read_buffer_bytes, t.read_buffer_bytes * 2);
    }
  }
  t.push = push_wanted_ && level == Pressure::kLow;
  const bool shrank = t.ram_cache_bytes < std::min(before.ram_cache_bytes, used) ||
                      t.prefetch_bytes < before.prefetch_bytes ||
                      t.read_buffer_bytes < before.read_buffer_bytes;
  if (!(t == before) && hooks_.apply) hooks_.apply(t);
  std::lock_guard<std::mutex> lock(mu_);
  counters_.level = level;
  counters_.samples++;
  if (shrank) counters_.shrinks++;
  counters_.last = sample;
  counters_.targets = t;
  have_prev_ = true;
}

uint64_t MemoryGovernor::WithinTarget() const {
  const uint64_t limit = plan_.limit_bytes;
  return limit > plan_.page_cache_bytes ? limit - plan_.page_cache_bytes : 0;
}

Pressure MemoryGovernor::AssessWithin(const MemorySample& prev, const MemorySample& cur) const {
  const uint64_t target = WithinTarget();
  const uint64_t anon = cur.unreclaimable_bytes();
  // Past half the page-cache share the kernel is close to having nothing left to reclaim.
  // Judged with every kernel object counted: on cgroup v1 the reclaimable ones are an estimate
  // (all of the kernel memory), and this check must not err on the side of an OOM kill.
  if (cur.oom_kills > prev.oom_kills ||
      cur.non_file_bytes() >= target + (plan_.limit_bytes - target) / 2 ||
      (cur.has_psi && cur.psi_full_avg10 >= 10.0)) {
    return Pressure::kCritical;
  }
  if (anon > target || (cur.has_psi && cur.psi_some_avg10 >= 10.0)) return Pressure::kHigh;
  if (anon > target - target / 16) return Pressure::kModerate;
  return Pressure::kLow;
}

GovernorCounters MemoryGovernor::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

nlohmann::json MemoryStatsJson(uint64_t rss_bytes, const MemoryGovernor* governor) {
  return MemoryJson(MemoryStatsOf(rss_bytes, governor));
}

}  // namespace mmfs::fs
