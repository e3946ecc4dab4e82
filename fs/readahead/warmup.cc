#include "fs/readahead/warmup.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fs/names/control_protocol.h"
#include "fs/names/paths.h"

namespace mmfs::fs {

Warmup::Warmup(const format::Dataset& dataset, MissLoader& loader, cache::TierStack& tiers,
               std::string mountpoint, uint64_t max_cached_file_bytes,
               std::function<void()> idle_tick)
    : dataset_(dataset),
      loader_(loader),
      tiers_(tiers),
      mountpoint_(std::move(mountpoint)),
      max_cached_file_bytes_(max_cached_file_bytes),
      idle_tick_(std::move(idle_tick)),
      thread_([this] { Loop(); }) {}

Warmup::~Warmup() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Warmup::HandleLines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    auto c = ParseControlLine(line);
    if (!c.ok()) {
      spdlog::warn("control: {}", c.status().message());
      continue;
    }
    if (c->kind == ControlCommand::Kind::kSync) {
      // Lines are handled in order: every earlier one is queued or done by now.
      std::lock_guard<std::mutex> lock(mu_);
      last_sync_ = c->arg;
      continue;
    }
    cache::CacheTier* tier = nullptr;
    if (c->kind == ControlCommand::Kind::kWarm) {
      // The tiers warm-up fills, by name: the shared tier (the cluster) is filled as a side
      // effect, never on its own.
      tier = tiers_.Find(c->tier);
      if (tier != nullptr && tier->role() == cache::TierRole::kShared) tier = nullptr;
      if (tier == nullptr) {
        spdlog::warn("control: cannot warm tier '{}' (ram, or ssd with --cache-dir)", c->tier);
        continue;
      }
    }
    const char* cmd = c->kind == ControlCommand::Kind::kWarm ? "warm" : "evict";
    auto files = FilesAt(dataset_, mountpoint_, c->arg);
    if (!files.ok()) {
      spdlog::warn("control: {} {}: {}", cmd, c->arg, files.status().message());
      continue;
    }
    if (c->kind == ControlCommand::Kind::kEvict) {
      for (const format::Entry& e : *files) {
        // Every tier of this host (RAM, SSD); the shared one is the other hosts' too.
        for (cache::CacheTier* t : tiers_.cache().tiers()) t->Erase(e.index);
        evicted_.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (const format::Entry& e : *files) {
      requested_.fetch_add(1, std::memory_order_relaxed);
      if (tier->Contains(e.index)) {
        skipped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      queue_.emplace_back(e.index, tier);
    }
    cv_.notify_one();
  }
}

void Warmup::Loop() {
  constexpr size_t kBatch = 256;
  if (idle_tick_) idle_tick_();  // the zero point of the hit-ratio history
  for (;;) {
    std::vector<std::pair<uint64_t, cache::CacheTier*>> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::seconds(10),
                           [&] { return stop_ || !queue_.empty(); })) {
        lock.unlock();
        if (idle_tick_) idle_tick_();
        lock.lock();
      }
      if (stop_) return;
      while (!queue_.empty() && batch.size() < kBatch) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    Load(batch);
  }
}

void Warmup::Load(const std::vector<std::pair<uint64_t, cache::CacheTier*>>& batch) {
  std::vector<format::Entry> entries;
  std::unordered_map<uint64_t, cache::CacheTier*> tier_of;
  for (const auto& [key, tier] : batch) {
    auto e = dataset_.GetEntry(key);
    if (!e.ok() || e->size() > max_cached_file_bytes_) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    entries.push_back(*e);
    tier_of[key] = tier;
  }
  std::vector<std::pair<uint64_t, cache::CacheTier*>> inserted;
  std::unordered_set<uint64_t> loaded;
  loader_.LoadWarm(entries, [&](cache::CacheKey key, cache::Blob blob) {
    cache::CacheTier* tier = tier_of[key];
    // Keep a write-behind tier's queue from overflowing (it would drop the rest).
    if (tier->pending_bytes() > (32ull << 20)) tier->Flush();
    tier->Insert(key, std::move(blob));
    loaded.insert(key);
    inserted.emplace_back(key, tier);
  });
  // A write-behind tier may still fail to store what it admitted (a full disk, a failing write):
  // only what it holds once its writes are done counts as warmed.
  std::unordered_set<cache::CacheTier*> flushed;
  for (const auto& [key, tier] : inserted) {
    if (flushed.insert(tier).second) tier->Flush();
  }
  std::unordered_map<cache::CacheTier*, std::string> problem_of;
  for (cache::CacheTier* tier : flushed) problem_of[tier] = tier->AdmissionProblem();
  for (const auto& [key, tier] : inserted) {
    if (tier->Contains(key)) {
      auto e = dataset_.GetEntry(key);
      // Bytes first, then the file (release): a snapshot that counts the file has its bytes.
      bytes_.fetch_add(e.ok() ? e->size() : 0, std::memory_order_relaxed);
      done_.fetch_add(1, std::memory_order_release);
    } else if (const std::string& why = problem_of[tier]; !why.empty()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        problem_ = why;
      }
      not_stored_.fetch_add(1, std::memory_order_release);
    } else {
      rejected_.fetch_add(1, std::memory_order_relaxed);  // the tier is full
    }
  }
  // Files that could not be read or failed their checksum.
  for (const format::Entry& e : entries) {
    if (loaded.count(e.index) == 0) errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Warmup::Stats(WarmupStats* out) const {
  // The sync token first: HandleLines sets it (under mu_) after counting every line before it, so
  // a reader that sees its token also sees those counts. Read last, a snapshot could pair the
  // token with counts taken while the lines before it were still being handled.
  {
    std::lock_guard<std::mutex> lock(mu_);
    out->last_sync = last_sync_;
  }
  out->requested = requested_.load(std::memory_order_relaxed);
  out->done = done_.load(std::memory_order_acquire);
  out->bytes = bytes_.load(std::memory_order_relaxed);
  out->skipped = skipped_.load(std::memory_order_relaxed);
  out->rejected = rejected_.load(std::memory_order_relaxed);
  out->not_stored = not_stored_.load(std::memory_order_acquire);
  out->errors = errors_.load(std::memory_order_relaxed);
  out->evicted = evicted_.load(std::memory_order_relaxed);
  // After the count (acquire): the reason set before a counted file is seen with it.
  std::lock_guard<std::mutex> lock(mu_);
  out->problem = problem_;
}

}  // namespace mmfs::fs
