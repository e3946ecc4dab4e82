#include "fs/readahead/filler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <system_error>
#include <utility>

#include "base/units.h"
#include "fs/origin/read_deadline.h"

namespace mmfs::fs {

namespace {
using Clock = std::chrono::steady_clock;
// The SSD tier drops what its write queue cannot hold: a worker lets the queue drain first.
constexpr uint64_t kMaxPendingWrites = 24ull << 20;
// Passes over what failed before the fill gives up on it (its readers still read it).
constexpr int kMaxPasses = 3;
}  // namespace

Result<FillMode> ParseFillMode(std::string_view word) {
  if (word == "auto") return FillMode::kAuto;
  if (word == "on") return FillMode::kOn;
  if (word == "off") return FillMode::kOff;
  return Status::InvalidArgument("not a fill mode; the modes are auto, on and off");
}

const char* FillModeName(FillMode mode) {
  switch (mode) {
    case FillMode::kAuto: return "auto";
    case FillMode::kOn: return "on";
    case FillMode::kOff: return "off";
  }
  return "off";
}

Filler::Filler(const format::Dataset& dataset, OriginReader& origin, cache::TierStack& tiers,
               FillOptions options, std::function<uint64_t()> demand_in_flight)
    : dataset_(dataset),
      origin_(origin),
      target_(tiers.ssd() != nullptr ? tiers.ssd() : &tiers.ram()),
      options_(options),
      demand_in_flight_(std::move(demand_in_flight)) {
  if (options_.mode == FillMode::kOff) return;
  if (options_.mode == FillMode::kAuto) {
    const size_t words = static_cast<size_t>((dataset_.entry_count() + 63) / 64);
    seen_ = std::make_unique<std::atomic<uint64_t>[]>(words);
    for (size_t i = 0; i < words; ++i) seen_[i].store(0, std::memory_order_relaxed);
  }
  controller_ = std::thread([this] { Control(); });
  if (options_.mode == FillMode::kOn) Trigger("-o fill=on");
}

Filler::~Filler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  cv_.notify_all();
  if (controller_.joinable()) controller_.join();
}

void Filler::NoteRead(uint64_t entry_index) {
  if (seen_ == nullptr || triggered_.load(std::memory_order_relaxed) ||
      entry_index >= dataset_.entry_count()) {
    return;
  }
  const uint64_t bit = uint64_t{1} << (entry_index % 64);
  const uint64_t before = seen_[entry_index / 64].fetch_or(bit, std::memory_order_relaxed);
  if ((before & bit) != 0) return;
  const uint64_t n = distinct_.fetch_add(1, std::memory_order_relaxed) + 1;
  // A small dataset's epoch is fewer files than the trigger: half of its files will do.
  const uint64_t files = std::max<uint64_t>(1, (dataset_.manifest().files + 1) / 2);
  if (n >= std::min(options_.trigger_files, files)) {
    Trigger(std::to_string(n) + " files read");
  }
}

void Filler::Trigger(const std::string& why) {
  if (options_.mode == FillMode::kOff || triggered_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    trigger_ = why;
  }
  cv_.notify_all();
}

bool Filler::WaitDone(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return state_ == "done" || state_ == "stopped"; }) &&
         state_ == "done";
}

void Filler::PlanLocked() {
  // Everything the fill could fetch, in index order; the share is its start.
  const uint64_t entries = dataset_.entry_count();
  const uint64_t budget = target_->Counters().bytes_budget;
  const double room = static_cast<double>(budget) * options_.share_of_cache;
  uint64_t files = 0, bytes = 0, share_end = entries;
  for (uint64_t i = 0; i < entries; ++i) {
    auto e = dataset_.GetEntry(i);
    if (!e.ok() || !e->is_regular() || e->size() > options_.max_file_bytes) continue;
    if (share_end == entries && static_cast<double>(bytes + e->size()) > room) share_end = i;
    ++files;
    bytes += e->size();
  }
  share_ = share_end < entries;
  end_ = share_end;
  if (!share_) {
    target_files_ = files;
    target_bytes_ = bytes;
  } else {
    target_files_ = target_bytes_ = 0;
    for (uint64_t i = 0; i < share_end; ++i) {
      auto e = dataset_.GetEntry(i);
      if (!e.ok() || !e->is_regular() || e->size() > options_.max_file_bytes) continue;
      ++target_files_;
      target_bytes_ += e->size();
    }
    // The share stays: the other files, read each epoch, are not admitted in its place.
    target_->SetAdmitBelow(share_end);
  }
  planned_ = true;
  spdlog::info("fill: {} ({}), {} {} files, {} into the {} tier{}", trigger_,
               FillModeName(options_.mode), share_ ? "a share of" : "all", target_files_,
               FormatBytes(target_bytes_), target_->name(),
               share_ ? " (the dataset, " + FormatBytes(bytes) + ", does not fit its " +
                            FormatBytes(budget) + ")"
                      : "");
}

Filler::Batch Filler::NextLocked() {
  Batch b;
  uint32_t shard = 0;
  while (cursor_ < end_) {
    auto e = dataset_.GetEntry(cursor_);
    if (!e.ok() || !e->is_regular() || e->size() == 0 || e->size() > options_.max_file_bytes) {
      ++cursor_;
      continue;
    }
    if (target_->Contains(e->index)) {
      // Held already (a remount, a reader's miss): a gap, which ends the run being read.
      present_files_.fetch_add(1, std::memory_order_relaxed);
      present_bytes_.fetch_add(e->size(), std::memory_order_relaxed);
      ++cursor_;
      if (!b.files.empty()) break;
      continue;
    }
    if (!b.files.empty() &&
        (e->record.shard != shard || b.bytes + e->size() > options_.chunk_bytes)) {
      break;
    }
    shard = e->record.shard;
    b.bytes += e->size();
    b.files.push_back(*e);
    ++cursor_;
  }
  return b;
}

bool Filler::MayStartLocked() const {
  if (Clock::now() < resume_at_) return false;
  const uint64_t demand = demand_in_flight_ ? demand_in_flight_() : 0;
  const uint64_t places =
      target_in_flight_ > demand ? target_in_flight_ - demand : uint64_t{1};  // demand first
  if (in_flight_ >= places) return false;
  return in_flight_ == 0 || bytes_in_flight_ + options_.chunk_bytes <= options_.max_bytes_in_flight;
}

void Filler::AdjustLocked(double rate) {
  if (rate <= 0) return;
  const unsigned cap = static_cast<unsigned>(std::max<uint64_t>(
      1, std::min<uint64_t>(options_.max_in_flight,
                            options_.max_bytes_in_flight / std::max<uint64_t>(1, options_.chunk_bytes))));
  if (rate > best_rate_ * 1.1) {
    // Still rising: more in flight, while the link takes it.
    best_rate_ = rate;
    target_in_flight_ = std::min(cap, target_in_flight_ + std::max(1u, target_in_flight_ / 2));
  } else if (rate < best_rate_ * 0.6 && target_in_flight_ > 1) {
    --target_in_flight_;  // well below the best: too many in flight for the store
  }
}

void Filler::Control() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_.load() || triggered_.load(); });
  if (stop_.load()) {
    state_ = "stopped";
    return;
  }
  PlanLocked();
  state_ = "filling";
  started_ = Clock::now();
  target_in_flight_ = std::max(1u, std::min(options_.first_in_flight, options_.max_in_flight));
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < std::max(1u, options_.max_in_flight); ++i) {
    try {
      workers.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // fewer workers: the fill is slower, not wrong
    }
  }
  cv_.notify_all();
  int pass = 1;
  uint64_t failed_at_pass = 0;
  uint64_t last_bytes = fetched_bytes_.load();
  Clock::time_point last = Clock::now();
  while (!stop_.load()) {
    cv_.wait_for(lock, options_.window);
    const Clock::time_point now = Clock::now();
    const uint64_t bytes = fetched_bytes_.load();
    const double seconds = std::chrono::duration<double>(now - last).count();
    if (seconds >= std::chrono::duration<double>(options_.window).count() * 0.9) {
      last_rate_ = static_cast<double>(bytes - last_bytes) / seconds;
      AdjustLocked(last_rate_);
      last_bytes = bytes;
      last = now;
    }
    if (exhausted_ && in_flight_ == 0) {
      // What failed in this pass is tried again from the start (the held files are skipped).
      const uint64_t failed = failed_files_.load();
      if (failed == failed_at_pass || pass >= kMaxPasses) {
        finished_ = true;
        break;
      }
      failed_at_pass = failed;
      ++pass;
      cursor_ = 0;
      exhausted_ = false;
    }
    cv_.notify_all();
  }
  lock.unlock();
  cv_.notify_all();
  for (std::thread& t : workers) t.join();
  target_->Flush();  // done means stored
  lock.lock();
  state_ = stop_.load() ? "stopped" : "done";
  ended_ = Clock::now();
  last_rate_ = 0;
  if (!stop_.load()) {
    spdlog::info("fill: done in {:.1f} s, {} fetched, {} held already, {} files failed",
                 std::chrono::duration<double>(ended_ - started_).count(),
                 FormatBytes(fetched_bytes_.load()), FormatBytes(present_bytes_.load()),
                 failed_files_.load());
  }
  cv_.notify_all();
}

void Filler::Work() {
  // Stopped with the daemon: no READ waits for these requests.
  origin::ScopedReadStop scope(&stop_);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    while (!stop_.load() && !exhausted_ && !MayStartLocked()) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));  // demand and backoff change by time
    }
    if (stop_.load()) return;
    if (exhausted_) {
      // Another pass may follow: wait for the controller to say so, or to end.
      cv_.wait(lock, [&] { return stop_.load() || finished_ || !exhausted_; });
      if (stop_.load() || finished_) return;
      continue;
    }
    Batch b = NextLocked();
    if (b.files.empty()) {
      exhausted_ = true;
      cv_.notify_all();
      continue;
    }
    ++in_flight_;
    bytes_in_flight_ += b.bytes;
    lock.unlock();
    uint64_t found = 0;
    origin_.ReadCoalesced(b.files, ReadCause::kFill,
                          [&](const format::Entry& e, cache::Blob blob) {
                            if (target_->pending_bytes() > kMaxPendingWrites) target_->Flush();
                            target_->Insert(e.index, std::move(blob));
                            ++found;
                            fetched_files_.fetch_add(1, std::memory_order_relaxed);
                            fetched_bytes_.fetch_add(e.size(), std::memory_order_relaxed);
                          });
    lock.lock();
    --in_flight_;
    bytes_in_flight_ -= b.bytes;
    if (found < b.files.size()) {
      failed_files_.fetch_add(b.files.size() - found, std::memory_order_relaxed);
      backoff_ = std::min<std::chrono::milliseconds>(
          std::chrono::seconds(30), backoff_.count() == 0 ? std::chrono::milliseconds(1000)
                                                          : backoff_ * 2);
      resume_at_ = Clock::now() + backoff_;
    } else {
      backoff_ = std::chrono::milliseconds(0);
    }
    cv_.notify_all();
  }
}

FillStats Filler::Stats() const {
  FillStats s;
  s.mode = FillModeName(options_.mode);
  if (options_.mode == FillMode::kOff) return s;
  std::lock_guard<std::mutex> lock(mu_);
  s.state = state_;
  s.trigger = trigger_;
  s.share = share_;
  s.target_files = target_files_;
  s.target_bytes = target_bytes_;
  s.fetched_files = fetched_files_.load(std::memory_order_relaxed);
  s.fetched_bytes = fetched_bytes_.load(std::memory_order_relaxed);
  s.present_files = present_files_.load(std::memory_order_relaxed);
  s.present_bytes = present_bytes_.load(std::memory_order_relaxed);
  s.failed_files = failed_files_.load(std::memory_order_relaxed);
  s.requests = origin_.Counters(ReadCause::kFill).reads;
  s.in_flight = in_flight_;
  s.in_flight_target = target_in_flight_;
  s.bytes_per_second = last_rate_;
  const uint64_t covered = s.fetched_bytes + s.present_bytes;
  if (state_ == "filling" && last_rate_ > 0 && covered < s.target_bytes) {
    s.seconds_left = static_cast<double>(s.target_bytes - covered) / last_rate_;
  }
  if (state_ == "filling") {
    s.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  } else if (state_ == "done" || (state_ == "stopped" && planned_)) {
    s.seconds = std::chrono::duration<double>(ended_ - started_).count();
  }
  return s;
}

}  // namespace mmfs::fs
