#include "fs/readahead/prefetcher.h"

#include <sys/stat.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <unordered_set>

#include "fs/read/neighbour_walk.h"

namespace mmfs::fs {

namespace {
// Samples a hint keeps in flight: about half the prefetch buffer, so that what is loaded ahead
// is not pushed out before its reader arrives.
uint32_t HintWindow(const format::Manifest& m, uint64_t buffer_bytes) {
  uint64_t per_sample = std::max<uint64_t>(1, m.total_bytes / std::max<uint64_t>(1, m.samples));
  return static_cast<uint32_t>(std::clamp<uint64_t>(buffer_bytes / 2 / per_sample, 16, 8192));
}

// Samples issued per hint prefetch job: one cluster multi-get or a run of shard reads each, so
// the cost of a round trip is shared; an eighth of the window keeps the rest in flight.
uint32_t HintBatch(uint32_t window) { return std::clamp<uint32_t>(window / 8, 1, 32); }
}  // namespace

Prefetcher::Prefetcher(const format::Dataset& dataset, ViewFiles& views, cache::TierStack& tiers,
                       MissLoader& loader, PrefetcherOptions options)
    : dataset_(dataset),
      views_(views),
      tiers_(tiers),
      loader_(loader),
      options_(std::move(options)),
      buffer_(options_.buffer_bytes),
      detector_(options_.readahead),
      hint_(dataset.entry_count() * views.tree_count(),
            HintWindow(dataset.manifest(), options_.buffer_bytes),
            HintBatch(HintWindow(dataset.manifest(), options_.buffer_bytes))) {
  if (options_.enabled && options_.threads > 0) {
    workers_ = std::make_unique<cache::PrefetchWorkers>(
        options_.threads, 256, [this](const cache::PrefetchJob& job) { RunJob(job); });
  }
}

Prefetcher::~Prefetcher() { workers_.reset(); }

void Prefetcher::Drain() {
  if (workers_ != nullptr) workers_->Drain();
}

uint64_t Prefetcher::FileLimit() const {
  return std::min<uint64_t>(options_.max_cached_file_bytes, buffer_.budget() / 2);
}

void Prefetcher::SetBudget(uint64_t buffer_bytes, bool push) {
  push_allowed_.store(push, std::memory_order_relaxed);
  buffer_.SetBudget(buffer_bytes);
}

void Prefetcher::PutMember(uint64_t key, cache::Blob blob) {
  if (!tiers_.ram().Contains(key)) {
    buffer_.Put(key, std::move(blob), cache::PrefetchPattern::kSampleMembers);
  }
}

void Prefetcher::OnRead(const TreeFile& f, uint64_t offset, uint64_t stream) {
  PredictAndSubmit(f, stream);
  if (hint_active_.load(std::memory_order_relaxed) && offset == 0) {
    Submit(hint_.OnRead(Position(f)), cache::PrefetchPattern::kHint);
  }
}

void Prefetcher::PredictAndSubmit(const TreeFile& f, uint64_t stream) {
  if (workers_ == nullptr || stream == 0) return;
  const format::Entry& e = f.entry;
  std::vector<int64_t> predicted = detector_.OnRead(stream, e.record.sample);
  if (predicted.empty()) return;
  int64_t stride = predicted.size() >= 2 ? predicted[1] - predicted[0] : 1;
  const int64_t sample = e.record.sample;
  const int64_t lo = predicted.front() < predicted.back() ? predicted.front() : predicted.back();
  const int64_t hi = predicted.front() < predicted.back() ? predicted.back() : predicted.front();
  std::unordered_set<int64_t> wanted(predicted.begin(), predicted.end());
  cache::PrefetchJob job;
  job.pattern = (stride == 1 || stride == -1) ? cache::PrefetchPattern::kSequential
                                              : cache::PrefetchPattern::kStrided;
  // Predicted samples lie next to e in the index: a directory's files are one run of entries
  // in sample order, and the runs of sibling directories (class folders) follow each other in
  // the same order. Walk both ways until past the predicted range; where a deeper layout breaks
  // that order the walk just stops early.
  constexpr size_t kMaxSteps = 4096;
  auto visit = [&](const format::Entry& o, WalkDirection direction) {
    if (!o.is_regular()) return WalkStep::kOn;  // a subdirectory between files
    int64_t s = o.record.sample;
    if (wanted.count(s) > 0) {
      // As a file of the reader's tree: a resized image under its own key; left out: skipped.
      if (auto tf = views_.Resolve(f.tree, o); tf.ok()) job.keys.push_back(tf->key);
    }
    // On through the range and through what lies before it on this side.
    const bool on = (s >= lo && s <= hi) || (direction == WalkDirection::kUp ? s < lo : s > hi);
    return on ? WalkStep::kOn : WalkStep::kStop;
  };
  if (hi > sample) {
    WalkNeighbours(dataset_, e.index, WalkDirection::kUp, kMaxSteps,
                   [&](const format::Entry& o) { return visit(o, WalkDirection::kUp); });
  }
  if (lo < sample) {
    WalkNeighbours(dataset_, e.index, WalkDirection::kDown, kMaxSteps,
                   [&](const format::Entry& o) { return visit(o, WalkDirection::kDown); });
  }
  if (!job.keys.empty()) workers_->Submit(std::move(job));
}

void Prefetcher::Submit(const std::vector<uint64_t>& positions, cache::PrefetchPattern pattern) {
  if (workers_ == nullptr || positions.empty()) return;
  // Jobs of a few dozen samples: big enough to coalesce neighbours into one origin read, small
  // enough that the first of them arrives early.
  constexpr size_t kJobKeys = 64;
  cache::PrefetchJob job;
  job.pattern = pattern;
  const uint64_t entries = dataset_.entry_count();
  for (uint64_t p : positions) {
    auto e = dataset_.GetEntry(p % entries);
    if (!e.ok() || !e->is_regular()) continue;
    for (const TreeFile& m :
         views_.Members(p / entries, loader_.SampleMembers(*e, FileLimit()))) {
      job.keys.push_back(m.key);
    }
    if (job.keys.size() >= kJobKeys) {
      workers_->Submit(std::move(job));
      job = cache::PrefetchJob();
      job.pattern = pattern;
    }
  }
  if (!job.keys.empty()) workers_->Submit(std::move(job));
}

void Prefetcher::RunJob(const cache::PrefetchJob& job) {
  std::vector<uint64_t> candidates;
  for (uint64_t k : job.keys) {
    if (tiers_.ram().Contains(k)) continue;
    // Kept by an extent read (waits for one in flight): moved here, where the push can store
    // it, instead of being read again.
    if (cache::Blob b = loader_.TakeNeighbour(k)) {
      buffer_.Put(k, std::move(b), job.pattern);
      continue;
    }
    // Held on the SSD tier (a remount, the fill): read from there, never from the origin again.
    if (cache::CacheTier* ssd = tiers_.local_disk(); ssd != nullptr && ssd->Contains(k)) {
      if (cache::Blob b = ssd->Lookup(k)) {
        buffer_.Put(k, std::move(b), job.pattern);
        continue;
      }
    }
    candidates.push_back(k);
  }
  std::vector<uint64_t> mine = buffer_.BeginLoad(candidates);
  loader_.LoadAhead(mine, FileLimit(), [&](cache::CacheKey k, cache::Blob blob) {
    buffer_.Put(k, std::move(blob), job.pattern);
  });
  buffer_.EndLoad(mine);
}

void Prefetcher::BeginHint() {
  hint_closed_lines_.store(0, std::memory_order_relaxed);
  hint_.Begin();
}

void Prefetcher::AddHintLines(const std::vector<std::string>& lines) {
  std::vector<uint64_t> keys;
  keys.reserve(lines.size());
  uint64_t unknown = 0, closed = 0;
  for (std::string_view line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    // "@256/train/x.jpg" is a file of view 256's tree.
    auto at = views_.ResolvePath(options_.mountpoint, line);
    if (at.ok() && at->second.is_regular() && views_.Resolve(at->first, at->second).ok()) {
      if (!options_.hint_open_to_all_only || OpenToAll(at->second)) {
        keys.push_back(at->first * dataset_.entry_count() + at->second.index);
        continue;
      }
      ++closed;  // counted as naming no file: the stats are for everyone
    }
    ++unknown;
  }
  if (closed > 0) hint_closed_lines_.fetch_add(closed, std::memory_order_relaxed);
  if (unknown > 0) hint_.CountUnknown(unknown);
  std::vector<uint64_t> due = hint_.Append(keys);
  hint_active_.store(hint_.active(), std::memory_order_relaxed);
  Submit(due, cache::PrefetchPattern::kHint);
}

bool Prefetcher::OpenToAll(const format::Entry& e) const {
  if ((e.record.mode & S_IROTH) == 0) return false;
  // Parents come before their children in the index (breadth-first): a chain that does not
  // go down is damage, and counts as closed.
  uint64_t child = e.index;
  uint64_t parent = e.record.parent;
  while (child != 0) {
    if (parent >= child) return false;
    auto dir = dataset_.GetEntry(parent);
    if (!dir.ok() || !dir->is_dir() || (dir->record.mode & S_IXOTH) == 0) return false;
    child = parent;
    parent = dir->record.parent;
  }
  return true;
}

void Prefetcher::EndHint() {
  cache::HintCounters c = hint_.Counters();
  spdlog::info("prefetch hint: {} files in order, {} lines named no file", c.positions, c.unknown);
  // Only the daemon's log says why: it is the mounting user's, where .mmfs/stats is everyone's.
  if (uint64_t closed = hint_closed_lines_.exchange(0, std::memory_order_relaxed); closed > 0) {
    spdlog::warn("prefetch hint: {} lines named files not every user may read and were left out "
                 "(other users may write the hint file of this shared mount); mount with "
                 "-o hint=owner to let only you write hints and have every line count",
                 closed);
  }
}

bool Prefetcher::MayPush(const TreeFile& f) {
  if (!f.entry.is_regular() || !buffer_.Contains(f.key)) return false;
  if (!push_allowed_.load(std::memory_order_relaxed)) {
    push_skipped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

cache::Blob Prefetcher::Claim(const TreeFile& f, size_t max_bytes, bool wait) {
  if (!f.entry.is_regular() || f.size() == 0 || f.size() > max_bytes ||
      f.size() > options_.max_cached_file_bytes) {
    return nullptr;
  }
  if (!push_allowed_.load(std::memory_order_relaxed)) {
    if (buffer_.Contains(f.key)) push_skipped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return buffer_.Claim(f.key, wait);
}

bool Prefetcher::EndPush(const TreeFile& f, const cache::Blob& claimed, bool stored) {
  if (claimed == nullptr) return false;
  if (!stored) {
    buffer_.ReleaseClaim(f.key);
    return false;
  }
  pushed_files_.fetch_add(1, std::memory_order_relaxed);
  pushed_bytes_.fetch_add(claimed->size(), std::memory_order_relaxed);
  // Out of the buffer (counted used). A READ that raced the push (a reader quicker than a push
  // after LOOKUP) took it already and did all that taking it means.
  return buffer_.Take(f.key) != nullptr;
}

cache::Blob Prefetcher::Push(const TreeFile& f, size_t max_bytes, bool wait,
                             const Store& store) {
  cache::Blob claimed = Claim(f, max_bytes, wait);
  if (claimed == nullptr) return nullptr;
  int rc = store(claimed->data(), claimed->size());
  // ENOENT: the kernel has not made the inode yet (the looking-up task does that when it
  // wakes); the file stays for its reader, which is not a failure.
  if (rc != 0 && rc != -ENOENT) push_failures_.fetch_add(1, std::memory_order_relaxed);
  return EndPush(f, claimed, rc == 0) ? claimed : nullptr;
}

void Prefetcher::Stats(bool hint_available, ReadaheadStats* out) const {
  out->enabled = options_.enabled;
  for (int i = 0; i < static_cast<int>(cache::PrefetchPattern::kCount); ++i) {
    auto pattern = static_cast<cache::PrefetchPattern>(i);
    out->patterns.emplace_back(cache::PrefetchPatternName(pattern), buffer_.Counters(pattern));
  }
  out->runs_detected = detector_.runs_detected();
  out->jobs_dropped = workers_ != nullptr ? workers_->dropped() : 0;
  out->hint_available = hint_available;
  out->hint = hint_.Counters();
  out->pushed.files = pushed_files_.load(std::memory_order_relaxed);
  out->pushed.bytes = pushed_bytes_.load(std::memory_order_relaxed);
  out->pushed.failed = push_failures_.load(std::memory_order_relaxed);
  out->pushed.skipped = push_skipped_.load(std::memory_order_relaxed);
  out->buffer_bytes = buffer_.bytes_held();
  out->buffer_budget = buffer_.budget();
}

}  // namespace mmfs::fs
