#include "cache/ssd_tier.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "fs/base/file_util.h"

namespace mmfs::cache {

namespace fsys = std::filesystem;

namespace {
constexpr char kEntryMagic[8] = {'M', 'M', 'F', 'S', 'C', 'E', '1', '\0'};
constexpr char kLayoutDir[] = "mmfs-cache-v1";
constexpr auto kPauseAfterError = std::chrono::seconds(30);

struct EntryHeader {
  char magic[8];
  uint64_t key;
  uint64_t length;
  uint64_t checksum;
};
static_assert(sizeof(EntryHeader) == SsdTier::kHeaderBytes);

bool PlainName(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s) {
    if (c == '/' || c == '\0') return false;
  }
  return true;
}
}  // namespace

SsdTier::SsdTier(const SsdTierOptions& options)
    : options_(options),
      root_(options.dir + "/" + kLayoutDir + "/" + options.name_space),
      policy_(options.budget_bytes, options.expected_keys) {}

Result<std::unique_ptr<SsdTier>> SsdTier::Open(const SsdTierOptions& options) {
  if (!PlainName(options.name_space)) {
    return Status::InvalidArgument("bad cache namespace '" + options.name_space + "'");
  }
  std::unique_ptr<SsdTier> tier(new SsdTier(options));
  std::error_code ec;
  fsys::create_directories(tier->root_, ec);
  if (ec) {
    return Status::IoError("cannot create the cache directory " + tier->root_ + ": " +
                           ec.message());
  }
  MMFS_RETURN_IF_ERROR(tier->Scan());
  tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  return tier;
}

SsdTier::~SsdTier() {
  Flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

std::string SsdTier::PathFor(CacheKey key) const {
  char name[48];
  std::snprintf(name, sizeof name, "/%02x/%016llx", static_cast<unsigned>(key & 0xff),
                static_cast<unsigned long long>(key));
  return root_ + name;
}

Status SsdTier::Scan() {
  std::error_code ec;
  for (auto it = fsys::recursive_directory_iterator(root_, ec);
       !ec && it != fsys::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string name = it->path().filename().string();
    uint64_t key = 0;
    uint64_t size = it->file_size(ec);
    bool ok = !ec && name.size() == 16 && ParseHexU64(name, &key) && size >= kHeaderBytes &&
              it->path() == fsys::path(PathFor(key));
    // Leftover temporaries, foreign files and entries beyond the budget go.
    if (!ok || !policy_.Restore(key, size)) fsys::remove(it->path(), ec);
  }
  for (int i = 0; i < 256; ++i) {
    char sub[8];
    std::snprintf(sub, sizeof sub, "/%02x", i);
    fsys::create_directories(root_ + sub, ec);
    if (ec) return Status::IoError("cannot create " + root_ + sub + ": " + ec.message());
  }
  return Status::Ok();
}

Blob SsdTier::Lookup(CacheKey key) {
  lookups_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!policy_.Access(key)) return nullptr;
    if (auto it = pending_.find(key); it != pending_.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second;
    }
  }
  std::string path = PathFor(key);
  auto fd = OpenFile(path, O_RDONLY);
  EntryHeader h;
  bool good = fd.ok() && PreadFull(fd->get(), &h, sizeof h, 0, path).ok() &&
              std::memcmp(h.magic, kEntryMagic, sizeof h.magic) == 0 && h.key == key;
  struct stat st;
  good = good && ::fstat(fd->get(), &st) == 0 &&
         static_cast<uint64_t>(st.st_size) == kHeaderBytes + h.length;
  auto payload = std::make_shared<std::string>();
  if (good) {
    payload->resize(h.length);
    good = PreadFull(fd->get(), payload->data(), h.length, kHeaderBytes, path).ok() &&
           XXH3_64bits(payload->data(), payload->size()) == h.checksum;
  }
  if (!good) {
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    Forget(key);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  return payload;
}

bool SsdTier::Contains(CacheKey key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_.Contains(key);
}

void SsdTier::Erase(CacheKey key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!policy_.Contains(key)) return;
  policy_.Remove(key);
  if (auto it = pending_.find(key); it != pending_.end()) {
    pending_bytes_ -= it->second->size();
    pending_.erase(it);
  }
  queue_.push_back({key, nullptr});  // the writer deletes the file, after any queued write of it
  cv_.notify_one();
}

void SsdTier::Forget(CacheKey key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    policy_.Remove(key);
  }
  ::unlink(PathFor(key).c_str());
}

void SsdTier::Insert(CacheKey key, Blob blob) {
  if (blob == nullptr) return;
  std::vector<uint64_t> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (disk_full_ && now >= next_space_check_) {
      next_space_check_ = now + kPauseAfterError;
      disk_full_ = !DiskHasRoom();
    }
    if (disk_full_ || now < paused_until_) return;
    if (policy_.Contains(key)) return;
    if (pending_bytes_ + blob->size() > options_.max_pending_bytes) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (!policy_.Admit(key, blob->size() + kHeaderBytes, &evicted)) return;
    for (uint64_t k : evicted) {
      // An entry evicted before its write ran still counts against the queue bound until here.
      if (auto it = pending_.find(k); it != pending_.end()) {
        pending_bytes_ -= it->second->size();
        pending_.erase(it);
      }
      queue_.push_back({k, nullptr});
    }
    pending_bytes_ += blob->size();
    pending_.emplace(key, blob);
    queue_.push_back({key, std::move(blob)});
    inserts_.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
}

uint64_t SsdTier::MaxEntryBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t budget = policy_.budget() > kHeaderBytes ? policy_.budget() - kHeaderBytes : 0;
  return std::min<uint64_t>(budget, options_.max_pending_bytes);
}

bool SsdTier::DiskHasRoom() {
  struct statvfs vfs;
  if (::statvfs(root_.c_str(), &vfs) != 0 || vfs.f_blocks == 0) return false;
  double free = static_cast<double>(vfs.f_bavail) / static_cast<double>(vfs.f_blocks);
  return free >= options_.min_free_fraction;
}

Status SsdTier::WriteEntry(CacheKey key, const std::string& payload) {
  std::string path = PathFor(key);
  std::string tmp = path + ".tmp";
  EntryHeader h;
  std::memcpy(h.magic, kEntryMagic, sizeof h.magic);
  h.key = key;
  h.length = payload.size();
  h.checksum = XXH3_64bits(payload.data(), payload.size());
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  Status s = WriteFull(fd.get(), &h, sizeof h, tmp);
  if (s.ok()) s = WriteFull(fd.get(), payload.data(), payload.size(), tmp);
  fd.Reset();
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = Status::FromErrno(errno, "rename " + tmp);
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

void SsdTier::WriterLoop() {
  uint64_t writes = 0;
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      op = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
    }
    Status s;
    if (op.blob == nullptr) {
      ::unlink(PathFor(op.key).c_str());
    } else if (writes++ % 64 == 0 && !DiskHasRoom()) {
      s = Status::ResourceExhausted("cache disk below its free-space guard");
    } else {
      s = WriteEntry(op.key, *op.blob);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (op.blob != nullptr) {
        if (pending_.erase(op.key) > 0) pending_bytes_ -= op.blob->size();
        if (!s.ok()) {
          policy_.Remove(op.key);
          if (s.code() == StatusCode::kResourceExhausted) {
            disk_full_ = true;  // Insert re-checks the free space now and then
            next_space_check_ = std::chrono::steady_clock::now() + kPauseAfterError;
          } else {
            write_errors_.fetch_add(1, std::memory_order_relaxed);
            paused_until_ = std::chrono::steady_clock::now() + kPauseAfterError;
          }
        }
      }
      writing_ = false;
    }
    cv_.notify_all();
  }
}

void SsdTier::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

uint64_t SsdTier::pending_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_bytes_;
}

TierCounters SsdTier::Counters() const {
  TierCounters c;
  c.lookups = lookups_.load(std::memory_order_relaxed);
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = c.lookups - c.hits;
  c.inserts = inserts_.load(std::memory_order_relaxed);
  c.corrupt = corrupt_.load(std::memory_order_relaxed);
  c.write_errors = write_errors_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  c.bytes_budget = policy_.budget();
  c.bytes_used = policy_.bytes_used();
  c.entries = policy_.entries();
  c.evictions = policy_.evictions();
  c.rejected = policy_.rejected();
  c.admission_paused = disk_full_ || std::chrono::steady_clock::now() < paused_until_;
  return c;
}

}  // namespace mmfs::cache
