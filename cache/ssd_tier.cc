#include "cache/ssd_tier.h"

#include <algorithm>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "cache/cache_dir.h"

namespace mmfs::cache {

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
      disk_(options_.disk != nullptr ? *options_.disk : SsdDisk::Real()),
      root_(options.dir + "/" + kLayoutDir + "/" + options.name_space),
      policy_(options.budget_bytes, options.expected_keys) {}

Result<std::unique_ptr<SsdTier>> SsdTier::Open(const SsdTierOptions& options) {
  if (!PlainName(options.name_space)) {
    return Status::InvalidArgument("bad cache namespace '" + options.name_space + "'");
  }
  std::unique_ptr<SsdTier> tier(new SsdTier(options));
  MMFS_ASSIGN_OR_RETURN(UniqueFd top, OpenCacheRootDir(options.dir));
  std::string layout = options.dir + "/" + kLayoutDir;
  MMFS_ASSIGN_OR_RETURN(UniqueFd mid, OpenOwnSubdir(top.get(), kLayoutDir, layout));
  MMFS_ASSIGN_OR_RETURN(tier->dir_fd_, OpenOwnSubdir(mid.get(), options.name_space, tier->root_));
  // Held until the tier closes: Scan deletes leftover KEY.tmp files and evicts beyond the budget,
  // which must never hit the files of another mount still writing there.
  MMFS_RETURN_IF_ERROR(LockCacheDir(tier->dir_fd_.get(), tier->root_));
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

std::string SsdTier::RelPath(CacheKey key) const {
  char name[48];
  std::snprintf(name, sizeof name, "%02x/%016llx", static_cast<unsigned>(key & 0xff),
                static_cast<unsigned long long>(key));
  return name;
}

std::string SsdTier::PathFor(CacheKey key) const { return root_ + "/" + RelPath(key); }

Status SsdTier::Scan() {
  struct Found {
    CacheKey key;
    uint64_t size;
  };
  std::vector<Found> found;
  std::vector<std::string> ours;  // folder names we verified
  std::string example;            // one foreign name, for the log
  uint64_t held = 0;
  for (int i = 0; i < 256; ++i) {
    char sub[4];
    std::snprintf(sub, sizeof sub, "%02x", i);
    ours.emplace_back(sub);
    MMFS_ASSIGN_OR_RETURN(UniqueFd dfd, OpenOwnSubdir(dir_fd_.get(), sub, root_ + "/" + sub));
    int list_fd = ::dup(dfd.get());
    DIR* d = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
    if (d == nullptr) {
      if (list_fd >= 0) ::close(list_fd);
      return Status::FromErrno(errno, "cannot list " + root_ + "/" + sub);
    }
    while (struct dirent* de = ::readdir(d)) {
      std::string name = de->d_name;
      if (name == "." || name == "..") continue;
      struct stat st;
      if (::fstatat(dfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      uint64_t key = 0;
      // Exactly the name the tier gives KEY (lower-case hex), in KEY's folder.
      bool key_name = name.size() >= 16 && ParseHexU64(name.substr(0, 16), &key) &&
                      HexU64(key) == name.substr(0, 16) && (key & 0xff) == static_cast<uint64_t>(i);
      if (S_ISREG(st.st_mode) && key_name && name.size() == 16 &&
          static_cast<uint64_t>(st.st_size) >= kHeaderBytes) {
        found.push_back({key, static_cast<uint64_t>(st.st_size)});
        held += static_cast<uint64_t>(st.st_size);
      } else if (S_ISREG(st.st_mode) && key_name && name.size() == 16) {
        ::unlinkat(dfd.get(), name.c_str(), 0);  // ours, too short to hold a header
      } else if (S_ISREG(st.st_mode) && key_name && name.substr(16) == ".tmp") {
        ::unlinkat(dfd.get(), name.c_str(), 0);  // a write that never finished
      } else {
        ++foreign_files_;
        if (example.empty()) example = root_ + "/" + sub + "/" + name;
      }
    }
    ::closedir(d);
  }
  // Names in NAMESPACE itself other than the 256 folders.
  int list_fd = ::dup(dir_fd_.get());
  if (DIR* d = list_fd < 0 ? nullptr : ::fdopendir(list_fd)) {
    while (struct dirent* de = ::readdir(d)) {
      std::string name = de->d_name;
      if (name == "." || name == ".." || std::find(ours.begin(), ours.end(), name) != ours.end()) {
        continue;
      }
      ++foreign_files_;
      if (example.empty()) example = root_ + "/" + name;
    }
    ::closedir(d);
  } else if (list_fd >= 0) {
    ::close(list_fd);
  }
  if (foreign_files_ > 0) {
    spdlog::warn("SSD cache: left {} file(s) in {} that mmfs did not create (e.g. {}); they are "
                 "not cache entries and mmfs never deletes what it did not make",
                 foreign_files_, root_, example);
  }
  if (options_.budget_bytes == 0) {
    // The tier's own files count as space it has: a remount does not shrink a warmed cache.
    uint64_t budget = 1ull << 30;
    struct statvfs vfs;
    if (disk_.StatVfs(dir_fd_.get(), &vfs) == 0) {
      uint64_t available = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
      budget = std::min<uint64_t>((available + held) / 2, 1ull << 40);
    }
    std::vector<uint64_t> none;
    policy_.SetBudget(budget, &none);
  }
  for (const Found& f : found) {
    // Entries beyond the budget go (ours: named by our scheme in a folder we verified).
    if (!policy_.Restore(f.key, f.size)) ::unlinkat(dir_fd_.get(), RelPath(f.key).c_str(), 0);
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
  std::string rel = RelPath(key);
  int raw = ::openat(dir_fd_.get(), rel.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) {
    // Evicted (or re-queued) since the policy said yes, or deleted by hand: a miss, not damage.
    const int err = errno;
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = pending_.find(key); it != pending_.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second;
    }
    // Still listed with no file behind it: the file was lost; stop claiming it.
    if (err == ENOENT && policy_.Contains(key)) DropLocked(key);
    return nullptr;
  }
  UniqueFd fd(raw);
  // A failed read is counted, not reported: the name in its Status is never shown.
  const std::string& path = rel;
  // A read the disk failed (EIO) and an entry found damaged are told apart: the first says the
  // disk is failing, the second that a file was changed or torn.
  EntryHeader h;
  bool read_failed = !disk_.Read(fd.get(), &h, sizeof h, 0, path).ok();
  bool good = !read_failed && std::memcmp(h.magic, kEntryMagic, sizeof h.magic) == 0 &&
              h.key == key;
  struct stat st;
  if (good && ::fstat(fd.get(), &st) != 0) read_failed = true;
  good = good && !read_failed && static_cast<uint64_t>(st.st_size) == kHeaderBytes + h.length;
  auto payload = std::make_shared<std::string>();
  if (good) {
    payload->resize(h.length);
    read_failed = !disk_.Read(fd.get(), payload->data(), h.length, kHeaderBytes, path).ok();
    good = !read_failed && XXH3_64bits(payload->data(), payload->size()) == h.checksum;
  }
  if (!good) {
    (read_failed ? read_errors_ : corrupt_).fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    if (policy_.Contains(key) && pending_.count(key) == 0) DropLocked(key);
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
  if (policy_.Contains(key)) DropLocked(key);
}

void SsdTier::DropLocked(CacheKey key) {
  policy_.Remove(key);
  if (auto it = pending_.find(key); it != pending_.end()) {
    pending_bytes_ -= it->second->size();
    pending_.erase(it);
  }
  queue_.push_back({key, nullptr});  // the writer deletes the file, after any queued write of it
  cv_.notify_one();
}

void SsdTier::Insert(CacheKey key, Blob blob) {
  if (blob == nullptr) return;
  if (!AdmittedBelow(key, admit_below_.load(std::memory_order_relaxed))) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::vector<uint64_t> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (disk_full_ && now >= next_space_check_) {
      next_space_check_ = now + kPauseAfterError;
      disk_full_ = !CheckRoom(0).ok();
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

Status SsdTier::CheckRoom(uint64_t bytes) const {
  struct statvfs vfs;
  if (disk_.StatVfs(dir_fd_.get(), &vfs) != 0) return Status::FromErrno(errno, "statvfs " + root_);
  if (vfs.f_blocks == 0) return Status::Ok();  // a filesystem that does not say
  double total = static_cast<double>(vfs.f_blocks) * static_cast<double>(vfs.f_frsize);
  double free = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
  // Whole blocks: a small entry still takes one.
  double need = static_cast<double>((bytes + vfs.f_frsize - 1) / vfs.f_frsize * vfs.f_frsize);
  if (free - need >= options_.min_free_fraction * total) return Status::Ok();
  char msg[64];
  std::snprintf(msg, sizeof msg, "%.1f%% free, the guard keeps %.1f%%", 100.0 * free / total,
                100.0 * options_.min_free_fraction);
  return Status::ResourceExhausted("the cache disk of " + root_ + " is at its free-space guard (" +
                                   msg + ")");
}

Status SsdTier::WriteEntry(CacheKey key, const std::string& payload) {
  std::string rel = RelPath(key);
  std::string tmp = rel + ".tmp";
  std::string shown = root_ + "/" + tmp;
  EntryHeader h;
  std::memcpy(h.magic, kEntryMagic, sizeof h.magic);
  h.key = key;
  h.length = payload.size();
  h.checksum = XXH3_64bits(payload.data(), payload.size());
  // 0600: cached bytes are the daemon's alone, whatever the source files' modes were.
  int raw = ::openat(dir_fd_.get(), tmp.c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (raw < 0) return Status::FromErrno(errno, "cannot write " + shown);
  UniqueFd fd(raw);
  Status s = disk_.Write(fd.get(), &h, sizeof h, shown);
  if (s.ok()) s = disk_.Write(fd.get(), payload.data(), payload.size(), shown);
  fd.Reset();
  if (s.ok() && ::renameat(dir_fd_.get(), tmp.c_str(), dir_fd_.get(), rel.c_str()) != 0) {
    s = Status::FromErrno(errno, "rename " + shown);
  }
  if (!s.ok()) ::unlinkat(dir_fd_.get(), tmp.c_str(), 0);
  return s;
}

std::string SsdTier::Describe(const Status& s) const {
  // Removed: no links left to the folder we hold, or its path leads elsewhere (or nowhere).
  struct stat held, now;
  bool removed = ::fstat(dir_fd_.get(), &held) == 0 &&
                 (held.st_nlink == 0 || ::lstat(root_.c_str(), &now) != 0 ||
                  now.st_ino != held.st_ino || now.st_dev != held.st_dev);
  if (removed) return "the cache directory " + root_ + " was removed (" + s.message() + ")";
  return s.message();
}

void SsdTier::WriterLoop() {
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
      ::unlinkat(dir_fd_.get(), RelPath(op.key).c_str(), 0);
    } else {
      if (options_.before_write) options_.before_write();
      // Before every write: a guard checked now and then lets a burst of writes fill the disk.
      s = CheckRoom(op.blob->size() + kHeaderBytes);
      if (s.ok()) s = WriteEntry(op.key, *op.blob);
    }
    std::string why = s.ok() ? "" : Describe(s);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (op.blob != nullptr) {
        if (pending_.erase(op.key) > 0) pending_bytes_ -= op.blob->size();
        if (s.ok()) {
          // A smaller entry queued behind one the guard refused may still fit; admission stays
          // stopped (disk_full_) and the guard stays the reason until Insert finds room again.
          if (!disk_full_) problem_.clear();
        } else {
          // Not stored: the policy must not claim it (warm-up and --check count on this).
          policy_.Remove(op.key);
          if (problem_.empty()) spdlog::warn("SSD cache: {}; not admitting for a while", why);
          problem_ = why;
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

std::string SsdTier::AdmissionProblem() const {
  std::lock_guard<std::mutex> lock(mu_);
  return problem_;
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
  c.read_errors = read_errors_.load(std::memory_order_relaxed);
  c.write_errors = write_errors_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  c.bytes_budget = policy_.budget();
  c.bytes_used = policy_.bytes_used();
  c.entries = policy_.entries();
  c.evictions = policy_.evictions();
  c.rejected = policy_.rejected() + refused_.load(std::memory_order_relaxed);
  c.admission_paused = disk_full_ || std::chrono::steady_clock::now() < paused_until_;
  c.problem = problem_;
  return c;
}

}  // namespace mmfs::cache
