#include "tools/pack/packer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>
#include <mutex>
#include <future>
#include <functional>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <span>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "fs/base/file_util.h"
#include "fs/base/json_text.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/format.h"
#include "fs/format/manifest.h"
#include "tools/pack/captions.h"
#include "tools/pack/folder_source.h"
#include "tools/pack/tar_grouping.h"
#include "tools/pack/tar_source.h"
#include "tools/pack/image_check.h"

namespace mmfs::pack {

namespace fsys = std::filesystem;
using format::EntryRecord;

namespace {

// Tar members larger than this are skipped with a warning (TarReader::Open).
constexpr uint64_t kMaxTarMemberBytes = 1ull << 30;
// Members of incomplete samples of an ungrouped tar held in memory; the rest wait on disk.
constexpr uint64_t kTarGroupingMemory = 256ull << 20;

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

  // Called once a shard file is complete and its checksum known.
  using FinishedFn = std::function<Status(const format::ShardInfo&, std::span<const uint64_t>)>;
  void set_on_finished(FinishedFn fn) { on_finished_ = std::move(fn); }
  // Continues after the shards an interrupted pack finished (--resume).
  void Restore(std::vector<format::ShardInfo> shards, std::vector<uint64_t> record_offsets) {
    shards_ = std::move(shards);
    record_offsets_ = std::move(record_offsets);
    next_sample_ = record_offsets_.size();
  }

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
    if (on_finished_) MMFS_RETURN_IF_ERROR(on_finished_(info, offsets));
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
  FinishedFn on_finished_;
};

// What lets an interrupted pack continue (--resume): after each finished shard, one JSON line
// with the shard and, for every sample group committed since the previous line, its member names
// and what packing found (checksum, image size, skipped, where it landed). Appended and fsynced
// after the shard file itself is complete, so every line describes a shard that is whole.
class PackCheckpoint {
 public:
  static constexpr char kFileName[] = "checkpoint.jsonl";

  Status Start(const std::string& work_dir, const std::string& fingerprint) {
    path_ = work_dir + "/" + kFileName;
    MMFS_ASSIGN_OR_RETURN(fd_, OpenFile(path_, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
    return WriteLine({{"mmfs_pack_checkpoint", 1}, {"options", fingerprint}});
  }

  // Reads the finished shards and their groups back; the file must have been made by a pack with
  // the same options.
  Status Load(const std::string& work_dir, const std::string& fingerprint,
              std::vector<format::ShardInfo>* shards, std::vector<uint64_t>* offsets,
              std::deque<nlohmann::json>* groups) {
    path_ = work_dir + "/" + kFileName;
    MMFS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path_, 1ull << 36));
    size_t start = 0, line_no = 0, valid_end = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) break;  // a line cut by the interruption: ignored
      nlohmann::json j = nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
      start = end + 1;
      if (j.is_discarded()) break;
      if (line_no++ == 0) {
        if (j.value("options", std::string()) != fingerprint) {
          return Status::InvalidArgument(
              "the interrupted pack used other sources or options; run without --resume");
        }
      } else {
        const auto& sh = j.at("shard");
        format::ShardInfo info;
        info.file = sh.at("file").get<std::string>();
        info.size = sh.at("size").get<uint64_t>();
        info.checksum = sh.at("checksum").get<uint64_t>();
        info.first_sample = sh.at("first_sample").get<uint64_t>();
        info.samples = sh.at("samples").get<uint64_t>();
        info.data_bytes = sh.at("data_bytes").get<uint64_t>();
        struct stat st;
        std::string file = work_dir + "/" + info.file;
        if (::stat(file.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != info.size) {
          break;  // the shard is not what the line says: resume from the one before
        }
        shards->push_back(info);
        for (uint64_t o : j.at("offsets")) offsets->push_back(o);
        for (auto& g : j.at("groups")) groups->push_back(std::move(g));
      }
      valid_end = start;
    }
    if (line_no == 0) return Status::InvalidArgument(path_ + ": empty checkpoint");
    // Continue the file after its last good line.
    MMFS_ASSIGN_OR_RETURN(fd_, OpenFile(path_, O_WRONLY | O_CLOEXEC));
    if (::ftruncate(fd_.get(), static_cast<off_t>(valid_end)) != 0 ||
        ::lseek(fd_.get(), 0, SEEK_END) < 0) {
      return Status::FromErrno(errno, "truncate " + path_);
    }
    return Status::Ok();
  }

  Status Append(const format::ShardInfo& info, std::span<const uint64_t> offsets,
                std::vector<nlohmann::json>* groups) {
    nlohmann::json j = {{"shard",
                         {{"file", info.file},
                          {"size", info.size},
                          {"checksum", info.checksum},
                          {"first_sample", info.first_sample},
                          {"samples", info.samples},
                          {"data_bytes", info.data_bytes}}},
                        {"offsets", std::vector<uint64_t>(offsets.begin(), offsets.end())},
                        {"groups", std::move(*groups)}};
    groups->clear();
    ++finished_;
    return WriteLine(j);
  }

  uint64_t finished() const { return finished_; }
  const std::string& path() const { return path_; }

 private:
  Status WriteLine(const nlohmann::json& j) {
    std::string line = JsonText(j) + "\n";
    MMFS_RETURN_IF_ERROR(WriteFull(fd_.get(), line.data(), line.size(), path_));
    if (::fdatasync(fd_.get()) != 0) return Status::FromErrno(errno, "fsync " + path_);
    return Status::Ok();
  }

  std::string path_;
  UniqueFd fd_;
  uint64_t finished_ = 0;
};

// A sample on its way to the shards: loaded, checked and checksummed (on a worker thread with
// --jobs), then committed in input order, so the output does not depend on the thread count.
struct PreparedSample {
  std::vector<SourceNode*> members;
  std::vector<std::string> contents;
  std::vector<Result<ImageInfo>> images;  // per member; ImageInfo{} when not a JPEG
  std::vector<uint64_t> sums;
  Status error;  // a member could not be read
  bool from_tar = false;  // progress was counted while reading the archive
};

// Checks and checksums `p.contents` (thread-safe: each thread has its own decoder).
void CheckAndHash(PreparedSample& p) {
  thread_local JpegChecker jpeg;
  for (size_t j = 0; j < p.members.size(); ++j) {
    const std::string& bytes = p.contents[j];
    const std::string& name = p.members[j]->name;
    p.images.push_back(HasJpegExtension(name)   ? jpeg.Check(bytes)
                       : HasPngExtension(name)  ? CheckPng(bytes)
                       : HasWebpExtension(name) ? CheckWebp(bytes)
                                                : Result<ImageInfo>(ImageInfo{}));
    p.sums.push_back(XXH3_64bits(bytes.data(), bytes.size()));
  }
}

// Runs preparations on `jobs` threads (inline for 1) and hands the results to `commit` in the
// order they were submitted, keeping at most a few per thread in flight.
class SamplePipeline {
 public:
  using Commit = std::function<Status(PreparedSample&)>;
  SamplePipeline(int jobs, Commit commit) : commit_(std::move(commit)) {
    for (int i = 1; i < jobs; ++i) threads_.emplace_back([this] { Loop(); });
    window_ = static_cast<size_t>(std::max(1, jobs)) * 4;
  }
  ~SamplePipeline() { Stop(); }

  // Drops what is queued and waits for the preparations running now. Idempotent. Callers whose
  // preparations point into data they own must stop the pipeline before freeing it: an error
  // returned early leaves work queued behind it.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  Status Submit(std::function<PreparedSample()> prepare) {
    if (threads_.empty()) {
      PreparedSample p = prepare();
      return commit_(p);
    }
    std::packaged_task<PreparedSample()> task(std::move(prepare));
    pending_.push_back(task.get_future());
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
    while (pending_.size() >= window_) MMFS_RETURN_IF_ERROR(CommitFront());
    return Status::Ok();
  }

  Status Finish() {
    while (!pending_.empty()) MMFS_RETURN_IF_ERROR(CommitFront());
    return Status::Ok();
  }

 private:
  Status CommitFront() {
    PreparedSample p = pending_.front().get();
    pending_.pop_front();
    return commit_(p);
  }
  void Loop() {
    for (;;) {
      std::packaged_task<PreparedSample()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  Commit commit_;
  size_t window_ = 4;
  std::deque<std::future<PreparedSample>> pending_;  // submission order
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<PreparedSample()>> queue_;  // guarded by mu_
  bool stop_ = false;                                       // guarded by mu_
  std::vector<std::thread> threads_;
};

class Packer {
 public:
  Packer(const PackOptions& options, PackReporter& reporter, std::string work_dir, bool resume)
      : resume_(resume),
        options_(options),
        reporter_(reporter),
        work_dir_(std::move(work_dir)),
        shards_(work_dir_, options.shard_size),
        pipeline_(options.jobs, [this](PreparedSample& p) { return CommitSample(p); }),
        start_(std::chrono::steady_clock::now()) {
    shards_.set_on_finished([this](const format::ShardInfo& info, std::span<const uint64_t> offs) {
      return checkpoint_.Append(info, offs, &pending_groups_);
    });
  }

  uint64_t finished_shards() const { return checkpoint_.finished(); }
  bool keep_work_dir() const { return keep_work_dir_; }

  Result<PackSummary> Run() {
    SourceNode root;
    // Queued preparations point into `root`: however Run returns, they stop before it goes.
    struct StopFirst {
      SamplePipeline& pipeline;
      ~StopFirst() { pipeline.Stop(); }
    } stop_first{pipeline_};
    root.mode = format::kModeDirectory | 0755;
    for (const std::string& src : options_.sources) {
      reporter_.Phase("scanning " + src);
      MMFS_RETURN_IF_ERROR(AddSource(src, &root));
    }
    // The mount's root is the source's root (the latest of several): `find -newer` and rsync
    // compare it like any other directory.
    root.mtime_ns = sources_mtime_ns_;
    SortTree(&root);
    for (const SourceNode& child : root.children) {
      if (child.name == ".mmfs") {
        reporter_.Warning(".mmfs is packed but the mount shows its control directory there "
                          "instead; rename it to reach it through the mount");
      }
    }
    progress_.files_total = scanned_files_;
    progress_.bytes_total = scanned_bytes_;
    reporter_.Phase(tars_ > 0 ? "packing " + std::to_string(tars_) + " tar files and " +
                                    std::to_string(scanned_files_) + " files"
                              : "packing " + std::to_string(scanned_files_) + " files");
    MMFS_RETURN_IF_ERROR(StartOrResume());
    MMFS_RETURN_IF_ERROR(WriteData(&root));
    MMFS_RETURN_IF_ERROR(pipeline_.Finish());
    if (!resume_groups_.empty()) {
      return Status::InvalidArgument("the sources hold fewer samples than the interrupted pack "
                                     "recorded; run without --resume");
    }
    MMFS_RETURN_IF_ERROR(shards_.FinishShard());
    ReportProgress(/*finished=*/true);
    ::unlink(checkpoint_.path().c_str());
    reporter_.Phase("writing index");
    MMFS_RETURN_IF_ERROR(WriteIndexAndManifest(root));
    return summary_;
  }

  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  // Everything that changes the output; a checkpoint is only resumed with the same.
  std::string Fingerprint() const {
    nlohmann::json j = {{"sources", options_.sources},
                        {"format", static_cast<int>(options_.format)},
                        {"caption_fields", options_.caption_fields},
                        {"coco", options_.coco_annotations},
                        {"shard_size", options_.shard_size},
                        {"on_bad", OnBadName(options_.on_bad)},
                        {"format_version", format::kFormatVersion}};
    return JsonText(j);
  }

  Status StartOrResume() {
    if (!resume_) return checkpoint_.Start(work_dir_, Fingerprint());
    std::vector<format::ShardInfo> shards;
    std::vector<uint64_t> offsets;
    Status loaded = checkpoint_.Load(work_dir_, Fingerprint(), &shards, &offsets, &resume_groups_);
    if (!loaded.ok()) {
      keep_work_dir_ = true;  // still resumable with the right options
      return loaded;
    }
    // Shard files past the checkpoint are incomplete: written again from their first sample.
    for (uint32_t i = static_cast<uint32_t>(shards.size());; ++i) {
      char name[64];
      std::snprintf(name, sizeof name, format::kShardFilePattern, i);
      std::string path = work_dir_ + "/" + name;
      if (::unlink(path.c_str()) != 0) break;
    }
    reporter_.Phase("resuming after " + std::to_string(shards.size()) + " finished shards (" +
                    std::to_string(offsets.size()) + " samples)");
    shards_.Restore(std::move(shards), std::move(offsets));
    return Status::Ok();
  }

  // Identifies a group's member names in the checkpoint (names may be any bytes; JSON wants
  // UTF-8, so they are not stored as text).
  static uint64_t NamesSum(const std::vector<SourceNode*>& members) {
    XXH3_state_t* st = XXH3_createState();
    XXH3_64bits_reset(st);
    for (const SourceNode* m : members) XXH3_64bits_update(st, m->name.c_str(), m->name.size() + 1);
    uint64_t sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return sum;
  }

  // Fills a group's nodes from the checkpoint instead of reading and checking them again.
  Status ApplyResumed(const std::vector<SourceNode*>& members, bool from_tar) {
    nlohmann::json g = std::move(resume_groups_.front());
    resume_groups_.pop_front();
    bool same = g.at("m").size() == members.size() && g.at("n").get<uint64_t>() == NamesSum(members);
    if (!same) {
      return Status::InvalidArgument("the sources changed since the interrupted pack (" +
                                     Describe(*members.front()) + " is not what it recorded); run "
                                     "without --resume");
    }
    int64_t sample = g.at("s").get<int64_t>();
    uint32_t shard = g.at("sh").get<uint32_t>();
    bool bad_sample = false;
    for (size_t j = 0; j < members.size(); ++j) {
      SourceNode& f = *members[j];
      const auto& m = g.at("m")[j];
      if (!from_tar) {
        progress_.files_done++;
        progress_.bytes_done += f.size;
      }
      if (m[0].get<int>() != 0) {
        f.skipped = true;
        summary_.skipped++;
        if (m[0].get<int>() == 1) {
          summary_.bad_images++;
          bad_sample = true;
        }
        continue;
      }
      f.checksum = m[1].get<uint64_t>();
      f.width = m[2].get<uint32_t>();
      f.height = m[3].get<uint32_t>();
      f.offset_in_record = m[4].get<uint64_t>();
      f.shard = shard;
      f.sample = static_cast<uint64_t>(sample);
    }
    if (bad_sample && options_.on_bad == OnBadImage::kSkip) summary_.samples_with_bad_image++;
    return Status::Ok();
  }

  // A tar file becomes a folder named after it, filled while packing.
  SourceNode TarFolder(const std::string& path) {
    SourceNode dir;
    dir.name = TarStem(fsys::path(path).filename().string());
    dir.mode = format::kModeDirectory | 0755;
    dir.tar_path = path;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      dir.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      dir.size = static_cast<uint64_t>(st.st_size);  // the progress total counts the archive
      scanned_bytes_ += dir.size;
    }
    ++tars_;
    layouts_.insert("webdataset");
    return dir;
  }

  Status AddSource(const std::string& src, SourceNode* root) {
    struct stat st;
    if (::stat(src.c_str(), &st) != 0) return Status::FromErrno(errno, "source " + src);
    sources_mtime_ns_ = std::max<int64_t>(
        sources_mtime_ns_, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
    SourceNode tree;
    tree.mode = format::kModeDirectory | 0755;
    if (S_ISREG(st.st_mode)) {
      if (!IsTarName(src) && options_.format != SourceFormat::kWebDataset) {
        return Status::InvalidArgument(src + ": a file source must be a .tar, .tar.gz or .tgz "
                                       "WebDataset shard");
      }
      tree.children.push_back(TarFolder(src));
      return Merge(root, std::move(tree), src);
    }
    if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(src + ": not a folder or a tar file");
    if (options_.format == SourceFormat::kWebDataset ||
        (options_.format == SourceFormat::kAuto && IsWebDatasetFolder(src))) {
      std::vector<std::string> tars;
      uint64_t others = 0;
      for (const auto& e : fsys::directory_iterator(src)) {
        std::string name = e.path().filename().string();
        if (e.is_regular_file() && IsTarName(name)) {
          tars.push_back(e.path().string());
        } else {
          ++others;
        }
      }
      std::sort(tars.begin(), tars.end());
      if (tars.empty()) return Status::InvalidArgument(src + ": no .tar files (--from webdataset)");
      if (others > 0) {
        reporter_.Warning(src + ": " + std::to_string(others) + " entries that are not tar files "
                          "(img2dataset's .parquet and _stats.json, ...) are left out");
        summary_.skipped += others;
      }
      for (const std::string& t : tars) tree.children.push_back(TarFolder(t));
      return Merge(root, std::move(tree), src);
    }
    ScanCounts counts;
    MMFS_ASSIGN_OR_RETURN(tree, ScanFolder(src, reporter_, &counts));
    summary_.skipped += counts.skipped;
    scanned_files_ += counts.files;
    scanned_bytes_ += counts.bytes;
    CaptionCounts cc;
    if (options_.format == SourceFormat::kHfImageFolder ||
        (options_.format == SourceFormat::kAuto && HasHfMetadata(tree))) {
      MMFS_RETURN_IF_ERROR(AddHfMetadataCaptions(&tree, options_.caption_fields, reporter_, &cc));
      layouts_.insert("hf-imagefolder");
    } else if (!options_.coco_annotations.empty()) {
      MMFS_RETURN_IF_ERROR(AddCocoCaptions(&tree, options_.coco_annotations, reporter_, &cc));
      layouts_.insert("coco");
    } else {
      layouts_.insert("folder");
    }
    summary_.captions_added += cc.files_added;
    summary_.captions_without_image += cc.captions_without_image;
    scanned_files_ += cc.files_added;
    // Generated captions are written like files: without their bytes in the total, progress
    // went past 100% (192% for a source of small images with long metadata rows).
    scanned_bytes_ += cc.bytes_added;
    return Merge(root, std::move(tree), src);
  }

  // A folder with tar files and no subfolders: what img2dataset and WebDataset writers make.
  static bool IsWebDatasetFolder(const std::string& dir) {
    bool any_tar = false;
    std::error_code ec;
    for (const auto& e : fsys::directory_iterator(dir, ec)) {
      if (e.is_directory()) return false;
      if (e.is_regular_file() && IsTarName(e.path().filename().string())) any_tar = true;
    }
    return any_tar;
  }

  // Moves `tree`'s children into `into` (at `prefix`), merging folders; the same file path from
  // two sources is an error naming it.
  Status Merge(SourceNode* into, SourceNode tree, const std::string& src,
               const std::string& prefix = "") {
    std::unordered_map<std::string, size_t> existing;
    for (size_t i = 0; i < into->children.size(); ++i) existing[into->children[i].name] = i;
    for (SourceNode& child : tree.children) {
      auto it = existing.find(child.name);
      if (it == existing.end()) {
        into->children.push_back(std::move(child));
        continue;
      }
      SourceNode& have = into->children[it->second];
      bool both_dirs = (have.mode & format::kModeTypeMask) == format::kModeDirectory &&
                       (child.mode & format::kModeTypeMask) == format::kModeDirectory &&
                       have.tar_path.empty() && child.tar_path.empty();
      if (!both_dirs) {
        return Status::AlreadyExists("'" + prefix + child.name + "' is in " + src +
                                     " and in an earlier source; every path must come from one "
                                     "source (rename one, or pack them separately)");
      }
      std::string below = prefix + child.name + "/";
      MMFS_RETURN_IF_ERROR(Merge(&have, std::move(child), src, below));
    }
    return Status::Ok();
  }

  Status CheckCancelled() const {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("pack interrupted");
    }
    return Status::Ok();
  }

  // Depth-first, names sorted: the order of the shards.
  Status WriteData(SourceNode* dir) {
    if (!dir->tar_path.empty()) return WriteTar(dir);
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
      MMFS_RETURN_IF_ERROR(CheckCancelled());
      std::vector<SourceNode*> members;
      for (size_t j = i; j < end; ++j) members.push_back(&kids[j]);
      if (!resume_groups_.empty()) {
        MMFS_RETURN_IF_ERROR(ApplyResumed(members, false));
        i = end;
        continue;
      }
      MMFS_RETURN_IF_ERROR(pipeline_.Submit([members]() {
        PreparedSample p;
        p.members = members;
        for (SourceNode* f : members) {
          if (f->has_inline_data) {
            p.contents.push_back(f->inline_data);
            continue;
          }
          auto bytes = ReadWholeFile(f->source_path, UINT64_MAX);
          if (!bytes.ok()) {
            p.error = bytes.status();
            return p;
          }
          if (bytes->size() != f->size) {
            p.error = Status::InvalidArgument(f->source_path + ": changed size while packing (" +
                                              std::to_string(f->size) + " -> " +
                                              std::to_string(bytes->size()) + " bytes)");
            return p;
          }
          p.contents.push_back(std::move(bytes).value());
        }
        CheckAndHash(p);
        return p;
      }));
      i = end;
    }
    return Status::Ok();
  }

  // Streams one tar: members sharing a directory and key are one sample wherever they are in
  // the archive (tar_grouping.h); the folder's tree is built from the member paths as they come.
  Status WriteTar(SourceNode* dir) {
    const std::string& path = dir->tar_path;
    MMFS_ASSIGN_OR_RETURN(TarSamplePlan plan, PlanTarSamples(path, kMaxTarMemberBytes));
    if (!plan.grouped) {
      reporter_.Phase(path + ": the members of a sample are not next to each other; grouping "
                      "them by key across the archive");
    }
    MMFS_ASSIGN_OR_RETURN(auto reader, TarReader::Open(path, reporter_, kMaxTarMemberBytes));
    TarGrouper grouper(plan, work_dir_, kTarGroupingMemory);
    // Member nodes live in `files` until the end, keyed by path; pointers into a std::map stay.
    std::map<std::string, SourceNode> files;
    std::set<std::string> dirs;
    uint64_t base_bytes = progress_.bytes_done;
    auto submit = [&](TarSample& sample) -> Status {
      bool has_image = std::any_of(sample.nodes.begin(), sample.nodes.end(),
                                   [](const SourceNode* n) { return IsImageName(n->name); });
      if (!has_image) {
        // img2dataset leaves the caption and metadata of a failed download: not a sample.
        summary_.samples_without_image++;
        std::string names;
        for (const SourceNode* n : sample.nodes) names += (names.empty() ? "" : ", ") + n->name;
        if (summary_.samples_without_image <= 20) {
          reporter_.Warning("skipping sample '" + sample.key + "' in " + path +
                            ": no image (" + names + ")");
        }
        for (SourceNode* n : sample.nodes) n->skipped = true;
        summary_.skipped += sample.nodes.size();
      } else if (!resume_groups_.empty()) {
        MMFS_RETURN_IF_ERROR(ApplyResumed(sample.nodes, true));
      } else {
        auto shared = std::make_shared<PreparedSample>();
        shared->members = std::move(sample.nodes);
        shared->contents = std::move(sample.contents);
        shared->from_tar = true;
        MMFS_RETURN_IF_ERROR(pipeline_.Submit([shared]() {
          CheckAndHash(*shared);
          return std::move(*shared);
        }));
      }
      return Status::Ok();
    };
    TarMember m;
    TarSample sample;
    for (;;) {
      MMFS_RETURN_IF_ERROR(CheckCancelled());
      MMFS_ASSIGN_OR_RETURN(bool more, reader->Next(&m));
      if (!more) break;
      size_t slash = m.path.rfind('/');
      std::string name = slash == std::string::npos ? m.path : m.path.substr(slash + 1);
      if (files.count(m.path) > 0 || dirs.count(m.path) > 0) {
        return Status::AlreadyExists(path + ": member '" + m.path + "' appears twice");
      }
      for (size_t p = m.path.find('/'); p != std::string::npos; p = m.path.find('/', p + 1)) {
        std::string d = m.path.substr(0, p);
        if (files.count(d) > 0) {
          return Status::AlreadyExists(path + ": '" + d + "' is both a file and a folder");
        }
        dirs.insert(d);
      }
      SourceNode& node = files[m.path];
      node.name = name;
      node.mode = format::kModeRegular | m.mode;
      node.mtime_ns = m.mtime_ns;
      node.size = m.data.size();
      node.source_path = path + ": member " + m.path;  // for messages
      progress_.files_done++;
      progress_.bytes_done = base_bytes + reader->bytes_consumed();
      auto complete = grouper.Add(m.path, &node, std::move(m.data), &sample);
      if (!complete.ok()) return complete.status().WithContext(path);
      if (*complete) MMFS_RETURN_IF_ERROR(submit(sample));
    }
    if (!grouper.Incomplete().empty()) {
      return Status::Corruption(path + ": sample '" + grouper.Incomplete().front() +
                                "' lost members since the archive was first read: it changed "
                                "while packing");
    }
    progress_.bytes_done = base_bytes + dir->size;
    // Samples still in flight point into `files`: let them land before the nodes move.
    MMFS_RETURN_IF_ERROR(pipeline_.Finish());
    summary_.skipped += reader->skipped();
    // The folder tree of the members.
    std::map<std::string, SourceNode> dir_nodes;
    for (const std::string& d : dirs) {
      SourceNode n;
      n.name = d.substr(d.rfind('/') == std::string::npos ? 0 : d.rfind('/') + 1);
      n.mode = format::kModeDirectory | 0755;
      n.mtime_ns = dir->mtime_ns;
      dir_nodes.emplace(d, std::move(n));
    }
    auto parent_of = [&](const std::string& p) -> SourceNode* {
      size_t slash = p.rfind('/');
      return slash == std::string::npos ? dir : &dir_nodes.at(p.substr(0, slash));
    };
    for (auto& [p, node] : files) {
      if (!node.skipped) parent_of(p)->children.push_back(std::move(node));
    }
    // Deepest first, so that each folder is complete before it moves into its parent.
    std::vector<std::string> order(dirs.begin(), dirs.end());
    std::sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
      return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
    });
    for (const std::string& d : order) parent_of(d)->children.push_back(std::move(dir_nodes.at(d)));
    SortTree(dir);
    return Status::Ok();
  }

  // In input order: applies --on-bad, appends the sample and records where it landed.
  Status CommitSample(PreparedSample& p) {
    if (!p.error.ok()) return p.error;
    std::vector<std::string_view> views;
    std::vector<SourceNode*> members;
    // --on-bad skip leaves out the whole sample of a bad image: its caption and metadata
    // without it would be an orphan on the mount, as a tar sample without an image would be.
    bool skip_sample = false;
    for (size_t j = 0; j < p.members.size(); ++j) {
      if (p.images[j].ok()) continue;
      summary_.bad_images++;
      std::string msg = Describe(*p.members[j]) + ": " + p.images[j].status().message();
      if (options_.on_bad == OnBadImage::kFail) {
        return Status::InvalidArgument(
            msg + " (use --on-bad skip to leave bad images out, or --on-bad keep)");
      }
      if (options_.on_bad == OnBadImage::kKeep) {
        reporter_.Warning("keeping " + msg);
        continue;
      }
      if (!skip_sample && p.members.size() > 1) {
        std::string others;
        for (const SourceNode* f : p.members) {
          if (f != p.members[j]) others += (others.empty() ? "" : ", ") + f->name;
        }
        msg += " (the sample's other files are left out with it: " + others + ")";
      }
      reporter_.Warning("skipping " + msg);
      skip_sample = true;
    }
    if (skip_sample) summary_.samples_with_bad_image++;
    for (size_t j = 0; j < p.members.size(); ++j) {
      SourceNode& f = *p.members[j];
      if (!p.from_tar) {
        progress_.files_done++;
        progress_.bytes_done += f.size;
      }
      if (skip_sample) {
        f.skipped = true;
        summary_.skipped++;
        continue;
      }
      const Result<ImageInfo>& info = p.images[j];
      if (info.ok()) {
        f.width = std::min<uint32_t>(info->width, 65535);
        f.height = std::min<uint32_t>(info->height, 65535);
      }
      f.checksum = p.sums[j];
      views.push_back(p.contents[j]);
      members.push_back(&f);
    }
    int64_t sample_no = -1;
    uint32_t shard_no = 0;
    if (!members.empty()) {
      uint64_t total = 0, offset = 0;
      for (std::string_view v : views) total += v.size();
      uint32_t shard = 0;
      uint64_t sample = 0;
      MMFS_RETURN_IF_ERROR(shards_.Append(views, total, &shard, &sample));
      for (size_t m = 0; m < members.size(); ++m) {
        members[m]->shard = shard;
        members[m]->sample = sample;
        members[m]->offset_in_record = offset;
        offset += views[m].size();
      }
      sample_no = static_cast<int64_t>(sample);
      shard_no = shard;
    }
    nlohmann::json results = nlohmann::json::array();
    for (size_t j = 0; j < p.members.size(); ++j) {
      const SourceNode* f = p.members[j];
      // 0: packed; 1: a bad image left out; 2: left out with the bad image of its sample.
      int skipped = !f->skipped ? 0 : !p.images[j].ok() ? 1 : 2;
      results.push_back({skipped, f->checksum, f->width, f->height, f->offset_in_record});
    }
    pending_groups_.push_back({{"n", NamesSum(p.members)}, {"m", std::move(results)},
                               {"s", sample_no}, {"sh", shard_no}});
    ReportProgress(/*finished=*/false);
    return Status::Ok();
  }

  // Progress as the reporter sees it: never past the totals, which the counts can pass (a
  // compressed tar is read ahead of the members handed out; a source file grew), and finished
  // exactly once, after the last shard.
  void ReportProgress(bool finished) {
    PackProgress p = progress_;
    p.elapsed_seconds = Elapsed();
    p.finished = finished;
    if (finished) {
      p.bytes_done = p.bytes_total;
    } else if (p.bytes_total > 0) {
      p.bytes_done = std::min(p.bytes_done, p.bytes_total - 1);
    } else {
      p.bytes_done = 0;
    }
    reporter_.Progress(p);
  }

  // Where a file came from, for messages.
  static std::string Describe(const SourceNode& f) {
    return f.source_path.empty() ? f.name : f.source_path;
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
    m.source_layout.clear();
    for (const std::string& l : layouts_) m.source_layout += (m.source_layout.empty() ? "" : "+") + l;
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

  const bool resume_;
  bool keep_work_dir_ = false;
  const PackOptions& options_;
  PackReporter& reporter_;
  uint64_t scanned_files_ = 0;
  uint64_t scanned_bytes_ = 0;
  uint64_t tars_ = 0;
  int64_t sources_mtime_ns_ = 0;  // the latest mtime of the sources given
  std::set<std::string> layouts_;
  std::string work_dir_;
  ShardSequence shards_;
  PackCheckpoint checkpoint_;
  std::vector<nlohmann::json> pending_groups_;  // committed since the last checkpoint line
  std::deque<nlohmann::json> resume_groups_;    // from the checkpoint, not yet reached
  SamplePipeline pipeline_;
  PackSummary summary_;
  PackProgress progress_;
  std::chrono::steady_clock::time_point start_;
};

bool IsInsideDir(const fsys::path& path, const fsys::path& dir) {
  auto p = path.lexically_normal().string();
  auto d = dir.lexically_normal().string();
  return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/');
}

bool IsStalePartial(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
  // Our own PID: an earlier Pack() call of this process (one Pack per DST at a time).
  return pid <= 0 || pid == ::getpid() ||
         (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
}

// The most recent ".DST.partial-PID" of a pack that is gone and left a checkpoint, or "".
std::string FindResumable(const fsys::path& dst) {
  std::string prefix = "." + dst.filename().string() + ".partial-";
  std::string best;
  fsys::file_time_type best_time;
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dst.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (!IsStalePartial(name, prefix)) continue;
    fsys::path cp = e.path() / PackCheckpoint::kFileName;
    if (!fsys::exists(cp, ec)) continue;
    auto t = fsys::last_write_time(cp, ec);
    if (best.empty() || t > best_time) {
      best = e.path().string();
      best_time = t;
    }
  }
  return best;
}

// Removes ".DST.partial-PID" directories left by packs that crashed (their PID is gone).
void RemoveStalePartials(const fsys::path& dst, const std::string& keep, PackReporter& reporter) {
  std::string prefix = "." + dst.filename().string() + ".partial-";
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dst.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (IsStalePartial(name, prefix) && e.path().string() != keep) {
      reporter.Warning("removing " + e.path().string() +
                       ", left by an interrupted pack (--resume continues one instead)");
      fsys::remove_all(e.path(), ec);
    }
  }
}

}  // namespace

Result<PackSummary> Pack(const PackOptions& options, PackReporter& reporter) {
  if (options.sources.empty()) return Status::InvalidArgument("no source given");
  if (!options.coco_annotations.empty() && options.sources.size() != 1) {
    return Status::InvalidArgument("--coco-annotations takes exactly one source: the image folder");
  }
  if (options.shard_size < (1u << 20)) {
    return Status::InvalidArgument("--shard-size must be at least 1M");
  }
  std::error_code ec;
  fsys::path dst = fsys::absolute(options.destination, ec).lexically_normal();
  if (ec || dst.filename().empty()) {
    dst = fsys::absolute(options.destination, ec).lexically_normal().parent_path();
  }
  fsys::path dst_parent = fsys::weakly_canonical(dst.parent_path(), ec);
  for (const std::string& source : options.sources) {
    fsys::path src = fsys::weakly_canonical(source, ec);
    if (!ec && IsInsideDir(dst_parent / dst.filename(), src)) {
      return Status::InvalidArgument("destination " + dst.string() + " is inside the source " +
                                     source + "; choose a place outside it");
    }
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
  // Build next to DST (same filesystem, so the final rename is atomic).
  std::string work = (dst.parent_path() / ("." + dst.filename().string() + ".partial-" +
                                           std::to_string(::getpid())))
                         .string();
  bool resume = false;
  if (options.resume) {
    std::string found = FindResumable(dst);
    if (found.empty()) {
      reporter.Warning("nothing to resume for " + dst.string() + "; packing from the start");
    } else if (found != work && ::rename(found.c_str(), work.c_str()) != 0) {
      return Status::FromErrno(errno, "take over " + found);
    } else {
      resume = true;
    }
  }
  RemoveStalePartials(dst, resume ? work : "", reporter);
  if (!resume && ::mkdir(work.c_str(), 0755) != 0) return Status::FromErrno(errno, "mkdir " + work);
  Packer packer(options, reporter, work, resume);
  auto result = packer.Run();
  auto cleanup = [&] { fsys::remove_all(work, ec); };
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled && packer.finished_shards() > 0) {
      return Status::Cancelled("interrupted after " + std::to_string(packer.finished_shards()) +
                               " finished shards, kept in " + work +
                               "; run the same command with --resume to continue");
    }
    if (packer.keep_work_dir()) return result.status().WithContext("kept " + work);
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
