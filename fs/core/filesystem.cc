#include "fs/core/filesystem.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cache/ssd_tier.h"
#include "fs/base/file_util.h"
#include "fs/base/json_text.h"
#include "fs/core/stats_format.h"

namespace mmfs::fs {

namespace {
constexpr size_t kMaxSnapshots = 64;

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}
}  // namespace

namespace {
std::vector<cache::CacheTier*> TierList(cache::CacheTier* ram, cache::CacheTier* ssd) {
  std::vector<cache::CacheTier*> tiers = {ram};
  if (ssd != nullptr) tiers.push_back(ssd);
  return tiers;
}

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

Filesystem::Filesystem(std::unique_ptr<format::Dataset> dataset, FilesystemOptions options,
                       std::unique_ptr<cache::CacheTier> ssd_tier,
                       std::unique_ptr<cache::ClusterTier> cluster_tier)
    : dataset_(std::move(dataset)),
      options_(options),
      ram_tier_(options.ram_cache_bytes, dataset_->manifest().files),
      ssd_tier_(std::move(ssd_tier)),
      cluster_tier_(std::move(cluster_tier)),
      // The cluster tier is asked by the loader, a whole sample per request (LoadForRead).
      cache_(TierList(&ram_tier_, ssd_tier_.get())),
      prefetch_(options.prefetch_buffer_bytes),
      read_buffer_(options.read_buffer_bytes),
      ranged_(*dataset_, read_buffer_, options.drop_origin_pages, origin_reads_, origin_bytes_),
      detector_(options.readahead_config),
      hint_(dataset_->entry_count(),
            HintWindow(dataset_->manifest(), options.prefetch_buffer_bytes),
            HintBatch(HintWindow(dataset_->manifest(), options.prefetch_buffer_bytes))),
      ram_what_if_(options.ram_cache_bytes, dataset_->manifest().files,
                   cache::RamTier::kEntryOverhead, cache::WhatIf::kFractions,
                   cache::WhatIf::kMaxKeys, cache::RamTier::kShards) {
  if (ssd_tier_ != nullptr) {
    ssd_what_if_ = std::make_unique<cache::WhatIf>(ssd_tier_->Counters().bytes_budget,
                                                   dataset_->manifest().files,
                                                   cache::SsdTier::kHeaderBytes);
  }
  // One readahead, the one that knows samples and counts its outcomes (see --readahead off).
  dataset_->AdviseRandomAccess();
  if (options_.direct_reads) dataset_->EnableDirectReads();
  warm_thread_ = std::thread([this] { WarmLoop(); });
  if (options_.readahead && options_.prefetch_threads > 0) {
    workers_ = std::make_unique<cache::PrefetchWorkers>(
        options_.prefetch_threads, 256, [this](const cache::PrefetchJob& job) { RunPrefetch(job); });
  }
}

void Filesystem::DrainPrefetch() {
  if (workers_ != nullptr) workers_->Drain();
}

void Filesystem::PredictAndPrefetch(const format::Entry& e, uint64_t stream) {
  if (workers_ == nullptr || stream == 0) return;
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
  constexpr uint64_t kMaxSteps = 4096;
  auto visit = [&](uint64_t index) {
    auto o = dataset_->GetEntry(index);
    if (!o.ok()) return false;
    if (!o->is_regular()) return true;  // a subdirectory between files
    int64_t s = o->record.sample;
    if (wanted.count(s) > 0) job.keys.push_back(o->index);
    return s >= lo && s <= hi ? true : (index > e.index ? s < lo : s > hi);
  };
  if (hi > sample) {
    for (uint64_t i = e.index + 1, n = 0; n < kMaxSteps && visit(i); ++i, ++n) {
    }
  }
  if (lo < sample) {
    for (uint64_t i = e.index, n = 0; i > 0 && n < kMaxSteps && visit(i - 1); --i, ++n) {
    }
  }
  if (!job.keys.empty()) workers_->Submit(std::move(job));
}

void Filesystem::RunPrefetch(const cache::PrefetchJob& job) {
  std::vector<uint64_t> candidates;
  for (uint64_t k : job.keys) {
    if (!ram_tier_.Contains(k)) candidates.push_back(k);
  }
  std::vector<uint64_t> mine = prefetch_.BeginLoad(candidates);
  std::unordered_map<uint64_t, cache::Blob> from_cluster;
  if (cluster_tier_ != nullptr) {
    // One multi-get for the batch; only what the cluster lacks is read from the origin.
    from_cluster = cluster_tier_->LookupMany(mine);
    for (auto& [k, blob] : from_cluster) prefetch_.Put(k, blob, job.pattern);
  }
  std::vector<format::Entry> entries;
  for (uint64_t k : mine) {
    if (from_cluster.count(k) > 0) continue;
    auto e = dataset_->GetEntry(k);
    // A file the buffer cannot hold next to others would push out what waits there, or be
    // dropped on arrival: its reader loads it.
    if (e.ok() && e->is_regular() && e->size() <= PrefetchLimit()) entries.push_back(*e);
  }
  ReadCoalesced(std::move(entries), [&](const format::Entry& e, cache::Blob blob) {
    if (cluster_tier_ != nullptr) cluster_tier_->Insert(e.index, blob);  // fill for other hosts
    prefetch_.Put(e.index, std::move(blob), job.pattern);
  });
  prefetch_.EndLoad(mine);
}

void Filesystem::ReadCoalesced(
    std::vector<format::Entry> entries,
    const std::function<void(const format::Entry&, cache::Blob)>& found) {
  constexpr uint64_t kMaxSpan = 8ull << 20;
  std::sort(entries.begin(), entries.end(), [](const format::Entry& a, const format::Entry& b) {
    return a.record.shard != b.record.shard ? a.record.shard < b.record.shard
                                            : a.record.data_offset < b.record.data_offset;
  });
  // Neighbours in a shard are read together, one large sequential read, gaps included: LMDB
  // puts a node header between small values and pads large ones to whole pages.
  constexpr uint64_t kMaxGap = 64 << 10;
  for (size_t i = 0; i < entries.size();) {
    size_t j = i + 1;
    uint64_t start = entries[i].record.data_offset;
    uint64_t end = start + entries[i].size();
    while (j < entries.size() && entries[j].record.shard == entries[i].record.shard &&
           entries[j].record.data_offset >= end &&
           entries[j].record.data_offset - end <= kMaxGap &&
           entries[j].record.data_offset + entries[j].size() - start <= kMaxSpan) {
      end = entries[j].record.data_offset + entries[j].size();
      ++j;
    }
    const size_t span = end - start;
    auto raw = dataset_->ReadShardSpan(entries[i].record.shard, start, span);
    if (raw.ok()) {
      prefetch_reads_.fetch_add(1, std::memory_order_relaxed);
      prefetch_bytes_.fetch_add(span, std::memory_order_relaxed);
      if (options_.drop_origin_pages) dataset_->NoteOriginRead(entries[i].record.shard, span);
      for (size_t m = i; m < j; ++m) {
        std::string_view bytes(raw->data() + (entries[m].record.data_offset - start),
                               entries[m].size());
        // Damaged files are not loaded ahead; their own reads report them.
        if (XXH3_64bits(bytes.data(), bytes.size()) != entries[m].record.checksum) continue;
        found(entries[m], std::make_shared<const std::string>(bytes));
      }
    }
    i = j;
  }
}

Result<std::vector<format::Entry>> Filesystem::FilesAt(std::string_view path) const {
  MMFS_ASSIGN_OR_RETURN(format::Entry top, ResolvePath(path));
  std::vector<format::Entry> files;
  std::vector<format::Entry> dirs = {top};
  while (!dirs.empty()) {
    format::Entry d = dirs.back();
    dirs.pop_back();
    if (d.is_regular()) {
      files.push_back(d);
      continue;
    }
    if (!d.is_dir()) continue;
    for (uint64_t i = 0; i < d.child_count(); ++i) {
      auto c = dataset_->GetEntry(d.first_child() + i);
      if (c.ok()) dirs.push_back(*c);
    }
  }
  std::sort(files.begin(), files.end(),
            [](const format::Entry& a, const format::Entry& b) { return a.index < b.index; });
  return files;
}

void Filesystem::HandleControlLines(const std::vector<std::string>& lines) {
  for (std::string_view line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t sp = line.find(' ');
    std::string_view cmd = line.substr(0, sp);
    std::string_view arg = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    if (cmd == "sync") {
      std::lock_guard<std::mutex> lock(warm_mu_);
      control_sync_ = std::string(arg);
      continue;
    }
    cache::CacheTier* tier = nullptr;
    if (cmd == "warm") {
      size_t sp2 = arg.find(' ');
      std::string_view which = arg.substr(0, sp2);
      arg = sp2 == std::string_view::npos ? "" : arg.substr(sp2 + 1);
      tier = which == "ram" ? static_cast<cache::CacheTier*>(&ram_tier_)
                            : which == "ssd" ? ssd_tier_.get() : nullptr;
      if (tier == nullptr) {
        spdlog::warn("control: cannot warm tier '{}' (ram, or ssd with --cache-dir)", which);
        continue;
      }
    } else if (cmd != "evict") {
      spdlog::warn("control: unknown command '{}'", cmd);
      continue;
    }
    auto files = FilesAt(arg);
    if (!files.ok()) {
      spdlog::warn("control: {} {}: {}", cmd, arg, files.status().message());
      continue;
    }
    if (cmd == "evict") {
      for (const format::Entry& e : *files) {
        ram_tier_.Erase(e.index);
        if (ssd_tier_ != nullptr) ssd_tier_->Erase(e.index);
        evicted_.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    std::lock_guard<std::mutex> lock(warm_mu_);
    for (const format::Entry& e : *files) {
      warm_requested_.fetch_add(1, std::memory_order_relaxed);
      if (tier->Contains(e.index)) {
        warm_skipped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      warm_queue_.emplace_back(e.index, tier);
    }
    warm_cv_.notify_one();
  }
}

void Filesystem::RecordHistory() {
  HistoryPoint p;
  p.uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - metrics_.start).count();
  for (const cache::CacheTier* tier : cache_.tiers()) {
    cache::TierCounters c = tier->Counters();
    p.tiers.emplace_back(c.hits, c.lookups);
  }
  history_.push_back(std::move(p));
  while (history_.size() > 6 * 360) history_.pop_front();
}

nlohmann::json Filesystem::WhatIfJson() const {
  auto curve = [](const cache::WhatIf& w) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : w.Curve()) {
      points.push_back({{"fraction", p.fraction}, {"bytes", p.bytes}, {"hit_ratio", p.hit_ratio}});
    }
    return nlohmann::json{{"budget", w.budget()},
                          {"sampling_rate", w.sampling_rate()},
                          {"sampled_reads", w.sampled_reads()},
                          {"working_set_bytes", w.WorkingSetBytes()},
                          {"points", points}};
  };
  nlohmann::json j = {{"ram", curve(ram_what_if_)}};
  if (ssd_what_if_ != nullptr) j["ssd"] = curve(*ssd_what_if_);
  nlohmann::json history = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    for (const HistoryPoint& p : history_) {
      nlohmann::json tiers = nlohmann::json::array();
      for (const auto& [hits, lookups] : p.tiers) tiers.push_back({hits, lookups});
      history.push_back({{"uptime", p.uptime}, {"tiers", tiers}});
    }
  }
  j["history"] = history;
  return j;
}

void Filesystem::DrainWarmup() {
  std::unique_lock<std::mutex> lock(warm_mu_);
  warm_idle_cv_.wait(lock, [&] { return warm_queue_.empty() && !warm_busy_; });
}

// Loads queued files in batches of neighbours (index order is pack order), so warm-up reads
// the origin in large sequential reads, and inserts them straight into the chosen tier.
void Filesystem::WarmLoop() {
  constexpr size_t kBatch = 256;
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    RecordHistory();  // the zero point of the hit-ratio history
  }
  for (;;) {
    std::vector<std::pair<uint64_t, cache::CacheTier*>> batch;
    {
      std::unique_lock<std::mutex> lock(warm_mu_);
      warm_busy_ = false;
      if (warm_queue_.empty()) warm_idle_cv_.notify_all();
      // The same thread samples hit ratios every 10 s while idle (for mmfs stats --plot).
      while (!warm_cv_.wait_for(lock, std::chrono::seconds(10),
                                [&] { return warm_stop_ || !warm_queue_.empty(); })) {
        RecordHistory();
      }
      if (warm_stop_) return;
      while (!warm_queue_.empty() && batch.size() < kBatch) {
        batch.push_back(warm_queue_.front());
        warm_queue_.pop_front();
      }
      warm_busy_ = true;
    }
    std::vector<format::Entry> entries;
    std::unordered_map<uint64_t, cache::CacheTier*> tier_of;
    for (const auto& [key, tier] : batch) {
      auto e = dataset_->GetEntry(key);
      if (!e.ok() || e->size() > options_.max_cached_file_bytes) {
        warm_errors_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      entries.push_back(*e);
      tier_of[key] = tier;
    }
    std::unordered_set<uint64_t> loaded;
    ReadCoalesced(entries, [&](const format::Entry& e, cache::Blob blob) {
      cache::CacheTier* tier = tier_of[e.index];
      if (auto* ssd = dynamic_cast<cache::SsdTier*>(tier)) {
        // Keep the SSD tier's write queue from overflowing (it would drop the rest).
        if (ssd->pending_bytes() > (32ull << 20)) ssd->Flush();
      }
      if (cluster_tier_ != nullptr) cluster_tier_->Insert(e.index, blob);
      tier->Insert(e.index, blob);
      loaded.insert(e.index);
      if (tier->Contains(e.index)) {
        warm_done_.fetch_add(1, std::memory_order_relaxed);
        warm_bytes_.fetch_add(e.size(), std::memory_order_relaxed);
      } else {
        warm_rejected_.fetch_add(1, std::memory_order_relaxed);  // the tier is full
      }
    });
    // Files that could not be read or failed their checksum.
    for (const format::Entry& e : entries) {
      if (loaded.count(e.index) == 0) warm_errors_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

Filesystem::~Filesystem() {
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    warm_stop_ = true;
    warm_queue_.clear();
  }
  warm_cv_.notify_all();
  if (warm_thread_.joinable()) warm_thread_.join();
}

Status Filesystem::CountError(const Status& s) {
  uint64_t n = 0;
  if (s.code() == StatusCode::kCorruption) {
    n = metrics_.checksum_failures.fetch_add(1, std::memory_order_relaxed) + 1;
  } else if (s.code() == StatusCode::kIoError) {
    n = metrics_.io_errors.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // One line per failure names the shard and the path; a flood is thinned after 100.
  if (n > 0 && (n <= 100 || n % 1000 == 0)) {
    spdlog::error("{} (the reader gets EIO; failure #{} of this kind)", s.message(), n);
  }
  return s;
}

Attr Filesystem::EntryAttr(const format::Entry& e) const {
  Attr a;
  a.ino = e.index + 1;
  a.mode = e.record.mode;
  a.size = e.is_dir() ? 4096 : e.record.size;
  a.mtime_ns = e.record.mtime_ns;
  // 1 tells find(1) and fts that the subdirectory count is unknown, as on btrfs.
  a.nlink = 1;
  return a;
}

Attr Filesystem::ControlDirAttr() const {
  Attr a;
  a.ino = control_dir_ino();
  a.mode = S_IFDIR | 0555;
  a.size = 4096;
  a.nlink = 2;
  a.is_volatile = true;
  return a;
}

Attr Filesystem::HintAttr() const { return LinkAttr(hint_ino(), options_.hint_target); }

Attr Filesystem::LinkAttr(uint64_t ino, const std::string& target) const {
  Attr a;
  a.ino = ino;
  a.mode = S_IFLNK | 0777;
  a.size = target.size();
  a.is_volatile = true;
  return a;
}

void Filesystem::SetHintTarget(std::string target) { options_.hint_target = std::move(target); }

Result<format::Entry> Filesystem::ResolvePath(std::string_view path) const {
  const std::string& mnt = options_.mountpoint;
  if (!mnt.empty() && path.size() > mnt.size() && path.substr(0, mnt.size()) == mnt &&
      path[mnt.size()] == '/') {
    path.remove_prefix(mnt.size());
  }
  auto cur = dataset_->GetEntry(kRootIno - 1);
  while (cur.ok()) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) return cur;
    size_t slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash);
    if (name == ".") continue;
    if (!cur->is_dir()) return Status::NotFound("not a directory");
    cur = dataset_->LookupChild(*cur, name);
  }
  return cur.status();
}

void Filesystem::BeginHint() { hint_.Begin(); }

void Filesystem::AddHintLines(const std::vector<std::string>& lines) {
  std::vector<uint64_t> keys;
  keys.reserve(lines.size());
  uint64_t unknown = 0;
  for (std::string_view line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto e = ResolvePath(line);
    if (e.ok() && e->is_regular()) {
      keys.push_back(e->index);
    } else {
      ++unknown;
    }
  }
  if (unknown > 0) hint_.CountUnknown(unknown);
  std::vector<uint64_t> due = hint_.Append(keys);
  hint_active_.store(hint_.active(), std::memory_order_relaxed);
  SubmitPrefetch(due, cache::PrefetchPattern::kHint);
}

void Filesystem::EndHint() {
  cache::HintCounters c = hint_.Counters();
  spdlog::info("prefetch hint: {} files in order, {} lines named no file", c.positions, c.unknown);
}

void Filesystem::SubmitPrefetch(const std::vector<uint64_t>& keys, cache::PrefetchPattern pattern) {
  if (workers_ == nullptr || keys.empty()) return;
  // Jobs of a few dozen samples: big enough to coalesce neighbours into one origin read, small
  // enough that the first of them arrives early.
  constexpr size_t kJobKeys = 64;
  cache::PrefetchJob job;
  job.pattern = pattern;
  for (uint64_t k : keys) {
    auto e = dataset_->GetEntry(k);
    if (!e.ok() || !e->is_regular()) continue;
    for (const format::Entry& m : SampleMembers(*e)) job.keys.push_back(m.index);
    if (job.keys.size() >= kJobKeys) {
      workers_->Submit(std::move(job));
      job = cache::PrefetchJob();
      job.pattern = pattern;
    }
  }
  if (!job.keys.empty()) workers_->Submit(std::move(job));
}

Result<format::Entry> Filesystem::EntryForIno(uint64_t ino) const {
  if (ino == 0 || ino > dataset_->entry_count()) return Status::NotFound("no such inode");
  auto e = dataset_->GetEntry(ino - 1);
  if (!e.ok()) return e.status();
  return e;
}

Result<Attr> Filesystem::NewSnapshot(std::string_view name) {
  std::string text = StatsJson();
  if (name == kMetricsFileName) text = PrometheusFromStats(nlohmann::json::parse(text));
  auto blob = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t ino = control_link_ino() + 1 + next_snapshot_++;
  snapshots_[ino] = blob;
  while (snapshots_.size() > kMaxSnapshots) snapshots_.erase(snapshots_.begin());
  Attr a;
  a.ino = ino;
  a.mode = S_IFREG | 0444;
  a.size = blob->size();
  a.is_volatile = true;
  return a;
}

Result<Attr> Filesystem::Lookup(uint64_t parent, std::string_view name) {
  OpTimer timer(metrics_, Op::kLookup);
  if (parent == kRootIno && name == kControlDirName) {
    return HasControlLink() ? LinkAttr(control_link_ino(), options_.control_link_target)
                            : ControlDirAttr();
  }
  if (parent == kRootIno && name == kControlDirDirectName && HasControlLink()) {
    return ControlDirAttr();
  }
  if (parent == control_dir_ino()) {
    if (name == kStatsFileName || name == kMetricsFileName) return NewSnapshot(name);
    if (name == kHintFileName && !options_.hint_target.empty()) return HintAttr();
    if (name == kControlFileName && !options_.control_target.empty()) {
      return LinkAttr(control_ino(), options_.control_target);
    }
    timer.Fail();
    return Status::NotFound(std::string(name));
  }
  auto dir = EntryForIno(parent);
  if (!dir.ok()) {
    timer.Fail();
    return CountError(dir.status());
  }
  if (!dir->is_dir()) {
    timer.Fail();
    return Status::InvalidArgument("not a directory");
  }
  auto child = dataset_->LookupChild(*dir, name);
  if (!child.ok()) {
    timer.Fail();
    if (child.status().code() == StatusCode::kNotFound) return child.status();
    return CountError(child.status());
  }
  return EntryAttr(*child);
}

Result<Attr> Filesystem::GetAttr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kGetattr);
  if (ino == control_dir_ino()) return ControlDirAttr();
  if (ino == control_link_ino() && HasControlLink()) {
    return LinkAttr(control_link_ino(), options_.control_link_target);
  }
  if (ino == hint_ino() && !options_.hint_target.empty()) return HintAttr();
  if (ino == control_ino() && !options_.control_target.empty()) {
    return LinkAttr(control_ino(), options_.control_target);
  }
  if (IsSnapshotIno(ino)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = snapshots_.find(ino);
    if (it == snapshots_.end()) {
      timer.Fail();
      return Status::NotFound("stats snapshot expired");
    }
    Attr a;
    a.ino = ino;
    a.mode = S_IFREG | 0444;
    a.size = it->second->size();
    a.is_volatile = true;
    return a;
  }
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return CountError(e.status());
  }
  return EntryAttr(*e);
}

Status Filesystem::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) {
  OpTimer timer(metrics_, Op::kReaddir);
  // Positions: 1 = ".", 2 = "..", 3 + i = child i.
  Attr self, parent;
  uint64_t first = 0, count = 0;
  bool control = ino == control_dir_ino();
  if (control) {
    self = ControlDirAttr();
    parent.ino = kRootIno;
    parent.mode = S_IFDIR | 0755;
  } else {
    auto dir = EntryForIno(ino);
    if (!dir.ok()) {
      timer.Fail();
      return CountError(dir.status());
    }
    if (!dir->is_dir()) {
      timer.Fail();
      return Status::InvalidArgument("not a directory");
    }
    self = EntryAttr(*dir);
    auto p = dataset_->GetEntry(dir->record.parent);
    parent = p.ok() ? EntryAttr(*p) : self;
    first = dir->first_child();
    count = dir->child_count();
  }
  uint64_t pos = offset;
  if (pos < 1) {
    if (!emit(".", self, 1)) return Status::Ok();
    pos = 1;
  }
  if (pos < 2) {
    if (!emit("..", parent, 2)) return Status::Ok();
    pos = 2;
  }
  std::vector<std::pair<const char*, Attr>> names;  // of the control directory
  if (control) {
    Attr file;
    file.mode = S_IFREG | 0444;
    file.ino = control_link_ino() + 1;  // the kernel looks the name up before using it
    names.emplace_back(kStatsFileName, file);
    names.emplace_back(kMetricsFileName, file);
    if (!options_.hint_target.empty()) names.emplace_back(kHintFileName, HintAttr());
    if (!options_.control_target.empty()) {
      names.emplace_back(kControlFileName, LinkAttr(control_ino(), options_.control_target));
    }
  }
  if (control) count = names.size();
  for (uint64_t i = pos - 2; i < count; ++i) {
    if (control) {
      if (!emit(names[i].first, names[i].second, 3 + i)) return Status::Ok();
      continue;
    }
    auto child = dataset_->GetEntry(first + i);
    if (!child.ok()) {
      timer.Fail();
      return CountError(child.status());
    }
    if (!emit(child->name, EntryAttr(*child), 3 + i)) return Status::Ok();
  }
  return Status::Ok();
}

Status Filesystem::Open(uint64_t ino, int flags) {
  OpTimer timer(metrics_, Op::kOpen);
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)) != 0) {
    timer.Fail();
    return Status::ReadOnly("mmfs mounts are read-only");
  }
  if (ino == control_dir_ino()) return Status::Ok();
  if (IsSnapshotIno(ino)) return Status::Ok();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return CountError(e.status());
  }
  return Status::Ok();
}

std::vector<format::Entry> Filesystem::SampleMembers(const format::Entry& e) const {
  constexpr size_t kMaxMembers = 32;
  // The other members wait in the prefetch buffer: no more of them than it holds.
  const uint64_t kMaxSpan = std::min<uint64_t>(16ull << 20, e.size() + PrefetchLimit());
  std::vector<format::Entry> members = {e};
  if (!options_.readahead) return members;
  auto same_sample = [&](const format::Entry& o) {
    return o.is_regular() && o.record.parent == e.record.parent &&
           o.record.sample == e.record.sample && o.record.shard == e.record.shard;
  };
  // Members are neighbours: names sharing a key sort together within their directory.
  for (uint64_t i = e.index; i > 0 && members.size() < kMaxMembers; --i) {
    auto o = dataset_->GetEntry(i - 1);
    if (!o.ok() || !same_sample(*o)) break;
    members.insert(members.begin(), *o);
  }
  for (uint64_t i = e.index + 1; members.size() < kMaxMembers; ++i) {
    auto o = dataset_->GetEntry(i);
    if (!o.ok() || !same_sample(*o)) break;
    members.push_back(*o);
  }
  // They must be back to back in the shard (the packer writes them so) and not too large.
  for (size_t i = 1; i < members.size(); ++i) {
    if (members[i - 1].record.data_offset + members[i - 1].size() !=
        members[i].record.data_offset) {
      return {e};
    }
  }
  uint64_t span = members.back().record.data_offset + members.back().size() -
                  members.front().record.data_offset;
  if (span > kMaxSpan) return {e};
  return members;
}

Result<cache::Blob> Filesystem::LoadForRead(const format::Entry& e) {
  if (cache::Blob b = prefetch_.Take(e.index)) return b;
  std::vector<format::Entry> members = SampleMembers(e);
  if (cluster_tier_ != nullptr) {
    // One multi-get for the whole sample: k.jpg brings k.txt from the cluster as from a shard.
    std::vector<uint64_t> keys;
    for (const format::Entry& m : members) {
      if (m.index == e.index || !ram_tier_.Contains(m.index)) keys.push_back(m.index);
    }
    cache::Blob wanted;
    for (auto& [key, blob] : cluster_tier_->LookupMany(keys)) {
      if (key == e.index) {
        wanted = std::move(blob);
      } else {
        prefetch_.Put(key, std::move(blob), cache::PrefetchPattern::kSampleMembers);
      }
    }
    if (wanted != nullptr) return wanted;
  }
  return LoadSample(e, members);
}

Result<cache::Blob> Filesystem::LoadSample(const format::Entry& e,
                                           const std::vector<format::Entry>& members) {
  const uint64_t start = members.front().record.data_offset;
  const uint64_t span = members.back().record.data_offset + members.back().size() - start;
  auto raw = dataset_->ReadShardSpan(e.record.shard, start, span);
  if (!raw.ok()) return CountError(raw.status());
  origin_reads_.fetch_add(1, std::memory_order_relaxed);
  origin_bytes_.fetch_add(span, std::memory_order_relaxed);
  cache::Blob wanted;
  for (const format::Entry& m : members) {
    std::string_view bytes(raw->data() + (m.record.data_offset - start), m.size());
    Status intact = dataset_->CheckSum(m, XXH3_64bits(bytes.data(), bytes.size()));
    if (m.index == e.index) {
      if (!intact.ok()) return CountError(intact);
      wanted = std::make_shared<const std::string>(bytes);
      if (cluster_tier_ != nullptr) cluster_tier_->Insert(m.index, wanted);
    } else if (intact.ok()) {
      // A damaged neighbour is not prefetched; its own read reports it.
      auto blob = std::make_shared<const std::string>(bytes);
      if (cluster_tier_ != nullptr) cluster_tier_->Insert(m.index, blob);
      if (!ram_tier_.Contains(m.index)) {
        prefetch_.Put(m.index, std::move(blob), cache::PrefetchPattern::kSampleMembers);
      }
    }
  }
  if (options_.drop_origin_pages) dataset_->NoteOriginRead(e.record.shard, span);
  return wanted;
}

bool Filesystem::LoadsWhole(uint64_t size) const {
  return size <= options_.max_cached_file_bytes &&
         (size <= ram_tier_.MaxEntryBytes() || size <= read_buffer_.budget());
}

uint64_t Filesystem::PrefetchLimit() const {
  return std::min<uint64_t>(options_.max_cached_file_bytes, prefetch_.budget() / 2);
}

Result<ReadData> Filesystem::ReadRegular(const format::Entry& e, uint64_t offset, size_t size,
                                         cache::Blob known) {
  ReadData out;
  if (offset >= e.size() || size == 0) return out;
  size_t len = static_cast<size_t>(std::min<uint64_t>(size, e.size() - offset));
  auto serve = [&](cache::Blob blob, uint64_t base) {
    out.data = blob->data() + (offset - base);
    out.size = len;
    out.owner = std::move(blob);
    return out;
  };
  // Bytes an earlier READ of this file loaded and the RAM tier did not keep.
  if (auto span = read_buffer_.Find(e.index, offset, len)) {
    if (offset == 0) ram_what_if_.Record(e.index, e.size());
    return serve(std::move(span->blob), span->base);
  }
  if (!LoadsWhole(e.size())) {
    if (offset == 0) ram_what_if_.Record(e.index, e.size());
    auto span = ranged_.Read(e, offset, len);
    if (!span.ok()) return CountError(span.status());
    return serve(std::move(span->blob), span->base);
  }
  size_t served_by = 0;
  auto blob = cache_.Get(
      e.index,
      [&]() -> Result<cache::Blob> {
        if (known != nullptr) return known;
        return LoadForRead(e);
      },
      &served_by);
  if (offset == 0) {
    // One read of the file, for the what-if curves.
    ram_what_if_.Record(e.index, e.size());
    if (served_by > 0 && ssd_what_if_ != nullptr) ssd_what_if_->Record(e.index, e.size());
  }
  if (!blob.ok()) return blob.status();
  // More READs of this file will follow: if the RAM tier did not keep it, hold it for them
  // rather than load it again for each (or read it again from the SSD tier).
  if (len < e.size() && !ram_tier_.Contains(e.index)) read_buffer_.Put(e.index, 0, *blob);
  return serve(std::move(blob).value(), 0);
}

Result<ReadData> Filesystem::Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream) {
  OpTimer timer(metrics_, Op::kRead);
  Result<ReadData> result = ReadData{};
  if (IsSnapshotIno(ino)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = snapshots_.find(ino);
    if (it == snapshots_.end()) {
      result = Status::NotFound("stats snapshot expired; open the file again");
    } else {
      ReadData d;
      d.owner = it->second;
      if (offset < d.owner->size()) {
        d.data = d.owner->data() + offset;
        d.size = static_cast<size_t>(std::min<uint64_t>(size, d.owner->size() - offset));
      }
      result = d;
    }
  } else {
    auto e = EntryForIno(ino);
    if (!e.ok()) {
      result = CountError(e.status());
    } else if (!e->is_regular()) {
      result = Status::InvalidArgument("not a regular file");
    } else {
      result = ReadFile(*e, offset, size, stream);
      if (result.ok()) metrics_.bytes_served.fetch_add(result->size, std::memory_order_relaxed);
    }
  }
  if (!result.ok()) timer.Fail();
  return result;
}

Result<ReadData> Filesystem::ReadFile(const format::Entry& e, uint64_t offset, size_t size,
                                      uint64_t stream, cache::Blob known) {
  PredictAndPrefetch(e, stream);
  if (hint_active_.load(std::memory_order_relaxed) && offset == 0) {
    SubmitPrefetch(hint_.OnRead(e.index), cache::PrefetchPattern::kHint);
  }
  return ReadRegular(e, offset, size, std::move(known));
}

Result<ReadData> Filesystem::ClaimPrefetched(uint64_t ino, size_t max_bytes, bool wait) {
  ReadData out;
  if (IsSnapshotIno(ino) || ino > dataset_->entry_count()) return out;
  auto e = EntryForIno(ino);
  if (!e.ok() || !e->is_regular() || e->size() == 0 || e->size() > max_bytes ||
      e->size() > options_.max_cached_file_bytes) {
    return out;
  }
  if (!push_allowed_.load(std::memory_order_relaxed)) {
    if (prefetch_.Contains(e->index)) metrics_.push_skipped.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  out.owner = prefetch_.Claim(e->index, wait);
  if (out.owner == nullptr) return ReadData{};
  out.data = out.owner->data();
  out.size = out.owner->size();
  return out;
}

void Filesystem::EndPush(uint64_t ino, uint64_t stream, cache::Blob claimed, bool stored) {
  auto e = EntryForIno(ino);
  if (!e.ok() || claimed == nullptr) return;
  if (!stored) {
    prefetch_.ReleaseClaim(e->index);
    return;
  }
  metrics_.pushed_files.fetch_add(1, std::memory_order_relaxed);
  metrics_.pushed_bytes.fetch_add(claimed->size(), std::memory_order_relaxed);
  // Out of the buffer (counted used). A READ that raced the push (a reader quicker than a
  // push after LOOKUP) took it already and did all of what follows.
  if (prefetch_.Take(e->index) == nullptr) return;
  (void)ReadFile(*e, 0, e->size(), stream, std::move(claimed));
}

void Filesystem::SetMemoryTargets(const MemoryTargets& t) {
  push_allowed_.store(t.push, std::memory_order_relaxed);
  const bool shrinking = t.ram_cache_bytes < ram_tier_.Counters().bytes_budget ||
                         t.prefetch_bytes < prefetch_.budget() ||
                         t.read_buffer_bytes < read_buffer_.budget();
  ram_tier_.SetBudget(t.ram_cache_bytes);
  prefetch_.SetBudget(t.prefetch_bytes);
  read_buffer_.SetBudget(t.read_buffer_bytes);
  // Freed small blobs stay in the allocator's arenas; hand them back to the kernel.
  if (shrinking) ::malloc_trim(0);
}

Result<std::string> Filesystem::ReadLink(uint64_t ino) {
  OpTimer timer(metrics_, Op::kReadlink);
  if (ino == hint_ino() && !options_.hint_target.empty()) return options_.hint_target;
  if (ino == control_ino() && !options_.control_target.empty()) return options_.control_target;
  if (ino == control_link_ino() && HasControlLink()) return options_.control_link_target;
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return CountError(e.status());
  }
  auto target = dataset_->LinkTarget(*e);
  if (!target.ok()) {
    timer.Fail();
    return target.status();
  }
  return std::string(*target);
}

StatFsInfo Filesystem::StatFs() {
  OpTimer timer(metrics_, Op::kStatfs);
  StatFsInfo info;
  info.blocks = (dataset_->manifest().total_bytes + info.block_size - 1) / info.block_size;
  info.files = dataset_->entry_count();
  return info;
}

Result<std::optional<std::string>> Filesystem::GetXattr(uint64_t ino, std::string_view name) {
  OpTimer timer(metrics_, Op::kGetxattr);
  if (ino > dataset_->entry_count()) return std::optional<std::string>();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return CountError(e.status());
  }
  if (!e->is_regular()) return std::optional<std::string>();
  const format::EntryRecord& r = e->record;
  if (name == "user.mmfs.xxh3") return std::optional<std::string>(HexU64(r.checksum));
  if (name == "user.mmfs.location") {
    return std::optional<std::string>(dataset_->manifest().shards[r.shard].file + "@" +
                                      std::to_string(r.data_offset));
  }
  if (name == "user.mmfs.sample") return std::optional<std::string>(std::to_string(r.sample));
  if (name == "user.mmfs.resident") {
    bool ram = ram_tier_.Contains(e->index);
    bool ssd = ssd_tier_ != nullptr && ssd_tier_->Contains(e->index);
    return std::optional<std::string>(ram && ssd ? "ram,ssd" : ram ? "ram" : ssd ? "ssd" : "none");
  }
  if (name == "user.mmfs.image_size" && r.width > 0) {
    return std::optional<std::string>(std::to_string(r.width) + "x" + std::to_string(r.height));
  }
  return std::optional<std::string>();
}

Result<std::vector<std::string>> Filesystem::ListXattr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kListxattr);
  std::vector<std::string> names;
  if (ino > dataset_->entry_count()) return names;
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return CountError(e.status());
  }
  if (e->is_regular()) {
    names = {"user.mmfs.xxh3", "user.mmfs.location", "user.mmfs.sample", "user.mmfs.resident"};
    if (e->record.width > 0) names.push_back("user.mmfs.image_size");
  }
  return names;
}

void Filesystem::Forget(uint64_t ino) {
  if (!IsSnapshotIno(ino)) return;
  std::lock_guard<std::mutex> lock(mu_);
  snapshots_.erase(ino);
}

Status Filesystem::Ioctl(uint64_t /*ino*/) {
  // The right answer, not a failure: not counted as an error.
  OpTimer timer(metrics_, Op::kIoctl);
  return Status::NotSupported("mmfs files take no ioctls");
}

Status Filesystem::RefuseWrite() {
  OpTimer timer(metrics_, Op::kWrite);
  timer.Fail();
  return Status::ReadOnly("mmfs mounts are read-only");
}

nlohmann::json Filesystem::ClusterJson() const {
  if (cluster_tier_ == nullptr) return {{"enabled", false}};
  cache::ClusterCounters c = cluster_tier_->ClusterStats();
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& h : c.servers) {
    servers.push_back({{"server", h.server},
                       {"up", h.up},
                       {"requests", h.requests},
                       {"errors", h.errors},
                       {"timeouts", h.timeouts}});
  }
  return {{"enabled", true},   {"hits", c.hits},         {"misses", c.misses},
          {"errors", c.errors}, {"timeouts", c.timeouts}, {"damaged", c.damaged},
          {"bytes_in", c.bytes_in}, {"bytes_out", c.bytes_out}, {"writes", c.writes},
          {"dropped", c.dropped}, {"queued_bytes", c.queued_bytes}, {"servers", servers}};
}

std::string Filesystem::StatsJson() const {
  using nlohmann::json;
  const format::Manifest& m = dataset_->manifest();
  json requests = json::object();
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const OpStats& s = metrics_.op(static_cast<Op>(i));
    requests[std::string(OpName(static_cast<Op>(i)))] = {
        {"count", s.count()},
        {"errors", s.errors()},
        {"p50_us", s.PercentileMicros(0.5)},
        {"p99_us", s.PercentileMicros(0.99)}};
  }
  json tiers = json::array();
  std::vector<const cache::CacheTier*> all_tiers(cache_.tiers().begin(), cache_.tiers().end());
  if (cluster_tier_ != nullptr) all_tiers.push_back(cluster_tier_.get());
  for (const cache::CacheTier* tier : all_tiers) {
    cache::TierCounters c = tier->Counters();
    tiers.push_back({{"name", tier->name()},
                     {"lookups", c.lookups},
                     {"hits", c.hits},
                     {"misses", c.misses},
                     {"inserts", c.inserts},
                     {"rejected", c.rejected},
                     {"evictions", c.evictions},
                     {"entries", c.entries},
                     {"bytes_used", c.bytes_used},
                     {"bytes_budget", c.bytes_budget},
                     {"corrupt", c.corrupt},
                     {"write_errors", c.write_errors},
                     {"dropped", c.dropped},
                     {"admission_paused", c.admission_paused}});
  }
  cache::OriginCounters o = cache_.origin_counters();
  cache::ReadBufferCounters rb = read_buffer_.Counters();
  RangedCounters rc = ranged_.Counters();
  cache::HintCounters hc = hint_.Counters();
  std::string sync_token;
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    sync_token = control_sync_;
  }
  json patterns = json::object();
  for (int i = 0; i < static_cast<int>(cache::PrefetchPattern::kCount); ++i) {
    auto pattern = static_cast<cache::PrefetchPattern>(i);
    cache::PrefetchCounters p = prefetch_.Counters(pattern);
    patterns[cache::PrefetchPatternName(pattern)] = {{"issued", p.issued},
                                                     {"used", p.used},
                                                     {"wasted", p.wasted},
                                                     {"late", p.late},
                                                     {"bytes_issued", p.bytes_issued}};
  }
  double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                metrics_.start)
                      .count();
  json j = {
      {"mmfs_stats_version", 1},
      {"dataset",
       {{"path", dataset_->dir()},
        {"files", m.files},
        {"directories", m.directories},
        {"samples", m.samples},
        {"bytes", m.total_bytes},
        {"shards", m.shards.size()}}},
      {"uptime_seconds", uptime},
      {"requests", requests},
      {"bytes_served", metrics_.bytes_served.load(std::memory_order_relaxed)},
      {"cache",
       {{"tiers", tiers},
        {"read_buffer",
         {{"hits", rb.hits},
          {"inserts", rb.inserts},
          {"evictions", rb.evictions},
          {"bytes_held", rb.bytes_held},
          {"bytes_budget", rb.budget}}}}},
      {"origin",
       {{"reads", origin_reads_.load(std::memory_order_relaxed)},
        {"bytes", origin_bytes_.load(std::memory_order_relaxed)},
        {"errors", o.errors},
        {"coalesced", o.coalesced},
        {"streamed",
         {{"verified_files", rc.verified_files},
          {"verify_bytes", rc.verify_bytes},
          {"range_reads", rc.range_reads},
          {"range_bytes", rc.range_bytes}}}}},
      {"readahead",
       {{"enabled", options_.readahead},
        {"patterns", patterns},
        {"runs_detected", detector_.runs_detected()},
        {"reads", prefetch_reads_.load(std::memory_order_relaxed)},
        {"bytes", prefetch_bytes_.load(std::memory_order_relaxed)},
        {"jobs_dropped", workers_ != nullptr ? workers_->dropped() : 0},
        {"hint",
         {{"available", !options_.hint_target.empty()},
          {"orders", hc.orders},
          {"positions", hc.positions},
          {"cursor", hc.cursor},
          {"issued_to", hc.issued_to},
          {"unknown_lines", hc.unknown},
          {"off_order_reads", hc.off_order_reads}}},
        {"pushed",
         {{"files", metrics_.pushed_files.load(std::memory_order_relaxed)},
          {"bytes", metrics_.pushed_bytes.load(std::memory_order_relaxed)},
          {"failed", metrics_.push_failures.load(std::memory_order_relaxed)},
          {"skipped", metrics_.push_skipped.load(std::memory_order_relaxed)}}},
        {"buffer_bytes", prefetch_.bytes_held()},
        {"buffer_budget", prefetch_.budget()}}},
      {"cluster", ClusterJson()},
      {"what_if", WhatIfJson()},
      {"warmup",
       {{"requested", warm_requested_.load(std::memory_order_relaxed)},
        {"done", warm_done_.load(std::memory_order_relaxed)},
        {"bytes", warm_bytes_.load(std::memory_order_relaxed)},
        {"skipped", warm_skipped_.load(std::memory_order_relaxed)},
        {"rejected", warm_rejected_.load(std::memory_order_relaxed)},
        {"errors", warm_errors_.load(std::memory_order_relaxed)},
        {"evicted", evicted_.load(std::memory_order_relaxed)},
        {"last_sync", sync_token}}},
      {"errors",
       {{"checksum", metrics_.checksum_failures.load(std::memory_order_relaxed)},
        {"io", metrics_.io_errors.load(std::memory_order_relaxed)}}},
      {"memory", MemoryStatsJson(ResidentBytes(), governor_.load())},
  };
  return JsonText(j, 2) + "\n";
}

}  // namespace mmfs::fs
