#include "fs/readers/reader_accounting.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "fs/readers/reader_verdict.h"

namespace mmfs::fs {

namespace {

class SteadyClockImpl : public Clock {
 public:
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

constexpr char kOtherCommand[] = "other";
constexpr char kUnknownCommand[] = "?";

}  // namespace

const Clock& SteadyClock() {
  static const SteadyClockImpl clock;
  return clock;
}

ReaderAccounting::Amounts& ReaderAccounting::Amounts::operator+=(const Amounts& o) {
  alive_ns += o.alive_ns;
  stall_ns += o.stall_ns;
  cpu_ns += o.cpu_ns;
  runq_ns += o.runq_ns;
  requests += o.requests;
  bytes += o.bytes;
  rchar += o.rchar;
  return *this;
}

ReaderAccounting::Amounts ReaderAccounting::Amounts::operator-(const Amounts& o) const {
  Amounts r = *this;
  r.alive_ns -= o.alive_ns;
  r.stall_ns -= o.stall_ns;
  r.cpu_ns -= o.cpu_ns;
  r.runq_ns -= o.runq_ns;
  r.requests -= o.requests;
  r.bytes -= o.bytes;
  r.rchar -= o.rchar;
  return r;
}

ReaderAccounting::ReaderAccounting(ReaderAccountingOptions options, const Clock* clock,
                                   std::unique_ptr<ProcReader> proc)
    : options_(std::move(options)),
      clock_(clock),
      start_ns_(clock->NowNs()),
      proc_(std::move(proc)),
      tick_ns_(static_cast<size_t>(options_.history_ticks), 0),
      finished_history_(static_cast<size_t>(options_.history_ticks)) {}

ReaderAccounting::~ReaderAccounting() { StopSampler(); }

double ReaderAccounting::max_window_seconds() const {
  return static_cast<double>(options_.tick_ns) * (options_.history_ticks - 2) / 1e9;
}

bool ReaderAccounting::Begin(uint64_t tid, int64_t now_ns) {
  Stripe& s = StripeOf(tid);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.slots.find(tid);
  if (it == s.slots.end()) {
    if (s.slots.size() >= options_.max_threads / stripes_.size()) {
      ++s.untracked;
      return false;
    }
    it = s.slots.emplace(tid, Slot{}).first;
    it->second.first_ns = now_ns;
  }
  Slot& slot = it->second;
  if (slot.inflight++ == 0) slot.busy_since = now_ns;
  return true;
}

void ReaderAccounting::End(uint64_t tid, int64_t now_ns, uint64_t bytes) {
  Stripe& s = StripeOf(tid);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.slots.find(tid);
  if (it == s.slots.end() || it->second.inflight == 0) return;
  Slot& slot = it->second;
  // The union of the thread's requests: time counts while at least one is in flight.
  if (--slot.inflight == 0) slot.stall_ns += std::max<int64_t>(0, now_ns - slot.busy_since);
  ++slot.requests;
  slot.bytes += bytes;
  slot.last_ns = std::max(slot.last_ns, now_ns);
}

std::vector<ReaderAccounting::ThreadView> ReaderAccounting::CollectThreads(int64_t now) {
  std::vector<ThreadView> out;
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& [tid, slot] : s.slots) {
      ThreadView v;
      v.tid = tid;
      v.raw.stall_ns = static_cast<double>(slot.stall_ns);
      if (slot.inflight > 0)
        v.raw.stall_ns += static_cast<double>(std::max<int64_t>(0, now - slot.busy_since));
      v.raw.requests = static_cast<double>(slot.requests);
      v.raw.bytes = static_cast<double>(slot.bytes);
      v.first_ns = slot.first_ns;
      v.last_ns = slot.inflight > 0 ? now : slot.last_ns;
      v.inflight = slot.inflight;
      out.push_back(v);
    }
  }
  return out;
}

bool ReaderAccounting::RemoveThread(uint64_t tid, ThreadView* out) {
  Stripe& s = StripeOf(tid);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.slots.find(tid);
  if (it == s.slots.end() || it->second.inflight > 0) return false;
  const Slot& slot = it->second;
  out->tid = tid;
  out->raw = Amounts{};
  out->raw.stall_ns = static_cast<double>(slot.stall_ns);
  out->raw.requests = static_cast<double>(slot.requests);
  out->raw.bytes = static_cast<double>(slot.bytes);
  out->first_ns = slot.first_ns;
  out->last_ns = slot.last_ns;
  s.slots.erase(it);
  return true;
}

void ReaderAccounting::AddCommandLocked(const std::string& label, const Amounts& a) {
  retired_by_command_[label] += a;
}

ReaderAccounting::Amounts ReaderAccounting::CurrentLocked(const Process& p, int64_t now) const {
  Amounts raw = p.retired;
  raw += p.live;
  raw.cpu_ns = p.cpu_ns;
  raw.runq_ns = p.runq_ns;
  raw.rchar = p.rchar;
  Amounts a = raw - p.base;
  a.alive_ns = static_cast<double>(now - p.first_ns);
  return a;
}

namespace {

// Linear interpolation of cumulative amounts between (time, value) points in time order; before
// the first point, the first value.
template <typename A>
A Interpolate(const std::vector<std::pair<int64_t, A>>& pts, int64_t t) {
  if (pts.empty()) return A{};
  if (t <= pts.front().first) return pts.front().second;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (t > pts[i].first) continue;
    const auto& [t0, a0] = pts[i - 1];
    const auto& [t1, a1] = pts[i];
    if (t1 <= t0) return a1;
    const double f = static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
    A d = a1 - a0;
    A r = a0;
    r.alive_ns += f * d.alive_ns;
    r.stall_ns += f * d.stall_ns;
    r.cpu_ns += f * d.cpu_ns;
    r.runq_ns += f * d.runq_ns;
    r.requests += f * d.requests;
    r.bytes += f * d.bytes;
    r.rchar += f * d.rchar;
    return r;
  }
  return pts.back().second;
}

}  // namespace

ReaderAccounting::Amounts ReaderAccounting::ValueAtLocked(const Process& p, int64_t now,
                                                          int64_t t) const {
  const uint64_t h = static_cast<uint64_t>(options_.history_ticks);
  const uint64_t oldest = ticks_ > h ? ticks_ - h : 0;
  std::vector<std::pair<int64_t, Amounts>> pts;
  // Zero at the first sample, unless the ticks after it have been overwritten since.
  if (p.first_tick >= oldest) pts.emplace_back(p.first_ns, Amounts{});
  for (uint64_t k = std::max(oldest, p.first_tick); k < ticks_; ++k) {
    pts.emplace_back(tick_ns_[k % h], p.history[k % h]);
  }
  pts.emplace_back(now, CurrentLocked(p, now));
  return Interpolate(pts, t);
}

ReaderAccounting::Amounts ReaderAccounting::FinishedAtLocked(int64_t now, int64_t t) const {
  const uint64_t h = static_cast<uint64_t>(options_.history_ticks);
  const uint64_t oldest = ticks_ > h ? ticks_ - h : 0;
  std::vector<std::pair<int64_t, Amounts>> pts;
  if (oldest == 0) pts.emplace_back(start_ns_, Amounts{});
  for (uint64_t k = oldest; k < ticks_; ++k) {
    pts.emplace_back(tick_ns_[k % h], finished_history_[k % h]);
  }
  pts.emplace_back(now, finished_total_);
  return Interpolate(pts, t);
}

void ReaderAccounting::FoldProcessLocked(Process& p) {
  const uint64_t h = static_cast<uint64_t>(options_.history_ticks);
  const uint64_t oldest = ticks_ > h ? ticks_ - h : 0;
  // The finished aggregate's past values gain this reader's, so that a window over its life
  // still counts what it did then; from now on it counts with its final amounts.
  for (uint64_t k = std::max(oldest, p.first_tick); k < ticks_; ++k) {
    finished_history_[k % h] += p.history[k % h];
  }
  const Amounts final_amounts = CurrentLocked(p, p.last_seen_ns);
  finished_total_ += final_amounts;
  exits_.push_back(p.last_seen_ns);
  AddCommandLocked(p.comm, final_amounts);
  for (uint64_t tid : p.tids) known_.erase(tid);
}

void ReaderAccounting::FoldOrphanLocked(const ThreadView& t) {
  Amounts a = t.raw;
  a.alive_ns = static_cast<double>(std::max<int64_t>(0, t.last_ns - t.first_ns));
  finished_total_ += a;
  exits_.push_back(t.last_ns);
  const std::string label = retired_by_command_.count(kUnknownCommand) > 0 ||
                                    retired_by_command_.size() < options_.max_commands
                                ? kUnknownCommand
                                : kOtherCommand;
  AddCommandLocked(label, a);
}

bool ReaderAccounting::MakeRoomLocked() {
  // The process with no live thread slot that was active longest ago.
  auto victim = processes_.end();
  for (auto it = processes_.begin(); it != processes_.end(); ++it) {
    if (!it->second.tids.empty()) continue;
    if (victim == processes_.end() || it->second.last_seen_ns < victim->second.last_seen_ns) {
      victim = it;
    }
  }
  if (victim == processes_.end()) return false;
  FoldProcessLocked(victim->second);
  processes_.erase(victim);
  return true;
}

void ReaderAccounting::RefreshLocked(int64_t now) {
  const std::vector<ThreadView> threads = CollectThreads(now);
  std::unordered_map<uint64_t, const ThreadView*> by_tid;
  for (const ThreadView& t : threads) by_tid[t.tid] = &t;

  // Threads: new ones join their process, exited ones are folded into it.
  for (const ThreadView& t : threads) {
    auto known = known_.find(t.tid);
    auto task = proc_->ReadTask(t.tid);
    const bool alive =
        task.ok() && (known == known_.end() || task->start_ticks == known->second.start_ticks);
    if (!alive) {
      ThreadView fin;
      if (!RemoveThread(t.tid, &fin)) continue;  // a request still in flight: next time
      if (known == known_.end()) {
        FoldOrphanLocked(fin);
        continue;
      }
      auto p = processes_.find(known->second.tgid);
      if (p != processes_.end()) {
        p->second.retired += fin.raw;
        p->second.last_seen_ns = std::max(p->second.last_seen_ns, fin.last_ns);
        auto& tids = p->second.tids;
        tids.erase(std::remove(tids.begin(), tids.end(), t.tid), tids.end());
      }
      known_.erase(known);
      continue;
    }
    if (known != known_.end()) continue;
    if (task->tgid == options_.ignore_tgid) {
      known_[t.tid] = {task->tgid, task->start_ticks};
      continue;
    }
    auto p = processes_.find(task->tgid);
    if (p == processes_.end()) {
      auto sample = proc_->ReadProcess(task->tgid);
      if (!sample.ok()) continue;  // gone between the two reads: seen as exited next time
      if (processes_.size() >= options_.max_processes && !MakeRoomLocked()) continue;
      Process np;
      np.tgid = task->tgid;
      np.start_ticks = sample->start_ticks;
      np.comm = sample->comm;
      if (retired_by_command_.count(np.comm) == 0) {
        if (retired_by_command_.size() < options_.max_commands) {
          retired_by_command_[np.comm] = Amounts{};  // reserves the label
        } else {
          np.comm = kOtherCommand;
        }
      }
      np.first_ns = now;
      np.last_seen_ns = now;
      np.first_tick = ticks_;
      np.cpu_ns = static_cast<double>(sample->cpu_ns);
      np.runq_ns = static_cast<double>(sample->runq_ns);
      np.rchar = static_cast<double>(sample->rchar);
      np.has_io = sample->has_io;
      np.base.cpu_ns = np.cpu_ns;
      np.base.runq_ns = np.runq_ns;
      np.base.rchar = np.rchar;
      np.history.resize(static_cast<size_t>(options_.history_ticks));
      p = processes_.emplace(task->tgid, std::move(np)).first;
    }
    p->second.tids.push_back(t.tid);
    known_[t.tid] = {task->tgid, task->start_ticks};
  }

  // Processes: sample the living, fold the exited.
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = it->second;
    Amounts live;
    for (uint64_t tid : p.tids) {
      auto v = by_tid.find(tid);
      if (v == by_tid.end()) continue;
      live += v->second->raw;
      p.last_seen_ns = std::max(p.last_seen_ns, v->second->last_ns);
    }
    p.live = live;
    if (!p.based) {
      // Its first sample: what its threads did before it is not in its window.
      const double cpu = p.base.cpu_ns, runq = p.base.runq_ns, rchar = p.base.rchar;
      p.base = p.retired;
      p.base += live;
      p.base.cpu_ns = cpu;
      p.base.runq_ns = runq;
      p.base.rchar = rchar;
      p.base.alive_ns = 0;
      p.based = true;
    }
    auto sample = proc_->ReadProcess(p.tgid);
    if (sample.ok() && sample->start_ticks == p.start_ticks) {
      p.cpu_ns = static_cast<double>(sample->cpu_ns);
      // Summed over the threads alive now: it drops when a thread ends; never let it go back.
      p.runq_ns = std::max(p.runq_ns, static_cast<double>(sample->runq_ns));
      p.rchar = static_cast<double>(sample->rchar);
      p.has_io = sample->has_io;
      p.last_seen_ns = now;
      ++it;
      continue;
    }
    // Exited: whatever of its threads is left is final too.
    for (uint64_t tid : p.tids) {
      ThreadView fin;
      if (RemoveThread(tid, &fin)) {
        p.retired += fin.raw;
        p.live = p.live - fin.raw;
      }
    }
    FoldProcessLocked(p);
    it = processes_.erase(it);
  }
  const int64_t keep_after = now - static_cast<int64_t>(options_.tick_ns) * options_.history_ticks;
  exits_.erase(
      std::remove_if(exits_.begin(), exits_.end(), [&](int64_t t) { return t < keep_after; }),
      exits_.end());
}

void ReaderAccounting::Tick() {
  std::lock_guard<std::mutex> lock(sampler_mu_);
  const int64_t now = clock_->NowNs();
  RefreshLocked(now);
  const uint64_t h = static_cast<uint64_t>(options_.history_ticks);
  tick_ns_[ticks_ % h] = now;
  for (auto& [tgid, p] : processes_) p.history[ticks_ % h] = CurrentLocked(p, now);
  finished_history_[ticks_ % h] = finished_total_;
  ++ticks_;
}

ReaderRow ReaderAccounting::RowOf(const Amounts& a) {
  ReaderRow r;
  r.wall_seconds = std::max(0.0, a.alive_ns / 1e9);
  r.stall_seconds = std::max(0.0, a.stall_ns / 1e9);
  r.cpu_seconds = std::max(0.0, a.cpu_ns / 1e9);
  r.runq_seconds = std::max(0.0, a.runq_ns / 1e9);
  r.requests = static_cast<uint64_t>(std::max(0.0, a.requests) + 0.5);
  r.served_bytes = static_cast<uint64_t>(std::max(0.0, a.bytes) + 0.5);
  r.rchar_bytes = static_cast<uint64_t>(std::max(0.0, a.rchar) + 0.5);
  return r;
}

namespace {

bool Active(const ReaderRow& r) {
  return r.requests > 0 || r.stall_seconds > 0 || r.rchar_bytes >= kActiveReadBytes;
}

void AddRow(ReaderRow* into, const ReaderRow& r) {
  into->wall_seconds += r.wall_seconds;
  into->stall_seconds += r.stall_seconds;
  into->cpu_seconds += r.cpu_seconds;
  into->runq_seconds += r.runq_seconds;
  into->requests += r.requests;
  into->served_bytes += r.served_bytes;
  into->rchar_bytes += r.rchar_bytes;
  into->has_rchar = into->has_rchar || r.has_rchar;
  into->processes += r.processes;
  into->threads += r.threads;
}

}  // namespace

ReadersStats ReaderAccounting::Snapshot(double window_seconds, size_t top) {
  std::lock_guard<std::mutex> lock(sampler_mu_);
  const int64_t now = clock_->NowNs();
  RefreshLocked(now);
  const double tick_s = static_cast<double>(options_.tick_ns) / 1e9;
  const double window = std::clamp(window_seconds, tick_s, max_window_seconds());
  const int64_t from = now - static_cast<int64_t>(window * 1e9);

  ReadersStats out;
  out.enabled = true;
  out.window_seconds = window;
  std::vector<ReaderRow> rows;
  std::map<std::string, Amounts> by_command = retired_by_command_;
  for (const auto& [tgid, p] : processes_) {
    const Amounts cur = CurrentLocked(p, now);
    by_command[p.comm] += cur;
    ReaderRow r = RowOf(cur - ValueAtLocked(p, now, from));
    r.kind = ReaderRow::Kind::kProcess;
    r.pid = tgid;
    r.comm = p.comm;
    r.threads = static_cast<uint32_t>(p.tids.size());
    r.processes = 1;
    r.has_rchar = p.has_io;
    if (!r.has_rchar) r.rchar_bytes = 0;
    if (Active(r)) rows.push_back(std::move(r));
    out.tracked_threads += p.tids.size();
  }
  out.tracked_processes = processes_.size();
  std::sort(rows.begin(), rows.end(), [](const ReaderRow& a, const ReaderRow& b) {
    return a.stall_seconds != b.stall_seconds ? a.stall_seconds > b.stall_seconds : a.pid < b.pid;
  });
  ReaderRow others;
  others.kind = ReaderRow::Kind::kOthers;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i < top) {
      rows[i].verdict = ClassifyReader(rows[i].wall_seconds, rows[i].stall_seconds,
                                       rows[i].cpu_seconds, rows[i].runq_seconds);
      out.rows.push_back(rows[i]);
    } else {
      AddRow(&others, rows[i]);
    }
  }
  if (others.processes > 0) {
    others.verdict = ClassifyReader(others.wall_seconds, others.stall_seconds, others.cpu_seconds,
                                    others.runq_seconds);
    out.rows.push_back(others);
  }
  ReaderRow finished = RowOf(finished_total_ - FinishedAtLocked(now, from));
  finished.kind = ReaderRow::Kind::kFinished;
  finished.has_rchar = finished.rchar_bytes > 0;
  finished.processes = static_cast<uint32_t>(
      std::count_if(exits_.begin(), exits_.end(), [&](int64_t t) { return t >= from; }));
  if (Active(finished) || finished.processes > 0) {
    finished.verdict = ClassifyReader(finished.wall_seconds, finished.stall_seconds,
                                      finished.cpu_seconds, finished.runq_seconds);
    out.rows.push_back(finished);
  }
  for (const ReaderRow& r : out.rows) AddRow(&out.total, r);
  out.total.kind = ReaderRow::Kind::kOthers;
  out.verdict = ClassifyReader(out.total.wall_seconds, out.total.stall_seconds,
                               out.total.cpu_seconds, out.total.runq_seconds);
  out.total.verdict = out.verdict;
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> l(s.mu);
    out.untracked_requests += s.untracked;
  }
  for (const auto& [comm, a] : by_command) {
    ReaderCommandTotals t;
    t.comm = comm;
    t.stall_seconds = std::max(0.0, a.stall_ns / 1e9);
    t.cpu_seconds = std::max(0.0, a.cpu_ns / 1e9);
    t.requests = static_cast<uint64_t>(std::max(0.0, a.requests) + 0.5);
    t.served_bytes = static_cast<uint64_t>(std::max(0.0, a.bytes) + 0.5);
    out.by_command.push_back(std::move(t));
  }
  return out;
}

void ReaderAccounting::StartSampler() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> l(thread_mu_);
    while (!stop_) {
      if (thread_cv_.wait_for(l, std::chrono::nanoseconds(options_.tick_ns),
                              [this] { return stop_; })) {
        break;
      }
      l.unlock();
      Tick();
      l.lock();
    }
  });
}

void ReaderAccounting::StopSampler() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  thread_cv_.notify_all();
  if (t.joinable()) t.join();
}

}  // namespace mmfs::fs
