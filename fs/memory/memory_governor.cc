#include "fs/memory/memory_governor.h"

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
    level = plan_.shared_limit() ? AssessWithin(prev, sample)
                                    : AssessPressure(limit, prev, sample);
    before = t = counters_.targets;
  }
  const uint64_t used = hooks_.ram_used ? hooks_.ram_used() : 0;
  // In shared-limit mode the page cache is what gives way: what reclaim cannot take back must stay
  // below the limit less the page-cache share (WithinRoom). Otherwise the working set below 80%
  // of the limit.
  uint64_t over = 0, headroom = 0;
  if (plan_.shared_limit()) {
    const Room room = WithinRoom(sample);
    over = room.over;
    headroom = room.headroom;
  } else {
    const auto target = static_cast<uint64_t>(kHighFraction * static_cast<double>(limit));
    const uint64_t working = sample.working_bytes();
    over = working > target ? working - target : 0;
    headroom = target > working ? target - working : 0;
  }
  auto halve = [](uint64_t b) { return std::max(kMinBufferBytes, b / 2); };
  if (level == Pressure::kCritical) {
    t.ram_cache_bytes = std::min(t.ram_cache_bytes, used / 2);
    t.prefetch_bytes = halve(t.prefetch_bytes);
    t.read_buffer_bytes = halve(t.read_buffer_bytes);
  } else if (over > 0 || level == Pressure::kHigh) {
    // Give back the excess over the target (at least an eighth: high PSI below the target).
    // In shared-limit mode just the excess: every byte evicted is a miss next epoch, and the target
    // already keeps the page-cache share free.
    const uint64_t excess =
        plan_.shared_limit() && over > 0 ? over : std::max(over, used / 8);
    t.ram_cache_bytes = std::min(t.ram_cache_bytes, used > excess ? used - excess : 0);
    t.prefetch_bytes = halve(t.prefetch_bytes);
    t.read_buffer_bytes = halve(t.read_buffer_bytes);
  } else {
    // Grow by no more than the headroom, and no more than a step of the limit per sample: what
    // others allocate between two samples (a reader's batch) then finds room.
    const uint64_t step = std::max<uint64_t>(limit / kGrowthStepDivisor, 1);
    // In shared-limit mode the headroom is measured to the limit less the page-cache share, which is
    // what absorbs others' allocations between two samples: no step. (A step also starved the
    // tier of files larger than a sixteenth of it: used + step stayed below what one shard
    // needs to admit one, so the tier never held anything and never grew.)
    // Growing back right up to the target after a shrink churned the tier (a loader's workers
    // hovering at the target: 114 shrinks in three epochs, each evicting files that then
    // missed): in shared-limit mode it grows only to half the page-cache share below the target.
    const uint64_t band = plan_.page_cache_bytes / 2;
    const uint64_t grow = plan_.shared_limit() ? (headroom > band ? headroom - band : 0)
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

uint64_t MemoryGovernor::KernelCeiling() const {
  const uint64_t limit = plan_.limit_bytes;
  const uint64_t keep = plan_.page_cache_bytes / 4;
  return limit > keep ? limit - keep : 0;
}

MemoryGovernor::Room MemoryGovernor::WithinRoom(const MemorySample& s) const {
  const uint64_t target = plan_.held_limit_bytes(), ceiling = KernelCeiling();
  const uint64_t anon = s.unreclaimable_bytes(), non_file = s.non_file_bytes();
  Room r;
  const uint64_t anon_over = anon > target ? anon - target : 0;
  const uint64_t all_over = non_file > ceiling ? non_file - ceiling : 0;
  r.over = std::max(anon_over, all_over);
  r.headroom = std::min(target > anon ? target - anon : 0,
                        ceiling > non_file ? ceiling - non_file : 0);
  return r;
}

Pressure MemoryGovernor::AssessWithin(const MemorySample& prev, const MemorySample& cur) const {
  const uint64_t target = plan_.held_limit_bytes();
  const uint64_t share = plan_.limit_bytes - target;
  const uint64_t anon = cur.unreclaimable_bytes(), non_file = cur.non_file_bytes();
  // Critical: unreclaimable memory past half the page-cache share (the kernel is close to having
  // nothing left to reclaim), or, kernel objects counted, less than a sixteenth of the share
  // left to page cache (on cgroup v1 the reclaimable kernel objects are an estimate, and this
  // check must not err on the side of an OOM kill). Half the tier goes.
  if (cur.oom_kills > prev.oom_kills || anon >= target + share / 2 ||
      non_file + share / 16 >= plan_.limit_bytes ||
      (cur.has_psi && cur.psi_full_avg10 >= 10.0)) {
    return Pressure::kCritical;
  }
  // High: past either ceiling of WithinRoom; only the excess goes. (Critical at the first
  // ceiling's edge instead halved the tier whenever the kernel objects outgrew the share, as
  // many small files do, and it grew back to be halved again.)
  if (WithinRoom(cur).over > 0 || (cur.has_psi && cur.psi_some_avg10 >= 10.0)) {
    return Pressure::kHigh;
  }
  const uint64_t ceiling = KernelCeiling();
  if (anon > target - target / 16 || non_file > ceiling - ceiling / 16) return Pressure::kModerate;
  return Pressure::kLow;
}

GovernorCounters MemoryGovernor::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace mmfs::fs
