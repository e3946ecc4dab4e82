#include "tools/pack/packer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <memory>

#include "fs/base/file_util.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/format.h"
#include "fs/format/manifest.h"
#include "tools/pack/folder_source.h"
#include "tools/pack/image_check.h"

namespace mmfs::pack {

namespace fsys = std::filesystem;
using format::EntryRecord;

namespace {

const char* OnBadName(OnBadImage v) {
  switch (v) {
    case OnBadImage::kFail: return "fail";
    case OnBadImage::kSkip: return "skip";
    case OnBadImage::kKeep: return "keep";
  }
  return "fail";
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Writes sample data in path order across shard files and remembers where each record landed.
class ShardSequence {
 public:
  ShardSequence(std::string dir, uint64_t shard_size) : dir_(std::move(dir)), shard_size_(shard_size) {}

  Status Append(std::span<const std::string_view> members, uint64_t bytes, uint32_t* shard,
                uint64_t* sample) {
    if (writer_ != nullptr && writer_->samples() > 0 &&
        writer_->data_bytes() + bytes > shard_size_) {
      MMFS_RETURN_IF_ERROR(FinishShard());
    }
    if (writer_ == nullptr) {
      char name[64];
      std::snprintf(name, sizeof name, format::kShardFilePattern,
                    static_cast<unsigned>(shards_.size()));
      MMFS_ASSIGN_OR_RETURN(writer_, format::ShardWriter::Create(dir_ + "/" + name));
      format::ShardInfo info;
      info.file = name;
      info.first_sample = next_sample_;
      shards_.push_back(info);
    }
    *shard = static_cast<uint32_t>(shards_.size() - 1);
    *sample = next_sample_;
    MMFS_RETURN_IF_ERROR(writer_->Append(next_sample_, members));
    ++next_sample_;
    return Status::Ok();
  }

  Status FinishShard() {
    if (writer_ == nullptr) return Status::Ok();
    format::ShardInfo& info = shards_.back();
    info.samples = writer_->samples();
    info.data_bytes = writer_->data_bytes();
    MMFS_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, writer_->Finish());
    record_offsets_.insert(record_offsets_.end(), offsets.begin(), offsets.end());
    std::string path = writer_->path();
    writer_.reset();
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    info.size = static_cast<uint64_t>(st.st_size);
    MMFS_ASSIGN_OR_RETURN(info.checksum, HashFile(path));
    return Status::Ok();
  }

  uint64_t RecordOffset(uint64_t sample) const { return record_offsets_[sample]; }
  const std::vector<format::ShardInfo>& shards() const { return shards_; }
  uint64_t samples() const { return next_sample_; }

 private:
  std::string dir_;
  uint64_t shard_size_;
  std::unique_ptr<format::ShardWriter> writer_;
  std::vector<format::ShardInfo> shards_;
  std::vector<uint64_t> record_offsets_;  // by sample number
  uint64_t next_sample_ = 0;
};

class Packer {
 public:
  Packer(const PackOptions& options, PackReporter& reporter, std::string work_dir)
      : options_(options),
        reporter_(reporter),
        work_dir_(std::move(work_dir)),
        shards_(work_dir_, options.shard_size),
        start_(std::chrono::steady_clock::now()) {}

  Result<PackSummary> Run() {
    const std::string& src = options_.sources.front();
    reporter_.Phase("scanning " + src);
    ScanCounts counts;
    MMFS_ASSIGN_OR_RETURN(SourceNode root, ScanFolder(src, reporter_, &counts));
    summary_.skipped = counts.skipped;
    for (const SourceNode& child : root.children) {
      if (child.name == ".mmfs") {
        reporter_.Warning(src + "/.mmfs is packed but the mount shows its control directory "
                          "there instead; rename it to reach it through the mount");
      }
    }
    progress_.files_total = counts.files;
    progress_.bytes_total = counts.bytes;
    reporter_.Phase("packing " + std::to_string(counts.files) + " files");
    MMFS_RETURN_IF_ERROR(WriteData(&root));
    MMFS_RETURN_IF_ERROR(shards_.FinishShard());
    reporter_.Phase("writing index");
    MMFS_RETURN_IF_ERROR(WriteIndexAndManifest(root));
    return summary_;
  }

  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  Status CheckCancelled() const {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("pack interrupted");
    }
    return Status::Ok();
  }

  // Depth-first, names sorted: the order of the shards.
  Status WriteData(SourceNode* dir) {
    auto& kids = dir->children;
    for (size_t i = 0; i < kids.size();) {
      SourceNode& node = kids[i];
      if ((node.mode & format::kModeTypeMask) == format::kModeDirectory) {
        MMFS_RETURN_IF_ERROR(WriteData(&node));
        ++i;
        continue;
      }
      if ((node.mode & format::kModeTypeMask) != format::kModeRegular) {
        ++i;
        continue;
      }
      // One sample: the run of regular files sharing this key (contiguous in sorted order).
      std::string_view key = SampleKeyOf(node.name);
      size_t end = i + 1;
      while (end < kids.size() &&
             (kids[end].mode & format::kModeTypeMask) == format::kModeRegular &&
             SampleKeyOf(kids[end].name) == key) {
        ++end;
      }
      MMFS_RETURN_IF_ERROR(WriteSample(kids, i, end));
      i = end;
    }
    return Status::Ok();
  }

  Status WriteSample(std::vector<SourceNode>& kids, size_t begin, size_t end) {
    MMFS_RETURN_IF_ERROR(CheckCancelled());
    std::vector<std::string> contents;
    std::vector<SourceNode*> members;
    for (size_t j = begin; j < end; ++j) {
      SourceNode& f = kids[j];
      auto bytes = ReadWholeFile(f.source_path, UINT64_MAX);
      if (!bytes.ok()) return bytes.status();
      if (bytes->size() != f.size) {
        return Status::InvalidArgument(f.source_path + ": changed size while packing (" +
                                       std::to_string(f.size) + " -> " +
                                       std::to_string(bytes->size()) + " bytes)");
      }
      progress_.files_done++;
      progress_.bytes_done += f.size;
      if (HasJpegExtension(f.name)) {
        auto info = jpeg_.Check(*bytes);
        if (!info.ok()) {
          summary_.bad_images++;
          std::string msg = f.source_path + ": " + info.status().message();
          if (options_.on_bad == OnBadImage::kFail) {
            return Status::InvalidArgument(
                msg + " (use --on-bad skip to leave bad images out, or --on-bad keep)");
          }
          if (options_.on_bad == OnBadImage::kSkip) {
            reporter_.Warning("skipping " + msg);
            f.skipped = true;
            summary_.skipped++;
            continue;
          }
          reporter_.Warning("keeping " + msg);
        } else {
          f.width = std::min<uint32_t>(info->width, 65535);
          f.height = std::min<uint32_t>(info->height, 65535);
        }
      }
      f.checksum = XXH3_64bits(bytes->data(), bytes->size());
      contents.push_back(std::move(bytes).value());
      members.push_back(&f);
    }
    if (!members.empty()) {
      std::vector<std::string_view> views(contents.begin(), contents.end());
      uint64_t total = 0, offset = 0;
      for (const std::string& c : contents) total += c.size();
      uint32_t shard = 0;
      uint64_t sample = 0;
      MMFS_RETURN_IF_ERROR(shards_.Append(views, total, &shard, &sample));
      for (size_t m = 0; m < members.size(); ++m) {
        members[m]->shard = shard;
        members[m]->sample = sample;
        members[m]->offset_in_record = offset;
        offset += contents[m].size();
      }
    }
    progress_.elapsed_seconds = Elapsed();
    reporter_.Progress(progress_);
    return Status::Ok();
  }

  // Breadth-first numbering: each directory's children are one contiguous run.
  Status WriteIndexAndManifest(const SourceNode& root) {
    std::vector<EntryRecord> entries;
    std::string strings;
    struct Pending {
      const SourceNode* node;
      uint32_t index;
    };
    std::deque<Pending> queue;
    EntryRecord root_rec{};
    root_rec.mode = root.mode;
    root_rec.mtime_ns = root.mtime_ns;
    entries.push_back(root_rec);
    queue.push_back({&root, 0});
    summary_.directories = 1;
    while (!queue.empty()) {
      Pending p = queue.front();
      queue.pop_front();
      uint64_t first = entries.size();
      uint64_t count = 0;
      for (const SourceNode& child : p.node->children) {
        if (child.skipped) continue;
        EntryRecord r{};
        r.name_offset = strings.size();
        r.name_len = static_cast<uint16_t>(child.name.size());
        strings += child.name;
        r.parent = p.index;
        r.mode = child.mode;
        r.mtime_ns = child.mtime_ns;
        uint32_t type = child.mode & format::kModeTypeMask;
        if (type == format::kModeRegular) {
          r.shard = child.shard;
          r.sample = static_cast<uint32_t>(child.sample);
          r.data_offset = shards_.RecordOffset(child.sample) + child.offset_in_record;
          r.size = child.size;
          r.checksum = child.checksum;
          r.width = static_cast<uint16_t>(child.width);
          r.height = static_cast<uint16_t>(child.height);
          summary_.files++;
          summary_.bytes += child.size;
        } else if (type == format::kModeSymlink) {
          r.data_offset = strings.size();
          r.size = child.link_target.size();
          strings += child.link_target;
          summary_.symlinks++;
        } else {
          summary_.directories++;
          queue.push_back({&child, static_cast<uint32_t>(entries.size())});
        }
        entries.push_back(r);
        ++count;
      }
      entries[p.index].data_offset = first;
      entries[p.index].size = count;
      if (entries.size() > UINT32_MAX) {
        return Status::InvalidArgument("more than 4 billion entries; split the dataset");
      }
    }
    std::string index_path = work_dir_ + "/" + format::kIndexFileName;
    MMFS_ASSIGN_OR_RETURN(format::IndexFileInfo index_info,
                          format::WriteIndexFile(index_path, entries, strings));

    format::Manifest m;
    m.version = format::kFormatVersion;
    m.created = UtcNow();
    m.tool = "mmfs " MMFS_VERSION;
    m.entries = entries.size();
    m.files = summary_.files;
    m.directories = summary_.directories;
    m.symlinks = summary_.symlinks;
    m.samples = shards_.samples();
    m.total_bytes = summary_.bytes;
    m.skipped = summary_.skipped;
    m.index_file = format::kIndexFileName;
    m.index_size = index_info.size;
    m.index_checksum = index_info.checksum;
    m.shards = shards_.shards();
    m.source_layout = "folder";
    for (const std::string& s : options_.sources) {
      std::error_code ec;
      fsys::path abs = fsys::absolute(s, ec);
      m.source_paths.push_back(ec ? s : abs.lexically_normal().string());
    }
    m.shard_size = options_.shard_size;
    m.on_bad = OnBadName(options_.on_bad);
    MMFS_RETURN_IF_ERROR(WriteFileDurably(work_dir_ + "/" + format::kManifestFileName, m.ToJson()));
    MMFS_RETURN_IF_ERROR(FsyncPath(work_dir_));

    summary_.samples = m.samples;
    summary_.shards = m.shards.size();
    summary_.dataset_bytes = index_info.size;
    for (const auto& s : m.shards) summary_.dataset_bytes += s.size;
    return Status::Ok();
  }

  const PackOptions& options_;
  PackReporter& reporter_;
  std::string work_dir_;
  ShardSequence shards_;
  JpegChecker jpeg_;
  PackSummary summary_;
  PackProgress progress_;
  std::chrono::steady_clock::time_point start_;
};

bool IsInsideDir(const fsys::path& path, const fsys::path& dir) {
  auto p = path.lexically_normal().string();
  auto d = dir.lexically_normal().string();
  return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/');
}

// Removes ".DST.partial-PID" directories left by packs that crashed (their PID is gone).
void RemoveStalePartials(const fsys::path& dst, PackReporter& reporter) {
  std::string prefix = "." + dst.filename().string() + ".partial-";
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dst.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      reporter.Warning("removing " + e.path().string() + ", left by an interrupted pack");
      fsys::remove_all(e.path(), ec);
    }
  }
}

}  // namespace

Result<PackSummary> Pack(const PackOptions& options, PackReporter& reporter) {
  if (options.sources.size() != 1) {
    return Status::InvalidArgument("exactly one source folder is supported");
  }
  if (options.shard_size < (1u << 20)) {
    return Status::InvalidArgument("--shard-size must be at least 1M");
  }
  std::error_code ec;
  fsys::path dst = fsys::absolute(options.destination, ec).lexically_normal();
  if (ec || dst.filename().empty()) {
    dst = fsys::absolute(options.destination, ec).lexically_normal().parent_path();
  }
  fsys::path src = fsys::weakly_canonical(options.sources.front(), ec);
  fsys::path dst_parent = fsys::weakly_canonical(dst.parent_path(), ec);
  if (!ec && IsInsideDir(dst_parent / dst.filename(), src)) {
    return Status::InvalidArgument("destination " + dst.string() +
                                   " is inside the source; choose a place outside it");
  }
  struct stat st;
  bool dst_exists = ::lstat(dst.c_str(), &st) == 0;
  if (dst_exists) {
    if (!options.force) {
      return Status::AlreadyExists(dst.string() +
                                   " already exists; use --force to replace it");
    }
    bool is_dataset = S_ISDIR(st.st_mode) &&
                      ::access((dst / format::kManifestFileName).c_str(), F_OK) == 0;
    bool is_empty_dir = S_ISDIR(st.st_mode) && fsys::is_empty(dst, ec);
    if (!is_dataset && !is_empty_dir) {
      return Status::InvalidArgument(dst.string() +
                                     " exists and is not an mmfs dataset; refusing to replace it "
                                     "even with --force");
    }
  }
  if (::stat(dst.parent_path().c_str(), &st) != 0) {
    return Status::FromErrno(errno, "destination folder " + dst.parent_path().string());
  }
  RemoveStalePartials(dst, reporter);
  // Build next to DST (same filesystem, so the final rename is atomic).
  std::string work = (dst.parent_path() / ("." + dst.filename().string() + ".partial-" +
                                           std::to_string(::getpid())))
                         .string();
  if (::mkdir(work.c_str(), 0755) != 0) return Status::FromErrno(errno, "mkdir " + work);
  Packer packer(options, reporter, work);
  auto result = packer.Run();
  auto cleanup = [&] { fsys::remove_all(work, ec); };
  if (!result.ok()) {
    cleanup();
    return result.status();
  }
  if (dst_exists) {
    std::string old = (dst.parent_path() / ("." + dst.filename().string() + ".old-" +
                                            std::to_string(::getpid())))
                          .string();
    if (::rename(dst.c_str(), old.c_str()) != 0) {
      Status s = Status::FromErrno(errno, "rename " + dst.string());
      cleanup();
      return s;
    }
    if (::rename(work.c_str(), dst.c_str()) != 0) {
      Status s = Status::FromErrno(errno, "rename " + work + " to " + dst.string());
      (void)::rename(old.c_str(), dst.c_str());
      cleanup();
      return s;
    }
    fsys::remove_all(old, ec);
  } else if (::rename(work.c_str(), dst.c_str()) != 0) {
    Status s = Status::FromErrno(errno, "rename " + work + " to " + dst.string());
    cleanup();
    return s;
  }
  MMFS_RETURN_IF_ERROR(FsyncPath(dst.parent_path().string()));
  PackSummary summary = result.value();
  summary.seconds = packer.Elapsed();
  return summary;
}

}  // namespace mmfs::pack
