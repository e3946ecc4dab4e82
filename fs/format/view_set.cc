#include "fs/format/view_set.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "base/file_util.h"
#include "fs/origin/dataset_file.h"

namespace mmfs::format {

namespace {
constexpr uint64_t kMaxViewManifestBytes = 64ull << 20;
}  // namespace

std::string ViewDir(const std::string& dataset_dir, uint32_t side) {
  return dataset_dir + "/" + kViewsDirName + "/" + std::to_string(side);
}

bool ParseViewSide(std::string_view name, uint32_t* side) {
  if (name.empty() || name.size() > 5 || name[0] == '0') return false;
  uint32_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v < kMinViewSide || v > kMaxViewSide) return false;
  *side = v;
  return true;
}

Result<std::unique_ptr<View>> View::Open(const std::string& dataset_dir, uint32_t side,
                                         const Manifest& base, origin::Origin& origin,
                                         uint32_t tree) {
  std::unique_ptr<View> v(new View());
  v->dir_ = ViewDir(dataset_dir, side);
  std::string manifest_path = v->dir_ + "/" + kManifestFileName;
  MMFS_ASSIGN_OR_RETURN(std::string text,
                        origin::ReadDatasetFile(manifest_path, kMaxViewManifestBytes));
  MMFS_ASSIGN_OR_RETURN(v->manifest_, ViewManifest::Parse(text, manifest_path));
  if (v->manifest_.side != side) {
    return Status::Corruption(manifest_path + ": side " + std::to_string(v->manifest_.side) +
                              " does not match its folder name");
  }
  // A view belongs to one index: served over another (a repacked dataset), its records would
  // name the wrong files.
  if (v->manifest_.base_index_checksum != base.index_checksum ||
      v->manifest_.base_entries != base.entries) {
    return Status::InvalidArgument(
        v->dir_ + ": built for another index of this dataset (index xxh3 " +
        HexU64(v->manifest_.base_index_checksum) + ", the dataset's is " +
        HexU64(base.index_checksum) + "); remove it and build it again (mmfs view rm, mmfs view add)");
  }
  MMFS_RETURN_IF_ERROR(v->OpenIndex(base));
  MMFS_RETURN_IF_ERROR(origin.AddTree(tree, v->ShardTree()));
  v->tree_ = tree;
  return v;
}

View::~View() {
  if (index_map_ != nullptr) ::munmap(const_cast<char*>(index_map_), index_map_size_);
}

uint64_t View::bytes_on_disk() const {
  uint64_t n = manifest_.index_size;
  for (const ShardInfo& s : manifest_.shards) n += s.size;
  return n;
}

Status View::OpenIndex(const Manifest& base) {
  std::string path = dir_ + "/" + manifest_.index_file;
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, origin::OpenDatasetFile(path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  auto size = static_cast<uint64_t>(st.st_size);
  if (size != manifest_.index_size) {
    return Status::Corruption(path + ": size " + std::to_string(size) + " bytes, the manifest says " +
                              std::to_string(manifest_.index_size));
  }
  if (size < sizeof(ViewIndexHeader)) return Status::Corruption(path + ": too short for a header");
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) return Status::FromErrno(errno, "mmap " + path);
  index_map_ = static_cast<const char*>(map);
  index_map_size_ = size;
  ViewIndexHeader h;
  std::memcpy(&h, index_map_, sizeof h);
  if (std::memcmp(h.magic, kViewIndexMagic, sizeof h.magic) != 0) {
    return Status::Corruption(path + ": not an mmfs view index (bad magic)");
  }
  if (h.version != kViewFormatVersion) {
    return Status::NotSupported(path + ": view index version " + std::to_string(h.version) +
                                " is not supported (this mmfs reads version " +
                                std::to_string(kViewFormatVersion) + ")");
  }
  if (h.header_size != sizeof(ViewIndexHeader) || h.record_size != sizeof(ViewRecord) ||
      h.records_offset != sizeof(ViewIndexHeader)) {
    return Status::Corruption(path + ": unexpected header or record size");
  }
  // Overflow-safe: the records must fill the rest of the file exactly.
  if (h.record_count > (size - sizeof(ViewIndexHeader)) / sizeof(ViewRecord) ||
      sizeof(ViewIndexHeader) + h.record_count * sizeof(ViewRecord) != size) {
    return Status::Corruption(path + ": " + std::to_string(h.record_count) +
                              " records do not fit the file's " + std::to_string(size) + " bytes");
  }
  if (h.side != manifest_.side || h.base_entry_count != base.entries ||
      h.base_index_checksum != base.index_checksum) {
    return Status::Corruption(path + ": header does not match the manifest (side or base index)");
  }
  records_ = index_map_ + h.records_offset;
  record_count_ = h.record_count;
  return Status::Ok();
}

origin::TreeSpec View::ShardTree() const {
  origin::TreeSpec tree;
  tree.place = std::string(kViewsDirName) + "/" + std::to_string(manifest_.side);
  for (const ShardInfo& s : manifest_.shards) tree.shards.push_back({s.file, s.size});
  tree.magic_offset = kLmdbMagicOffset;
  tree.magic = kLmdbMagic;
  tree.bad_magic = "not an LMDB file (no meta page magic)";
  return tree;
}

Status View::CheckRecord(uint64_t i, const ViewRecord& r) const {
  auto bad = [&](const std::string& why) {
    return Status::Corruption(dir_ + "/" + manifest_.index_file + ": record " + std::to_string(i) +
                              ": " + why);
  };
  if (r.entry >= manifest_.base_entries) return bad("entry number out of range");
  switch (static_cast<ViewRecordKind>(r.kind)) {
    case ViewRecordKind::kResized: {
      if (r.shard >= manifest_.shards.size()) return bad("shard number out of range");
      uint64_t shard_size = manifest_.shards[r.shard].size;
      if (r.data_offset > shard_size || r.size > shard_size - r.data_offset) {
        return bad("image bytes lie outside its shard");
      }
      return Status::Ok();
    }
    case ViewRecordKind::kOmitted:
      return Status::Ok();
  }
  return bad("unknown kind " + std::to_string(r.kind));
}

Result<ViewRecord> View::GetRecord(uint64_t i) const {
  if (i >= record_count_) return Status::NotFound("view record " + std::to_string(i));
  ViewRecord r;
  std::memcpy(&r, records_ + i * sizeof(ViewRecord), sizeof r);
  MMFS_RETURN_IF_ERROR(CheckRecord(i, r));
  return r;
}

Result<ViewFile> View::Lookup(const Entry& entry) const {
  ViewFile f;
  f.source = ViewFile::Source::kOriginal;
  f.size = entry.record.size;
  f.checksum = entry.record.checksum;
  f.shard = entry.record.shard;
  f.data_offset = entry.record.data_offset;
  f.width = entry.record.width;
  f.height = entry.record.height;
  if (!entry.is_regular()) return f;
  // Binary search on the entry numbers (records are sorted by entry; a damaged, unsorted index
  // at worst misses a record, and every record found is validated before use).
  uint64_t lo = 0, hi = record_count_;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    uint32_t e;
    std::memcpy(&e, records_ + mid * sizeof(ViewRecord) + offsetof(ViewRecord, entry), sizeof e);
    if (e < entry.index) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == record_count_) return f;
  MMFS_ASSIGN_OR_RETURN(ViewRecord r, GetRecord(lo));
  if (r.entry != entry.index) return f;
  if (static_cast<ViewRecordKind>(r.kind) == ViewRecordKind::kOmitted) {
    f = ViewFile{};
    f.source = ViewFile::Source::kOmitted;
    return f;
  }
  f.source = ViewFile::Source::kView;
  f.size = r.size;
  f.checksum = r.checksum;
  f.shard = r.shard;
  f.data_offset = r.data_offset;
  f.width = r.width;
  f.height = r.height;
  return f;
}

Status View::Check(const ViewFile& file, const std::string& path, std::string_view bytes) const {
  uint64_t sum = XXH3_64bits(bytes.data(), bytes.size());
  if (bytes.size() != file.size || sum != file.checksum) {
    return Status::Corruption(dir_ + "/" + manifest_.shards[file.shard].file + " at offset " +
                              std::to_string(file.data_offset) + ": checksum mismatch for " +
                              path + " (expected " + HexU64(file.checksum) + ", read " +
                              HexU64(sum) + ")");
  }
  return Status::Ok();
}

ViewSet ViewSet::Open(const Dataset& base, origin::Origin& origin) {
  ViewSet set;
  std::string views_dir = base.dir() + "/" + kViewsDirName;
  DIR* d = ::opendir(views_dir.c_str());
  if (d == nullptr) {
    if (errno != ENOENT) set.problems_.push_back(Status::FromErrno(errno, "opendir " + views_dir));
    return set;
  }
  std::vector<uint32_t> sides;
  while (struct dirent* de = ::readdir(d)) {
    uint32_t side = 0;
    if (ParseViewSide(de->d_name, &side)) sides.push_back(side);
  }
  ::closedir(d);
  std::sort(sides.begin(), sides.end());
  for (uint32_t side : sides) {
    // View k is tree k + 1; a view that fails leaves its tree number to the next one.
    const auto tree = static_cast<uint32_t>(set.views_.size() + 1);
    auto v = View::Open(base.dir(), side, base.manifest(), origin, tree);
    if (v.ok()) {
      set.views_.push_back(std::move(v).value());
    } else {
      set.problems_.push_back(v.status());
    }
  }
  return set;
}

const View* ViewSet::Find(uint32_t side) const {
  for (const auto& v : views_) {
    if (v->side() == side) return v.get();
  }
  return nullptr;
}

}  // namespace mmfs::format
