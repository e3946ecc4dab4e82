#include "fs/readahead/filler.h"

#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <algorithm>
#include <optional>
#include <system_error>
#include <utility>

#include "base/units.h"
#include "cache/ram_tier.h"
#include "fs/origin/read_deadline.h"

namespace mmfs::fs {

namespace {
using FillClock = std::chrono::steady_clock;
// Passes over what failed before the fill gives up on it (its readers still read it).
constexpr int kMaxPasses = 3;
// Reads that found nothing, one after the other, before the fill stops.
constexpr int kMaxFailuresInARow = 8;
// The most of the cluster's capacity a dataset may take for the fill to put all of it there
// (other datasets, memcached's own overheads and its slab classes take the rest).
constexpr double kClusterShareOfCapacity = 0.75;
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
      target_(tiers.local_disk() != nullptr ? tiers.local_disk() : &tiers.ram()),
      ram_(&tiers.ram()),
      cluster_(tiers.cluster()),
      options_(options),
      demand_in_flight_(std::move(demand_in_flight)) {
  if (options_.mode == FillMode::kOff) return;
  if (cluster_ != nullptr) {
    FillShareOptions share;
    share.self = options_.cluster_self;
    share.peer_wait = options_.peer_wait;
    hosts_ = std::make_unique<FillShare>(*cluster_, share);
  }
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
  if (options_.mode == FillMode::kOff || triggered_.load()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (triggered_.exchange(true)) return;
    trigger_ = why;
  }
  cv_.notify_all();
}

bool Filler::WaitDone(std::chrono::milliseconds timeout) {
  if (options_.mode == FillMode::kOff) return false;
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return state_ == "done" || state_ == "stopped" ||
                                                   state_ == "failed"; }) &&
         state_ == "done";
}

bool Filler::Fetchable(const format::Entry& e) const {
  return e.is_regular() && e.size() > 0 && e.size() <= options_.max_file_bytes &&
         e.size() <= target_->MaxEntryBytes();
}

void Filler::Plan() {
  // Everything the fill could fetch, in index order; the share is its start. Done before the
  // trigger (it reads the index only), so that a share's bound holds from the mount on.
  const uint64_t entries = dataset_.entry_count();
  const uint64_t budget = target_->Counters().bytes_budget;
  const double room = static_cast<double>(budget) * options_.share_of_cache;
  uint64_t files = 0, bytes = 0, share_end = entries, share_files = 0, share_bytes = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    auto e = dataset_.GetEntry(i);
    if (!e.ok() || !Fetchable(*e)) continue;
    if (share_end == entries && static_cast<double>(bytes + e->size()) > room) {
      share_end = i;
      share_files = files;
      share_bytes = bytes;
    }
    ++files;
    bytes += e->size();
  }
  const bool share = share_end < entries;
  if (share) {
    // The share stays: the other files, read each epoch, are not admitted in its place, and
    // those held from before (an earlier mount) make room for it now.
    target_->SetAdmitBelow(share_end);
    for (uint64_t i = share_end; i < entries; ++i) {
      if (target_->Contains(i)) target_->Erase(i);
    }
  }
  uint64_t cluster_end = share_end;
  if (hosts_ != nullptr && share) {
    // The rest goes to the cluster when its servers can hold the whole dataset with room to
    // spare: the job then reads each byte from the store once, and no host's readers read the
    // rest sample by sample. A cluster that cannot would only evict what the job reads next.
    const std::optional<uint64_t> capacity = cluster_->CapacityBytes();
    if (capacity && static_cast<double>(bytes) <=
                        static_cast<double>(*capacity) * kClusterShareOfCapacity) {
      cluster_end = entries;
    }
  }
  if (hosts_ != nullptr) {
    hosts_->Plan(dataset_, share_end, cluster_end, options_.chunk_bytes,
                 [this](const format::Entry& e) { return Fetchable(e); });
  }
  std::lock_guard<std::mutex> lock(mu_);
  cluster_rest_ = cluster_end > share_end;
  share_ = share;
  end_ = share_end;
  target_files_ = share ? share_files : files;
  target_bytes_ = share ? share_bytes : bytes;
  dataset_bytes_ = bytes;
  budget_ = budget;
}

Filler::Batch Filler::NextLocked() {
  Batch b;
  uint32_t shard = 0;
  uint64_t first = 0;
  while (cursor_ < end_) {
    auto e = dataset_.GetEntry(cursor_);
    if (!e.ok() || !Fetchable(*e)) {
      ++cursor_;
      continue;
    }
    if (target_->Contains(e->index)) {
      // Held already (a remount, a reader's miss, an earlier pass): a gap, which ends the run.
      if (pass_ == 1) {
        present_files_.fetch_add(1, std::memory_order_relaxed);
        present_bytes_.fetch_add(e->size(), std::memory_order_relaxed);
      }
      ++cursor_;
      if (!b.files.empty()) break;
      continue;
    }
    // One request: one shard, its span (LMDB's pages between the files included) within a
    // chunk, as OriginReader::ReadCoalesced reads it.
    const uint64_t end = e->record.data_offset + e->size();
    if (!b.files.empty() && (e->record.shard != shard || e->record.data_offset < first ||
                             end - first > options_.chunk_bytes)) {
      break;
    }
    if (b.files.empty()) {
      shard = e->record.shard;
      first = e->record.data_offset;
    }
    b.bytes += e->size();
    b.files.push_back(*e);
    ++cursor_;
  }
  return b;
}

bool Filler::MayStartLocked() const {
  if (FillClock::now() < resume_at_) return false;
  const uint64_t demand = demand_in_flight_ ? demand_in_flight_() : 0;
  const uint64_t places =
      climb_.target() > demand ? climb_.target() - demand : uint64_t{1};  // demand first
  if (in_flight_ >= places) return false;
  return in_flight_ == 0 || bytes_in_flight_ + options_.chunk_bytes <= options_.max_bytes_in_flight;
}

unsigned Filler::MaxInFlight() const {
  return static_cast<unsigned>(std::max<uint64_t>(
      1, std::min<uint64_t>(options_.max_in_flight,
                            options_.max_bytes_in_flight /
                                std::max<uint64_t>(1, options_.chunk_bytes))));
}

void Filler::StoreRequestsLocked(int delta) {
  const auto now = FillClock::now();
  if (offered_since_ != FillClock::time_point()) {
    offered_seconds_ +=
        store_in_flight_ * std::chrono::duration<double>(now - offered_since_).count();
  }
  offered_since_ = now;
  store_in_flight_ = static_cast<unsigned>(static_cast<int>(store_in_flight_) + delta);
}

void Filler::Control() {
  Plan();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_.load() || triggered_.load(); });
  if (stop_.load()) {
    state_ = "stopped";
    cv_.notify_all();
    return;
  }
  state_ = "filling";
  started_ = FillClock::now();
  {
    // What the RAM tier has free now, with a margin for the readers' own misses.
    const cache::TierCounters ram = ram_->Counters();
    std::lock_guard<std::mutex> store_lock(store_mu_);
    ram_room_ = ram.bytes_budget * 9 / 10 > ram.bytes_used ? ram.bytes_budget * 9 / 10 - ram.bytes_used : 0;
  }
  spdlog::info("fill: {} ({}), {} {} files, {} into the {} tier{}", trigger_,
               FillModeName(options_.mode), share_ ? "a share of" : "all", target_files_,
               FormatBytes(target_bytes_), target_->name(),
               share_ ? " (the dataset, " + FormatBytes(dataset_bytes_) + ", does not fit its " +
                            FormatBytes(budget_) + ")" +
                            (cluster_rest_ ? "; the rest, with the job's hosts, into the cluster"
                                           : "")
                      : "");
  climb_ = InFlightClimb(options_.first_in_flight, MaxInFlight());
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < MaxInFlight(); ++i) {
    try {
      workers.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // fewer workers: the fill is slower, not wrong
    }
  }
  cv_.notify_all();
  uint64_t failed_at_pass = 0;
  // The link's throughput: every byte read from the origin, the readers' own included (a
  // demand miss that takes one of the fill's places still fills the link).
  const auto origin_bytes = [&] {
    uint64_t n = 0;
    for (ReadCause c : {ReadCause::kDemand, ReadCause::kPrefetch, ReadCause::kWarmup,
                        ReadCause::kFill}) {
      n += origin_.Counters(c).bytes;
    }
    return n;
  };
  uint64_t last_bytes = origin_bytes(), last_done = batches_done_;
  FillClock::time_point last = FillClock::now();
  StoreRequestsLocked(0);
  double last_offered = offered_seconds_;
  while (!stop_.load()) {
    cv_.wait_for(lock, options_.window);
    const FillClock::time_point now = FillClock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    // A window counts once it saw a read end: on a slow link one request outlasts a window.
    if (seconds >= std::chrono::duration<double>(options_.window).count() * 0.9 &&
        batches_done_ > last_done) {
      const uint64_t bytes = origin_bytes();
      last_rate_ = static_cast<double>(bytes - last_bytes) / seconds;
      StoreRequestsLocked(0);
      // The readers' misses in flight fill the link too (they take the fill's places).
      const double offered = (offered_seconds_ - last_offered) / seconds +
                             static_cast<double>(demand_in_flight_ ? demand_in_flight_() : 0);
      last_offered = offered_seconds_;
      climb_.Window(last_rate_, offered);
      last_bytes = bytes;
      last_done = batches_done_;
      last = now;
    }
    if (failing_) break;
    if (exhausted_ && in_flight_ == 0) {
      // What failed in this pass is tried again from the start (the held files are skipped).
      const uint64_t failed = failed_files_.load();
      if (failed == failed_at_pass || pass_ >= kMaxPasses) break;
      failed_at_pass = failed;
      ++pass_;
      cursor_ = 0;
      if (hosts_ != nullptr) {
        hosts_->Replan([this](const std::vector<format::Entry>& files) {
          return std::any_of(files.begin(), files.end(),
                             [&](const format::Entry& e) { return !target_->Contains(e.index); });
        });
      }
      exhausted_ = false;
    }
    cv_.notify_all();
  }
  finished_ = true;
  lock.unlock();
  cv_.notify_all();
  for (std::thread& t : workers) t.join();
  target_->Flush();  // done means stored
  lock.lock();
  state_ = stop_.load() ? "stopped" : failing_ ? "failed" : "done";
  ended_ = FillClock::now();
  last_rate_ = 0;
  if (!stop_.load()) {
    spdlog::info("fill: {} in {:.1f} s, {} fetched, {} held already, {} files failed, {} not "
                 "stored{}",
                 state_, std::chrono::duration<double>(ended_ - started_).count(),
                 FormatBytes(fetched_bytes_.load()), FormatBytes(present_bytes_.load()),
                 failed_files_.load(), not_stored_files_.load(),
                 failing_ ? " (the store failed every read for a while: its readers read it)"
                          : "");
  }
  cv_.notify_all();
}

void Filler::Store(const format::Entry& e, cache::Blob blob) {
  std::lock_guard<std::mutex> lock(store_mu_);
  // While the RAM tier has room it takes a copy too: the epoch's reads are then served from
  // memory, not read back from the SSD tier (a file opened, read and checked each). Never in
  // place of anything it holds.
  if (ram_ != target_ && ram_room_ >= e.size() + cache::RamTier::kEntryOverhead) {
    ram_room_ -= e.size() + cache::RamTier::kEntryOverhead;
    ram_->Insert(e.index, blob);
  }
  // The SSD tier drops what its write queue cannot hold: the queue drains first.
  if (target_->pending_bytes() + e.size() > target_->MaxEntryBytes() / 2) target_->Flush();
  target_->Insert(e.index, std::move(blob));
  if (target_->Contains(e.index)) {
    fetched_files_.fetch_add(1, std::memory_order_relaxed);
    fetched_bytes_.fetch_add(e.size(), std::memory_order_relaxed);
  } else {
    not_stored_files_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool Filler::WaitForPlaceLocked(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    while (!stop_.load() && !finished_ && !exhausted_ && !MayStartLocked()) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));  // demand and backoff change by time
    }
    if (stop_.load() || finished_) return false;
    if (exhausted_) {
      // Another pass may follow: wait for the controller to say so, or to end.
      cv_.wait(lock, [&] { return stop_.load() || finished_ || !exhausted_; });
      continue;
    }
    if (const std::string problem = target_->AdmissionProblem(); !problem.empty()) {
      // The tier stores nothing now (a full or failing disk): nothing is fetched for it.
      resume_at_ = FillClock::now() + std::chrono::seconds(5);
      continue;
    }
    return true;
  }
}

void Filler::Work() {
  // Stopped with the daemon: no READ waits for these requests.
  origin::ScopedReadStop scope(&stop_);
  std::unique_lock<std::mutex> lock(mu_);
  if (hosts_ != nullptr) {
    WorkShared(lock);
    return;
  }
  while (WaitForPlaceLocked(lock)) {
    Batch b = NextLocked();
    if (b.files.empty()) {
      exhausted_ = true;
      cv_.notify_all();
      continue;
    }
    ++in_flight_;
    bytes_in_flight_ += b.bytes;
    StoreRequestsLocked(+1);
    lock.unlock();
    uint64_t found = 0;
    origin_.ReadCoalesced(b.files, ReadCause::kFill,
                          [&](const format::Entry& e, cache::Blob blob) {
                            ++found;
                            Store(e, std::move(blob));
                          });
    lock.lock();
    --in_flight_;
    bytes_in_flight_ -= b.bytes;
    StoreRequestsLocked(-1);
    ++batches_done_;
    NoteReadLocked(found, b.files.size());
    cv_.notify_all();
  }
}

void Filler::NoteReadLocked(uint64_t found, uint64_t wanted) {
  if (found < wanted) {
    failed_files_.fetch_add(wanted - found, std::memory_order_relaxed);
    backoff_ = std::min<std::chrono::milliseconds>(
        std::chrono::seconds(30), backoff_.count() == 0 ? std::chrono::milliseconds(1000)
                                                        : backoff_ * 2);
    resume_at_ = FillClock::now() + backoff_;
    // A store that fails every read for a while: its readers read what they need from it,
    // and the fill stops rather than crawl through the dataset one backoff at a time.
    if (found == 0 && ++failures_in_a_row_ >= kMaxFailuresInARow) failing_ = true;
  } else {
    backoff_ = std::chrono::milliseconds(0);
    failures_in_a_row_ = 0;
  }
}

uint64_t Filler::FetchFromStore(const std::vector<format::Entry>& files, bool cluster_only) {
  // Runs of neighbours: a file held already between two others splits them, unless it is
  // small enough that reading over it costs less than a second request.
  constexpr uint64_t kMaxGap = 64 << 10;
  uint64_t found = 0;
  size_t begin = 0;
  while (begin < files.size()) {
    size_t end = begin + 1;
    while (end < files.size()) {
      const format::Entry& prev = files[end - 1];
      const format::Entry& next = files[end];
      const uint64_t prev_end = prev.record.data_offset + prev.size();
      if (next.record.shard != prev.record.shard || next.record.data_offset < prev_end ||
          next.record.data_offset - prev_end > kMaxGap) {
        break;
      }
      ++end;
    }
    const std::vector<format::Entry> run(files.begin() + static_cast<std::ptrdiff_t>(begin),
                                         files.begin() + static_cast<std::ptrdiff_t>(end));
    {
      std::lock_guard<std::mutex> lock(mu_);
      StoreRequestsLocked(+1);
    }
    origin_.ReadCoalesced(run, ReadCause::kFill, [&](const format::Entry& e, cache::Blob blob) {
      ++found;
      // The other hosts read it from the cluster: written before the chunk is marked done. A
      // cluster-only file the cluster fails to take (a server down or slow) is not fetched
      // again for it: a whole chunk would be read again for a few files, and with a server
      // lost, every chunk; the readers that want such a file read it alone from the store.
      if (cluster_ != nullptr) cluster_->InsertNow(e.index, blob);
      if (!cluster_only) Store(e, std::move(blob));
    });
    {
      std::lock_guard<std::mutex> lock(mu_);
      StoreRequestsLocked(-1);
    }
    begin = end;
  }
  return found;
}

void Filler::WorkShared(std::unique_lock<std::mutex>& lock) {
  const auto held = [this](const format::Entry& e) { return target_->Contains(e.index); };
  while (WaitForPlaceLocked(lock)) {
    // A place in flight is taken before the task: a chunk read from the store is one request.
    ++in_flight_;
    bytes_in_flight_ += options_.chunk_bytes;
    lock.unlock();
    FillShare::Task task = hosts_->Next(held);
    uint64_t found = 0, wanted = 0;
    if (task.kind == FillShare::Kind::kStore) {
      wanted = task.files.size();
      found = FetchFromStore(task.files, task.cluster_only);
      // The chunk's files this host held already go to the cluster too: the chunk is then
      // whole there when it is marked done.
      for (const format::Entry& e : task.held) {
        if (cache::Blob b = target_->Lookup(e.index)) cluster_->InsertNow(e.index, b);
      }
      hosts_->Fetched(task.chunk, found == wanted);
    } else if (task.kind == FillShare::Kind::kPeers) {
      std::vector<cache::CacheKey> keys;
      for (const format::Entry& e : task.files) keys.push_back(e.index);
      auto got = cluster_->LookupMany(keys);
      std::vector<format::Entry> missing;
      uint64_t bytes = 0;
      for (const format::Entry& e : task.files) {
        auto it = got.find(e.index);
        // Checked against the index as a store read is: a memcached server takes anyone's writes.
        if (it == got.end() || it->second == nullptr || it->second->size() != e.size() ||
            XXH3_64bits(it->second->data(), it->second->size()) != e.record.checksum) {
          missing.push_back(e);
          continue;
        }
        bytes += e.size();
        Store(e, std::move(it->second));
      }
      if (hosts_->AfterPeers(task.chunk, task.files.size() - missing.size(), bytes,
                             missing.size())) {
        wanted = missing.size();
        found = FetchFromStore(missing, /*cluster_only=*/false);
        hosts_->Fetched(task.chunk, found == wanted);
      }
    }
    lock.lock();
    --in_flight_;
    bytes_in_flight_ -= options_.chunk_bytes;
    if (task.kind == FillShare::Kind::kWait) {
      // Chunks wait for other hosts: ask again when the first is due. No notify: the other
      // waiting workers have nothing new to see.
      cv_.wait_until(lock, task.due, [&] { return stop_.load() || finished_; });
      continue;
    }
    if (task.kind == FillShare::Kind::kNone) {
      exhausted_ = true;
    } else if (wanted > 0) {
      // Only reads of the store count for the hill-climb's windows: reads from the cluster
      // move no store bytes.
      ++batches_done_;
      NoteReadLocked(found, wanted);
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
  s.not_stored_files = not_stored_files_.load(std::memory_order_relaxed);
  s.requests = origin_.Counters(ReadCause::kFill).reads;
  if (hosts_ != nullptr) {
    s.shared = true;
    s.hosts = hosts_->Stats();
    s.present_files += s.hosts.present_files;
    s.present_bytes += s.hosts.present_bytes;
  }
  s.in_flight = in_flight_;
  s.in_flight_target = started_ != FillClock::time_point() ? climb_.target() : 0;
  s.bytes_per_second = last_rate_;
  const uint64_t covered = s.fetched_bytes + s.present_bytes;
  if (state_ == "filling" && last_rate_ > 0 && covered < s.target_bytes) {
    s.seconds_left = static_cast<double>(s.target_bytes - covered) / last_rate_;
  }
  if (state_ == "filling") {
    s.seconds = std::chrono::duration<double>(FillClock::now() - started_).count();
  } else if (state_ == "done" || state_ == "failed" ||
             (state_ == "stopped" && started_ != FillClock::time_point())) {
    s.seconds = std::chrono::duration<double>(ended_ - started_).count();
  }
  return s;
}

}  // namespace mmfs::fs
