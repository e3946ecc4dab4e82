#include "fs/format/dataset.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/file_util.h"
#include "fs/origin/dataset_file.h"

namespace mmfs::format {

namespace {
constexpr uint64_t kMaxManifestBytes = 64ull << 20;

std::string OctalModeText(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06o", mode);
  return buf;
}

int CompareNames(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}
}  // namespace

Result<std::unique_ptr<Dataset>> Dataset::Open(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return Status::FromErrno(errno, dir);
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(dir + " is not a directory, so not an mmfs dataset");
  }
  std::unique_ptr<Dataset> ds(new Dataset());
  ds->dir_ = dir;
  std::string manifest_path = dir + "/" + kManifestFileName;
  if (::lstat(manifest_path.c_str(), &st) != 0) {
    return Status::InvalidArgument(dir + " is not an mmfs dataset (it has no " +
                                   kManifestFileName + "; make one with 'mmfs pack')");
  }
  MMFS_ASSIGN_OR_RETURN(std::string text,
                        origin::ReadDatasetFile(manifest_path, kMaxManifestBytes));
  MMFS_ASSIGN_OR_RETURN(ds->manifest_, Manifest::Parse(text, manifest_path));
  MMFS_RETURN_IF_ERROR(ds->OpenIndex());
  return ds;
}

Dataset::~Dataset() {
  if (index_map_ != nullptr) ::munmap(const_cast<char*>(index_map_), index_map_size_);
}

Status Dataset::LockIndex() {
  if (index_locked_) return Status::Ok();
  if (::mlock2(index_map_, index_map_size_, MLOCK_ONFAULT) != 0) {
    const int err = errno;
    Status failed =
        Status::FromErrno(err, dir_ + "/" + manifest_.index_file + ": lock the index in memory");
    if (err != ENOMEM && err != EPERM) return failed;
    struct rlimit rl {};
    ::getrlimit(RLIMIT_MEMLOCK, &rl);
    const uint64_t index_kib = (index_map_size_ + 1023) / 1024;
    return Status::ResourceExhausted(
        failed.message() + " (the index is " + std::to_string(index_kib) +
        " KiB; RLIMIT_MEMLOCK allows " +
        (rl.rlim_cur == RLIM_INFINITY ? std::string("any size")
                                      : std::to_string(rl.rlim_cur / 1024) + " KiB") +
        " without CAP_IPC_LOCK: raise it with ulimit -l KIB or systemd's LimitMEMLOCK=, or mount "
        "with -o lock_index=off)");
  }
  index_locked_ = true;
  return Status::Ok();
}

Status Dataset::OpenIndex() {
  std::string path = dir_ + "/" + manifest_.index_file;
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, origin::OpenDatasetFile(path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  auto size = static_cast<uint64_t>(st.st_size);
  if (size != manifest_.index_size) {
    return Status::Corruption(path + ": size " + std::to_string(size) +
                              " bytes, the manifest says " +
                              std::to_string(manifest_.index_size));
  }
  if (size < sizeof(IndexHeader)) return Status::Corruption(path + ": too short for a header");
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) return Status::FromErrno(errno, "mmap " + path);
  index_map_ = static_cast<const char*>(map);
  index_map_size_ = size;
  IndexHeader h;
  std::memcpy(&h, index_map_, sizeof h);
  if (std::memcmp(h.magic, kIndexMagic, sizeof h.magic) != 0) {
    return Status::Corruption(path + ": not an mmfs index (bad magic)");
  }
  if (h.version != kFormatVersion) {
    return Status::NotSupported(path + ": index version " + std::to_string(h.version) +
                                " is not supported");
  }
  if (h.header_size != sizeof(IndexHeader) || h.entry_size != sizeof(EntryRecord)) {
    return Status::Corruption(path + ": unexpected header or record size");
  }
  // Overflow-safe layout checks: entries and strings must lie inside the file.
  if (h.entry_count == 0 || h.entry_count > (size / sizeof(EntryRecord)) ||
      h.entries_offset != sizeof(IndexHeader) ||
      h.strings_offset != h.entries_offset + h.entry_count * sizeof(EntryRecord) ||
      h.strings_size > size || h.strings_offset > size - h.strings_size) {
    return Status::Corruption(path + ": header describes a layout that does not fit the file");
  }
  if (h.entry_count != manifest_.entries) {
    return Status::Corruption(path + ": " + std::to_string(h.entry_count) +
                              " entries, the manifest says " + std::to_string(manifest_.entries));
  }
  entries_ = reinterpret_cast<const EntryRecord*>(index_map_ + h.entries_offset);
  entry_count_ = h.entry_count;
  strings_ = index_map_ + h.strings_offset;
  strings_size_ = h.strings_size;
  ::madvise(const_cast<char*>(index_map_), index_map_size_, MADV_RANDOM);
  auto root = GetEntry(0);
  if (!root.ok()) return root.status();
  if (!root->is_dir()) return Status::Corruption(path + ": entry 0 is not a directory");
  return Status::Ok();
}

origin::TreeSpec Dataset::ShardTree() const {
  origin::TreeSpec tree;
  for (const ShardInfo& shard : manifest_.shards) tree.shards.push_back({shard.file, shard.size});
  tree.magic_offset = kLmdbMagicOffset;
  tree.magic = kLmdbMagic;
  tree.cannot_open = "shard listed in " + std::string(kManifestFileName) + " cannot be opened";
  tree.size_hint = " (truncated or replaced?)";
  tree.bad_magic = "not an LMDB environment (bad magic)";
  return tree;
}

Result<Entry> Dataset::GetEntry(uint64_t index) const {
  if (index >= entry_count_) {
    return Status::NotFound("entry " + std::to_string(index) + " does not exist");
  }
  Entry e;
  e.index = static_cast<uint32_t>(index);
  std::memcpy(&e.record, &entries_[index], sizeof(EntryRecord));
  const EntryRecord& r = e.record;
  auto bad = [&](const char* why) {
    return Status::Corruption(dir_ + "/" + manifest_.index_file + ": entry " +
                              std::to_string(index) + ": " + why);
  };
  if (r.name_offset > strings_size_ || r.name_len > strings_size_ - r.name_offset) {
    return bad("name outside the name table");
  }
  if ((index == 0) != (r.name_len == 0)) return bad("only the root has an empty name");
  if (r.parent >= entry_count_) return bad("parent out of range");
  e.name = std::string_view(strings_ + r.name_offset, r.name_len);
  // A name is one path component: the kernel refuses a listing with a '/' in a name, and a NUL
  // would cut it short in every reader.
  if (e.name.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos) {
    return bad("a name holds '/' or NUL");
  }
  switch (r.mode & kModeTypeMask) {
    case kModeDirectory:
      if (r.data_offset > entry_count_ || r.size > entry_count_ - r.data_offset) {
        return bad("children out of range");
      }
      if (r.size > 0 && r.data_offset <= index) return bad("children precede their directory");
      break;
    case kModeRegular: {
      if (r.shard >= manifest_.shards.size()) return bad("shard number out of range");
      uint64_t shard_size = manifest_.shards[r.shard].size;
      if (r.data_offset > shard_size || r.size > shard_size - r.data_offset) {
        return bad("file bytes lie outside its shard");
      }
      break;
    }
    case kModeSymlink:
      if (r.data_offset > strings_size_ || r.size > strings_size_ - r.data_offset) {
        return bad("link target outside the name table");
      }
      break;
    default: {
      // Devices, FIFOs and sockets are never packed; name what the record claims to be.
      const uint32_t type = r.mode & kModeTypeMask;
      const char* kind = type == 0020000 ? "a character device"
                         : type == 0060000 ? "a block device"
                         : type == 0010000 ? "a FIFO"
                         : type == 0140000 ? "a socket"
                                           : "no known type";
      return Status::Corruption(dir_ + "/" + manifest_.index_file + ": entry " +
                                std::to_string(index) + ": mode " + OctalModeText(r.mode) +
                                " is " + kind + ", which a dataset never holds");
    }
  }
  return e;
}

Result<Entry> Dataset::LookupChild(const Entry& dir, std::string_view name) const {
  if (!dir.is_dir()) return Status::InvalidArgument("not a directory");
  uint64_t lo = dir.first_child();
  uint64_t hi = lo + dir.child_count();  // exclusive
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    MMFS_ASSIGN_OR_RETURN(Entry e, GetEntry(mid));
    int c = CompareNames(e.name, name);
    if (c == 0) {
      if (e.record.parent != dir.index) {
        return Status::Corruption(manifest_.index_file + ": entry " + std::to_string(mid) +
                                  ": parent does not match its directory");
      }
      return e;
    }
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return Status::NotFound(std::string(name));
}

Dataset::ChildSpans Dataset::SpansOfChildren(const Entry& dir) const {
  ChildSpans spans;
  if (!dir.is_dir() || dir.child_count() == 0) return spans;
  const uint64_t first = dir.first_child();
  const uint64_t count = dir.child_count();  // GetEntry checked the run lies inside the index
  const auto base = reinterpret_cast<const char*>(index_map_);
  const char* records = reinterpret_cast<const char*>(entries_ + first);
  spans.records = {static_cast<uint64_t>(records - base),
                   static_cast<uint64_t>(records - base) + count * sizeof(EntryRecord)};
  // The names of one run are written in the run's order (IndexBuilder): from the first child's
  // name to the end of the last child's. Reading both records waits for at most the first page
  // of the read just started. An index from another writer may order names otherwise; the span
  // is then only a hint, bounded by the name table.
  const EntryRecord& a = entries_[first];
  const EntryRecord& b = entries_[first + count - 1];
  if (a.name_offset <= b.name_offset && b.name_offset <= strings_size_ &&
      b.name_len <= strings_size_ - b.name_offset) {
    const auto names = static_cast<uint64_t>(strings_ - base);
    spans.names = {names + a.name_offset, names + b.name_offset + b.name_len};
  }
  return spans;
}

void Dataset::Advise(SpanWindow::Span span, int advice, size_t margin) const {
  if (span.empty()) return;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t from = (span.begin > margin ? span.begin - margin : 0) & ~(page - 1);
  const uint64_t to = std::min<uint64_t>(index_map_size_, span.end + margin);
  if (from < to) {
    ::madvise(const_cast<char*>(index_map_) + from, to - from, advice);
  }
}

void Dataset::PrefetchChildren(const Entry& dir) const {
  const ChildSpans spans = SpansOfChildren(dir);
  // Each run and what follows it, once per window: the next directories of a walk are there.
  Advise(record_window_.Want(spans.records.begin, spans.records.end, index_map_size_),
         MADV_WILLNEED, 0);
  Advise(name_window_.Want(spans.names.begin, spans.names.end, index_map_size_), MADV_WILLNEED,
         0);
}

// Safe while other threads read the same pages: a read-only shared file mapping loses nothing,
// and their next access maps the page again from the page cache (a minor fault). The margin is
// the kernel's fault-around window (fault_around_bytes, 64 KiB): a fault maps the cached pages
// around it too, so listing one directory maps the end of the span before it, already released;
// measured, releasing the exact spans left 78 MB of a 76 MB index mapped after a 1M walk.
void Dataset::ReleaseChildren(const Entry& dir) const {
  // A locked mapping refuses MADV_DONTNEED (EINVAL); its pages are meant to stay.
  if (index_locked_) return;
  const ChildSpans spans = SpansOfChildren(dir);
  Advise(spans.records, MADV_DONTNEED, kFaultAroundBytes);
  Advise(spans.names, MADV_DONTNEED, kFaultAroundBytes);
}

Result<std::string_view> Dataset::LinkTarget(const Entry& link) const {
  if (!link.is_symlink()) return Status::InvalidArgument("not a symbolic link");
  return std::string_view(strings_ + link.record.data_offset, link.record.size);
}

std::string Dataset::PathOf(uint64_t index) const {
  std::vector<std::string_view> parts;
  // Bounded walk: a damaged index cannot make this loop forever.
  for (uint64_t i = index, steps = 0; i != 0 && steps < 4096; ++steps) {
    // The record's own name and parent, checked only as far as reading them needs: the path of
    // an entry refused for another reason (its type, its bytes) is what a report must name.
    if (i >= entry_count_) {
      parts.push_back("?");
      break;
    }
    const EntryRecord& r = entries_[i];
    if (r.name_offset > strings_size_ || r.name_len > strings_size_ - r.name_offset ||
        r.name_len == 0 || r.parent >= entry_count_) {
      parts.push_back("?");
      break;
    }
    parts.emplace_back(strings_ + r.name_offset, r.name_len);
    i = r.parent;
  }
  std::string path;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!path.empty()) path += '/';
    path.append(it->data(), it->size());
  }
  return path;
}

std::string Dataset::Identity() const { return "ds-" + HexU64(manifest_.index_checksum); }

Status Dataset::CheckSum(const Entry& entry, uint64_t sum) const {
  if (sum != entry.record.checksum) {
    return Status::Corruption(manifest_.shards[entry.record.shard].file + " at offset " +
                              std::to_string(entry.record.data_offset) + ": checksum mismatch for " +
                              PathOf(entry.index) + " (expected " + HexU64(entry.record.checksum) +
                              ", read " + HexU64(sum) + ")");
  }
  return Status::Ok();
}

}  // namespace mmfs::format
