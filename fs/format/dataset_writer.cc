#include "fs/format/dataset_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "base/file_util.h"

namespace mmfs::format {

namespace {
// Bound the dirty pages LMDB keeps in memory per transaction (it allocates every dirty page
// until commit) and stay far below MDB_TXN_FULL.
constexpr uint64_t kTxnCommitBytes = 64ull << 20;
constexpr uint64_t kInitialMapSize = 4ull << 30;
// Where the file `path` is mapped: the start of the mapping holding `inside`, less its file
// offset, from /proc/self/maps. LMDB does not report its map address (me_mapaddr is set only with
// MDB_FIXEDMAP), and this needs no knowledge of its page layout.
Result<const char*> MappingBase(const void* inside, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto addr = reinterpret_cast<uintptr_t>(inside);
  while (std::getline(maps, line)) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {0};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx", &start, &end, perms, &offset) != 4) {
      continue;
    }
    if (addr >= start && addr < end) {
      return reinterpret_cast<const char*>(start - offset);
    }
  }
  return Status::IoError("cannot find the mapping of " + path + " in /proc/self/maps");
}

// A device, FIFO or socket (or a type bit pattern of none) is never packed either.
Status CheckType(std::string_view name, uint32_t mode, uint32_t type) {
  if ((mode & kModeTypeMask) == type) return Status::Ok();
  return Status::InvalidArgument("index: '" + std::string(name) + "' has mode " + OctalMode(mode) +
                                 ", not of the type it is added as");
}

}  // namespace

std::string OctalMode(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06o", mode);
  return buf;
}

std::string SampleKey(uint64_t sample) {
  std::string key(8, '\0');
  for (int i = 7; i >= 0; --i) {
    key[static_cast<size_t>(i)] = static_cast<char>(sample & 0xff);
    sample >>= 8;
  }
  return key;
}

Status ShardWriter::Lmdb(int rc, std::string_view what) const {
  if (rc == MDB_SUCCESS) return Status::Ok();
  if (rc > 0) return Status::FromErrno(rc, std::string(what) + " " + path_);
  return Status::Corruption(path_ + ": " + std::string(what) + ": " + mdb_strerror(rc));
}

Result<std::unique_ptr<ShardWriter>> ShardWriter::Create(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    return Status::AlreadyExists(path + ": shard file already exists");
  }
  std::unique_ptr<ShardWriter> w(new ShardWriter(path));
  MMFS_RETURN_IF_ERROR(w->Lmdb(mdb_env_create(&w->env_), "mdb_env_create"));
  w->map_size_ = kInitialMapSize;
  MMFS_RETURN_IF_ERROR(w->Lmdb(mdb_env_set_mapsize(w->env_, w->map_size_), "mdb_env_set_mapsize"));
  // NOSUBDIR: one file per shard. NOLOCK: the packer is the only user. NOSYNC: Finish() syncs
  // once; a crash mid-pack leaves a partial directory that never becomes the dataset anyway.
  MMFS_RETURN_IF_ERROR(w->Lmdb(
      mdb_env_open(w->env_, path.c_str(), MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC | MDB_NOTLS,
                   0644),
      "mdb_env_open"));
  MMFS_RETURN_IF_ERROR(w->BeginTxn());
  MMFS_RETURN_IF_ERROR(w->Lmdb(mdb_dbi_open(w->txn_, nullptr, 0, &w->dbi_), "mdb_dbi_open"));
  return w;
}

ShardWriter::~ShardWriter() {
  if (txn_ != nullptr) mdb_txn_abort(txn_);
  if (env_ != nullptr) mdb_env_close(env_);
}

Status ShardWriter::BeginTxn() {
  txn_bytes_ = 0;
  return Lmdb(mdb_txn_begin(env_, nullptr, 0, &txn_), "mdb_txn_begin");
}

Status ShardWriter::CommitTxn() {
  MDB_txn* txn = txn_;
  txn_ = nullptr;
  return Lmdb(mdb_txn_commit(txn), "mdb_txn_commit");
}

Status ShardWriter::EnsureRoom(uint64_t bytes) {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  MDB_stat st;
  mdb_env_stat(env_, &st);
  // Overflow pages round up and the B-tree adds a little; leave generous slack.
  uint64_t used = (static_cast<uint64_t>(info.me_last_pgno) + 1) * st.ms_psize + txn_bytes_ * 2;
  uint64_t needed = used + bytes * 2 + (64ull << 20);
  if (needed <= map_size_) return Status::Ok();
  MMFS_RETURN_IF_ERROR(CommitTxn());
  while (map_size_ < needed) map_size_ *= 2;
  MMFS_RETURN_IF_ERROR(Lmdb(mdb_env_set_mapsize(env_, map_size_), "mdb_env_set_mapsize"));
  return BeginTxn();
}

Status ShardWriter::Append(uint64_t sample, std::span<const std::string_view> members) {
  if (samples_ > 0 && sample <= last_sample_) {
    return Status::InvalidArgument(path_ + ": sample numbers must increase");
  }
  uint64_t total = 0;
  for (std::string_view m : members) total += m.size();
  if (txn_bytes_ > kTxnCommitBytes) {
    MMFS_RETURN_IF_ERROR(CommitTxn());
    MMFS_RETURN_IF_ERROR(BeginTxn());
  }
  MMFS_RETURN_IF_ERROR(EnsureRoom(total));
  std::string key = SampleKey(sample);
  MDB_val k{key.size(), key.data()};
  MDB_val v{total, nullptr};
  // MDB_RESERVE: copy the members straight into the page LMDB gives us, no concatenated copy.
  MMFS_RETURN_IF_ERROR(Lmdb(mdb_put(txn_, dbi_, &k, &v, MDB_APPEND | MDB_RESERVE), "mdb_put"));
  char* out = static_cast<char*>(v.mv_data);
  for (std::string_view m : members) {
    if (!m.empty()) std::memcpy(out, m.data(), m.size());
    out += m.size();
  }
  txn_bytes_ += total;
  data_bytes_ += total;
  ++samples_;
  last_sample_ = sample;
  keys_.push_back(sample);
  return Status::Ok();
}

Result<std::vector<uint64_t>> ShardWriter::Finish() {
  if (txn_ != nullptr) MMFS_RETURN_IF_ERROR(CommitTxn());
  MMFS_RETURN_IF_ERROR(Lmdb(mdb_env_sync(env_, 1), "mdb_env_sync"));
  mdb_env_close(env_);
  env_ = nullptr;

  // Map the finished file read-only and find where each value landed.
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path_);
  MDB_env* env = nullptr;
  MMFS_RETURN_IF_ERROR(Lmdb(mdb_env_create(&env), "mdb_env_create"));
  std::vector<uint64_t> offsets;
  offsets.reserve(keys_.size());
  Status status = Lmdb(mdb_env_set_mapsize(env, static_cast<size_t>(st.st_size)),
                       "mdb_env_set_mapsize");
  if (status.ok()) {
    status = Lmdb(mdb_env_open(env, path_.c_str(),
                               MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOTLS, 0644),
                  "mdb_env_open");
  }
  MDB_txn* txn = nullptr;
  MDB_cursor* cursor = nullptr;
  MDB_dbi dbi = 0;
  if (status.ok()) status = Lmdb(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
  if (status.ok()) status = Lmdb(mdb_dbi_open(txn, nullptr, 0, &dbi), "mdb_dbi_open");
  if (status.ok()) status = Lmdb(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open");
  if (status.ok()) {
    const char* base = nullptr;
    MDB_val k, v;
    size_t i = 0;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT), ++i) {
      if (i >= keys_.size() || k.mv_size != 8 ||
          std::memcmp(k.mv_data, SampleKey(keys_[i]).data(), 8) != 0) {
        status = Status::Corruption(path_ + ": records read back out of order");
        break;
      }
      if (base == nullptr) {
        auto found = MappingBase(v.mv_data, path_);
        if (!found.ok()) {
          status = found.status();
          break;
        }
        base = *found;
      }
      const char* value = static_cast<const char*>(v.mv_data);
      if (value < base || value + v.mv_size > base + st.st_size) {
        status = Status::Corruption(path_ + ": a record lies outside the file mapping");
        break;
      }
      offsets.push_back(static_cast<uint64_t>(value - base));
    }
    if (status.ok() && offsets.size() != keys_.size()) {
      status = Status::Corruption(path_ + ": " + std::to_string(offsets.size()) +
                                  " records read back, " + std::to_string(keys_.size()) +
                                  " written");
    }
  }
  if (cursor != nullptr) mdb_cursor_close(cursor);
  if (txn != nullptr) mdb_txn_abort(txn);
  mdb_env_close(env);
  if (!status.ok()) return status;
  return offsets;
}

Result<IndexFileInfo> WriteIndexFile(const std::string& path, std::span<const EntryRecord> entries,
                                     std::string_view strings) {
  IndexHeader header{};
  std::memcpy(header.magic, kIndexMagic, sizeof header.magic);
  header.version = kFormatVersion;
  header.header_size = sizeof(IndexHeader);
  header.entry_size = sizeof(EntryRecord);
  header.entry_count = entries.size();
  header.entries_offset = sizeof(IndexHeader);
  header.strings_offset = header.entries_offset + entries.size_bytes();
  header.strings_size = strings.size();

  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("out of memory writing " + path);
  XXH3_64bits_reset(state);
  auto write = [&](const void* data, size_t len) {
    XXH3_64bits_update(state, data, len);
    return WriteFull(fd.get(), data, len, path);
  };
  Status status = write(&header, sizeof header);
  if (status.ok()) status = write(entries.data(), entries.size_bytes());
  if (status.ok()) status = write(strings.data(), strings.size());
  IndexFileInfo info;
  info.checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  MMFS_RETURN_IF_ERROR(status);
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + path);
  info.size = header.strings_offset + strings.size();
  return info;
}

IndexBuilder::IndexBuilder(uint32_t root_mode, int64_t root_mtime_ns) {
  EntryRecord root{};
  root.mode = kModeDirectory | (root_mode & 0777);
  root.mtime_ns = root_mtime_ns;
  entries_.push_back(root);
  directories_.push_back(0);
}

bool IndexBuilder::NextDirectory() {
  if (next_directory_ == directories_.size()) return false;
  current_ = directories_[next_directory_++];
  started_ = true;
  // The run of its children starts here, empty so far.
  entries_[current_].data_offset = entries_.size();
  entries_[current_].size = 0;
  return true;
}

Status IndexBuilder::AddChild(std::string_view name, uint32_t mode, int64_t mtime_ns,
                              EntryRecord** record) {
  if (!started_) return Status::InvalidArgument("index: a child added before NextDirectory");
  if ((mode & ~(kModeTypeMask | 0777)) != 0) {
    // The last check before the bytes: a dataset never asks for setuid, setgid or sticky.
    return Status::InvalidArgument("index: '" + std::string(name) + "' has mode " +
                                   OctalMode(mode) + ": setuid, setgid and sticky bits are "
                                   "never packed");
  }
  if (name.empty() || name.size() > kMaxNameLength) {
    return Status::InvalidArgument("index: a name of " + std::to_string(name.size()) +
                                   " bytes (1 to " + std::to_string(kMaxNameLength) + ")");
  }
  if (entries_[current_].size > 0) {
    const EntryRecord& previous = entries_.back();
    std::string_view previous_name(strings_.data() + previous.name_offset, previous.name_len);
    if (!(previous_name < name)) {
      return Status::InvalidArgument("index: '" + std::string(name) + "' after '" +
                                     std::string(previous_name) + "' in one directory (names "
                                     "must be unique and sorted)");
    }
  }
  if (entries_.size() >= std::numeric_limits<uint32_t>::max()) {
    return Status::InvalidArgument("more than 4 billion entries; split the dataset");
  }
  EntryRecord r{};
  r.name_offset = strings_.size();
  r.name_len = static_cast<uint16_t>(name.size());
  strings_ += name;
  r.parent = current_;
  r.mode = mode;
  r.mtime_ns = mtime_ns;
  // Counted before the push_back, which may move the records.
  ++entries_[current_].size;
  entries_.push_back(r);
  *record = &entries_.back();
  return Status::Ok();
}

Status IndexBuilder::AddFile(std::string_view name, uint32_t mode, int64_t mtime_ns,
                             const FileLocation& file) {
  MMFS_RETURN_IF_ERROR(CheckType(name, mode, kModeRegular));
  EntryRecord* r = nullptr;
  MMFS_RETURN_IF_ERROR(AddChild(name, mode, mtime_ns, &r));
  r->shard = file.shard;
  r->sample = file.sample;
  r->data_offset = file.data_offset;
  r->size = file.size;
  r->checksum = file.checksum;
  r->width = file.width;
  r->height = file.height;
  return Status::Ok();
}

Status IndexBuilder::AddSymlink(std::string_view name, uint32_t mode, int64_t mtime_ns,
                                std::string_view target) {
  MMFS_RETURN_IF_ERROR(CheckType(name, mode, kModeSymlink));
  EntryRecord* r = nullptr;
  MMFS_RETURN_IF_ERROR(AddChild(name, mode, mtime_ns, &r));
  r->data_offset = strings_.size();
  r->size = target.size();
  strings_ += target;
  return Status::Ok();
}

Status IndexBuilder::AddDirectory(std::string_view name, uint32_t mode, int64_t mtime_ns) {
  MMFS_RETURN_IF_ERROR(CheckType(name, mode, kModeDirectory));
  EntryRecord* r = nullptr;
  MMFS_RETURN_IF_ERROR(AddChild(name, mode, mtime_ns, &r));
  directories_.push_back(static_cast<uint32_t>(entries_.size() - 1));
  return Status::Ok();
}

Result<IndexFileInfo> IndexBuilder::Write(const std::string& path) const {
  return WriteIndexFile(path, entries_, strings_);
}

}  // namespace mmfs::format
