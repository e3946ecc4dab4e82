#include "fs/readahead/fill_share.h"

#include <algorithm>
#include <utility>

namespace mmfs::fs {

namespace {
using ShareClock = std::chrono::steady_clock;
// A done mark stays until evicted. memcached keeps an LRU per slab class, so a mark may outlive
// its chunk's values (or go first): either only sends files to the store again.
constexpr std::chrono::seconds kDoneTtl{0};
// How often a cluster-only chunk another host holds is looked at: no reader of this host waits
// for it through the fill (a reader's miss waits on its own, PeerFetches), so seldom.
constexpr std::chrono::seconds kClusterOnlyRecheck{1};
uint64_t Index(uint64_t entry) { return entry; }
uint64_t Index(const format::Entry& e) { return e.index; }
}  // namespace

FillShare::FillShare(cache::ClusterTier& cluster, FillShareOptions options)
    : cluster_(cluster), options_(std::move(options)) {}

std::string FillShare::ChunkName(size_t chunk) const {
  // By the entries it spans and the chunk size: hosts that cut the dataset differently (another
  // fill_chunk, a smaller tier's share, a file one of them cannot hold) never take each other's
  // chunks for their own.
  const std::vector<format::Entry>& files = chunks_[chunk];
  return "fill-" + std::to_string(chunk_bytes_) + "/" + std::to_string(files.front().index) +
         "-" + std::to_string(files.back().index);
}

std::string FillShare::ClaimName(size_t chunk) const { return ChunkName(chunk) + "/claim"; }

std::string FillShare::DoneName(size_t chunk) const { return ChunkName(chunk) + "/done"; }

void FillShare::Plan(const format::Dataset& dataset, uint64_t keep_end, uint64_t end,
                     uint64_t chunk_bytes,
                     const std::function<bool(const format::Entry&)>& fetchable) {
  std::vector<std::vector<format::Entry>> chunks;
  std::vector<format::Entry> run;
  uint64_t first = 0;
  for (uint64_t i = 0; i < end; ++i) {
    auto e = dataset.GetEntry(i);
    if (!e.ok() || !fetchable(*e)) continue;
    const uint64_t last = e->record.data_offset + e->size();
    if (!run.empty() && (e->record.shard != run.front().record.shard ||
                         e->record.data_offset < first || last - first > chunk_bytes ||
                         (run.front().index < keep_end) != (i < keep_end))) {
      chunks.push_back(std::move(run));
      run.clear();
    }
    if (run.empty()) first = e->record.data_offset;
    run.push_back(*e);
  }
  if (!run.empty()) chunks.push_back(std::move(run));

  std::lock_guard<std::mutex> lock(mu_);
  chunks_ = std::move(chunks);
  chunk_bytes_ = chunk_bytes;
  own_.assign(chunks_.size(), false);
  cluster_only_.assign(chunks_.size(), false);
  settled_.assign(chunks_.size(), false);
  stats_.cluster_only_chunks = 0;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    cluster_only_[c] = chunks_[c].front().index >= keep_end;
    if (cluster_only_[c]) ++stats_.cluster_only_chunks;
  }
  mine_.assign(chunks_.size(), false);
  counted_.assign(chunks_.size(), false);
  rechecked_.assign(chunks_.size(), false);
  no_wait_until_.assign(chunks_.size(), ShareClock::time_point());
  waited_since_.assign(chunks_.size(), ShareClock::time_point());
  stats_.chunks = chunks_.size();
  stats_.own_chunks = 0;
  order_.clear();
  // This host's own chunks first, in index order; then the others from the far end, those of
  // its share before the cluster-only ones (its tier needs the first; the second only spare
  // another host's work).
  std::vector<size_t> others, others_cluster_only;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    own_[c] = !options_.self.empty() && cluster_.ServerOfMark(ClaimName(c)) == options_.self;
    if (own_[c]) {
      order_.push_back(c);
      ++stats_.own_chunks;
    } else {
      (cluster_only_[c] ? others_cluster_only : others).push_back(c);
    }
  }
  order_.insert(order_.end(), others.rbegin(), others.rend());
  order_.insert(order_.end(), others_cluster_only.rbegin(), others_cluster_only.rend());
}

void FillShare::WaitLocked(size_t chunk, std::chrono::steady_clock::time_point next) {
  auto at = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const Waiting& w) { return w.next > next; });
  waiting_.insert(at, Waiting{chunk, next});
}

void FillShare::Replan(const std::function<bool(const std::vector<format::Entry>&)>& missing) {
  std::lock_guard<std::mutex> lock(mu_);
  order_.clear();
  waiting_.clear();
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (cluster_only_[c] ? !settled_[c] : missing(chunks_[c])) order_.push_back(c);
  }
}

std::optional<FillShare::Task> FillShare::NextClusterOnlyLocked(size_t c,
                                                               std::unique_lock<std::mutex>& lock) {
  if (settled_[c]) return std::nullopt;
  ++outstanding_;
  lock.unlock();
  const auto claim = cluster_.AddMark(ClaimName(c), options_.claim_ttl);
  const bool done = cluster_.HasMark(DoneName(c)).value_or(false);
  if (claim == cache::ClusterTier::MarkResult::kAdded && done) cluster_.DeleteMark(ClaimName(c));
  lock.lock();
  --outstanding_;
  if (done) {  // in the cluster already: nothing for this host to do
    settled_[c] = true;
    return std::nullopt;
  }
  if (claim == cache::ClusterTier::MarkResult::kExists) {
    // Another host is fetching it. Looked at again later: done then, or its claim lapsed (the
    // host is gone) and this host takes it.
    WaitLocked(c, ShareClock::now() + kClusterOnlyRecheck);
    return std::nullopt;
  }
  // Won, or the claim's server did not answer (the files' servers may still): this host's.
  ++outstanding_;
  mine_[c] = claim == cache::ClusterTier::MarkResult::kAdded;
  Task task;
  task.kind = Kind::kStore;
  task.chunk = c;
  task.files = chunks_[c];
  task.cluster_only = true;
  return task;
}

FillShare::Task FillShare::Next(const std::function<bool(const format::Entry&)>& held) {
  Task task;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const ShareClock::time_point now = ShareClock::now();
    if (!order_.empty()) {
      const size_t c = order_.front();
      order_.pop_front();
      if (cluster_only_[c]) {
        if (auto t = NextClusterOnlyLocked(c, lock)) return std::move(*t);
        continue;
      }
      std::vector<format::Entry> held_files;
      for (const format::Entry& e : chunks_[c]) {
        (held(e) ? held_files : task.files).push_back(e);
      }
      if (!counted_[c]) {  // the first look at a chunk: what the tier held already
        counted_[c] = true;
        stats_.present_files += held_files.size();
        for (const format::Entry& e : held_files) stats_.present_bytes += e.size();
      }
      if (task.files.empty()) continue;  // held already (a remount, the readers' misses)
      ++outstanding_;
      lock.unlock();
      auto claim = cluster_.AddMark(ClaimName(c), options_.claim_ttl);
      // A claim won on a chunk that is done already (a host that joins the job late, a second
      // job on the same servers): the cluster has it.
      const bool done = claim == cache::ClusterTier::MarkResult::kAdded &&
                        cluster_.HasMark(DoneName(c)).value_or(false);
      lock.lock();
      task.chunk = c;
      if (done) {
        mine_[c] = true;
        waited_since_[c] = now;
        task.kind = Kind::kPeers;
        return task;
      }
      if (claim == cache::ClusterTier::MarkResult::kExists) {
        // Another host has it, or had it and is done: read from the cluster once it is.
        --outstanding_;
        waited_since_[c] = now;
        WaitLocked(c, now);
        task.files.clear();
        continue;
      }
      // Won, or the server did not answer (the chunk is then this host's to fetch). The files
      // the tier held already go to the cluster too, so that the chunk is whole there when it
      // is marked done.
      mine_[c] = claim == cache::ClusterTier::MarkResult::kAdded;
      task.held = std::move(held_files);
      task.kind = Kind::kStore;
      return task;
    }
    if (!waiting_.empty()) {
      // The chunk due first (they are queued in due order: each is put back `peer_retry` on).
      if (waiting_.front().next > now) {
        task.kind = Kind::kWait;
        task.due = waiting_.front().next;
        return task;
      }
      Waiting w = waiting_.front();
      waiting_.pop_front();
      if (cluster_only_[w.chunk]) {
        if (auto t = NextClusterOnlyLocked(w.chunk, lock)) return std::move(*t);
        continue;
      }
      for (const format::Entry& e : chunks_[w.chunk]) {
        if (!held(e)) task.files.push_back(e);
      }
      if (task.files.empty()) continue;
      ++outstanding_;
      task.kind = Kind::kPeers;
      task.chunk = w.chunk;
      return task;
    }
    // Tasks under way may put chunks back to wait: ask again shortly.
    task.kind = outstanding_ > 0 ? Kind::kWait : Kind::kNone;
    task.due = now + options_.peer_retry;
    return task;
  }
}

void FillShare::Fetched(size_t chunk, bool complete) {
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (chunk >= chunks_.size()) return;
    --outstanding_;
    mine = mine_[chunk];
    mine_[chunk] = false;
    if (complete && mine) ++stats_.claimed_chunks;
    if (complete && cluster_only_[chunk]) {
      settled_[chunk] = true;
      ++stats_.cluster_only_fetched_chunks;
      for (const format::Entry& e : chunks_[chunk]) stats_.cluster_only_fetched_bytes += e.size();
    }
  }
  // Done: the claim goes (a host that comes later wins it, sees the done mark and reads the
  // cluster). Not done: the claim goes too, for another pass or host to take.
  if (complete) cluster_.SetMark(DoneName(chunk), kDoneTtl);
  if (mine) cluster_.DeleteMark(ClaimName(chunk));
}

bool FillShare::AfterPeers(size_t chunk, uint64_t files, uint64_t bytes, uint64_t missing) {
  ShareClock::time_point since;
  bool release = false, held_claim = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (chunk >= chunks_.size()) return false;
    since = waited_since_[chunk];
    held_claim = mine_[chunk];
    stats_.peer_files += files;
    stats_.peer_bytes += bytes;
    if (missing == 0) {
      ++stats_.peer_chunks;
      --outstanding_;
      release = mine_[chunk];
      mine_[chunk] = false;
    }
  }
  if (missing == 0) {
    if (release) cluster_.DeleteMark(ClaimName(chunk));
    return false;
  }
  if (held_claim) return true;  // this host's claim on a done chunk: the rest from the store
  // Files are missing: done (then lost), taken over (a lapsed claim), or waited out: the store.
  bool fetch = cluster_.HasMark(DoneName(chunk)).value_or(true);
  bool taken = false, done_meanwhile = false;
  if (fetch) {
    // Done, with files missing: its holder may have marked it done after this host's read of
    // the cluster. Read the cluster once more before the store.
    std::lock_guard<std::mutex> lock(mu_);
    if (!rechecked_[chunk]) {
      rechecked_[chunk] = true;
      fetch = false;
      done_meanwhile = true;
    }
  } else {
    const auto claim = cluster_.AddMark(ClaimName(chunk), options_.claim_ttl);
    taken = claim == cache::ClusterTier::MarkResult::kAdded;
    fetch = claim != cache::ClusterTier::MarkResult::kExists;
    // Its holder may have marked it done and let the claim go between the look at the done
    // mark and this claim: then the cluster has it now, and the store is not asked again.
    if (taken && cluster_.HasMark(DoneName(chunk)).value_or(false)) {
      cluster_.DeleteMark(ClaimName(chunk));
      taken = fetch = false;
      done_meanwhile = true;
    }
  }
  const bool waited_out =
      !fetch && !done_meanwhile && ShareClock::now() - since >= options_.peer_wait;
  std::lock_guard<std::mutex> lock(mu_);
  if (fetch || waited_out) {
    mine_[chunk] = taken;
    if (taken || waited_out) ++stats_.waited_out_chunks;
    return true;
  }
  // Still being fetched by its holder: look again later, keeping the due order (at once when
  // it was done meanwhile).
  --outstanding_;
  WaitLocked(chunk, ShareClock::now() +
                        (done_meanwhile ? ShareClock::duration::zero() : options_.peer_retry));
  return false;
}

size_t FillShare::ChunkOfLocked(uint64_t entry) const {
  // The chunks are in index order: the last whose first file is at or before `entry`.
  auto after = std::upper_bound(
      chunks_.begin(), chunks_.end(), entry,
      [](uint64_t e, const std::vector<format::Entry>& chunk) { return e < chunk.front().index; });
  if (after == chunks_.begin()) return chunks_.size();
  const size_t c = static_cast<size_t>(after - chunks_.begin()) - 1;
  const std::vector<format::Entry>& files = chunks_[c];
  if (entry > files.back().index ||
      !std::binary_search(files.begin(), files.end(), entry,
                          [](const auto& a, const auto& b) { return Index(a) < Index(b); })) {
    return chunks_.size();  // past the chunk, or between two of its files: one not fetched
  }
  return c;
}

bool FillShare::FetchingElsewhere(uint64_t entry) {
  std::string claim, done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t c = ChunkOfLocked(entry);
    if (c == chunks_.size() || mine_[c] || ShareClock::now() < no_wait_until_[c]) return false;
    claim = ClaimName(c);
    done = DoneName(c);
  }
  // A claim without a done mark: its holder is reading it (a done chunk keeps its claim only
  // for the moment between the two marks).
  return cluster_.HasMark(claim).value_or(false) && !cluster_.HasMark(done).value_or(true);
}

void FillShare::WaitedOut(uint64_t entry) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t c = ChunkOfLocked(entry);
  if (c < chunks_.size()) no_wait_until_[c] = ShareClock::now() + options_.claim_ttl;
}

void FillShare::CountDemandWait(bool served) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(served ? stats_.demand_waits_served : stats_.demand_waits);
}

std::vector<std::string> FillShare::ClaimNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (size_t c = 0; c < chunks_.size(); ++c) names.push_back(ClaimName(c));
  return names;
}

FillHostsStats FillShare::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace mmfs::fs
