#include "tools/view/view_builder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fs/base/file_util.h"
#include "fs/base/json_text.h"
#include "fs/format/dataset.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/local_dataset.h"
#include "fs/format/shard_reads.h"
#include "fs/format/view_format.h"
#include "fs/format/view_manifest.h"
#include "fs/format/view_set.h"
#include "fs/format/view_writer.h"
#include "tools/view/image_resizer.h"

namespace mmfs::view {

namespace fsys = std::filesystem;
using format::ViewRecord;
using format::ViewRecordKind;
using nlohmann::json;

namespace {

constexpr char kCheckpointFileName[] = "checkpoint.jsonl";

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ".N.partial-". Appended, not "." + ...: GCC 12 -O3 reports a false -Wrestrict there.
std::string PartialPrefix(uint32_t side) {
  std::string prefix = ".";
  prefix += std::to_string(side);
  prefix += ".partial-";
  return prefix;
}

// The PID in ".N.partial-PID", or -1.
long PartialPid(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return -1;
  char* end = nullptr;
  long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
  return *end == '\0' && pid > 0 ? pid : -1;
}

bool ProcessGone(long pid) {
  return pid == ::getpid() || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
}

// One base image the build looks at, in the base's shard order.
struct Candidate {
  uint32_t entry = 0;
  uint32_t shard = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  ImageKind kind = ImageKind::kOther;
  bool small = false;  // the index already says it is not larger than N: never read
};

// What a worker made of one candidate.
struct Outcome {
  bool ready = false;
  Status read_error;  // the base's own bytes are damaged: the build stops
  std::optional<Result<std::optional<ResizedImage>>> image;
};

// Cumulative counts, also stored in each checkpoint line.
struct Counts {
  uint64_t unchanged = 0, bad = 0, omitted = 0, source_bytes = 0, view_bytes = 0, resized = 0;
  json ToJson() const {
    return {{"unchanged", unchanged}, {"bad", bad},           {"omitted", omitted},
            {"source_bytes", source_bytes}, {"view_bytes", view_bytes}, {"resized", resized}};
  }
  static Counts FromJson(const json& j) {
    Counts c;
    c.unchanged = j.at("unchanged").get<uint64_t>();
    c.bad = j.at("bad").get<uint64_t>();
    c.omitted = j.at("omitted").get<uint64_t>();
    c.source_bytes = j.at("source_bytes").get<uint64_t>();
    c.view_bytes = j.at("view_bytes").get<uint64_t>();
    c.resized = j.at("resized").get<uint64_t>();
    return c;
  }
};

class Builder {
 public:
  Builder(const ViewOptions& options, pack::OnBadImage on_bad, const format::Dataset& dataset,
          origin::Origin& shards, pack::PackReporter& reporter, std::string work_dir)
      : options_(options),
        on_bad_(on_bad),
        dataset_(dataset),
        origin_(shards),
        reporter_(reporter),
        work_dir_(std::move(work_dir)) {}

  // Everything that changes the output; a checkpoint is only resumed with the same.
  std::string Fingerprint() const {
    return JsonText({{"side", options_.side},
                     {"quality", options_.quality},
                     {"on_bad", pack::OnBadName(on_bad_)},
                     {"shard_size", options_.shard_size},
                     {"base_index", HexU64(dataset_.manifest().index_checksum)},
                     {"resampler", ResamplerName()}});
  }

  Status Start() {
    path_ = work_dir_ + "/" + kCheckpointFileName;
    MMFS_ASSIGN_OR_RETURN(checkpoint_fd_,
                          OpenFile(path_, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
    return WriteLine({{"mmfs_view_checkpoint", 1}, {"options", Fingerprint()}});
  }

  // Takes over the finished shards of an interrupted build; the rest is built again.
  Status Resume() {
    path_ = work_dir_ + "/" + kCheckpointFileName;
    MMFS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path_, 1ull << 36));
    size_t start = 0, line_no = 0, valid_end = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) break;  // a line cut by the interruption
      json j = json::parse(text.substr(start, end - start), nullptr, false);
      start = end + 1;
      if (j.is_discarded() || !j.is_object()) break;
      if (line_no++ == 0) {
        if (j.value("options", std::string()) != Fingerprint()) {
          return Status::InvalidArgument(
              "the interrupted build of view " + std::to_string(options_.side) +
              " used other options (quality, --on-bad, shard size) or another dataset index; "
              "run without --resume to start again");
        }
        valid_end = start;
        continue;
      }
      if (!ApplyLine(j)) break;
      valid_end = start;
    }
    if (line_no == 0) return Status::InvalidArgument(path_ + ": empty checkpoint");
    // Shards past the checkpoint are incomplete: removed and written again.
    for (unsigned i = static_cast<unsigned>(shards_.size());; ++i) {
      std::string f = work_dir_ + "/" + ShardName(i);
      if (::unlink(f.c_str()) != 0) break;
    }
    MMFS_ASSIGN_OR_RETURN(checkpoint_fd_, OpenFile(path_, O_WRONLY | O_CLOEXEC));
    if (::ftruncate(checkpoint_fd_.get(), static_cast<off_t>(valid_end)) != 0 ||
        ::lseek(checkpoint_fd_.get(), 0, SEEK_END) < 0) {
      return Status::FromErrno(errno, "truncate " + path_);
    }
    resumed_ = next_;
    return Status::Ok();
  }

  Result<ViewSummary> Run() {
    start_ = std::chrono::steady_clock::now();
    CollectCandidates();
    pack::PackProgress progress;
    progress.files_total = candidates_.size();
    for (const Candidate& c : candidates_) progress.bytes_total += c.size;
    for (size_t i = 0; i < next_ && i < candidates_.size(); ++i) {
      progress.files_done++;
      progress.bytes_done += candidates_[i].size;
    }
    reporter_.Phase("view " + std::to_string(options_.side) + ": " +
                    std::to_string(candidates_.size()) + " images" +
                    (resumed_ > 0 ? ", " + std::to_string(resumed_) + " done before" : ""));
    MMFS_RETURN_IF_ERROR(RunWorkers(progress));
    MMFS_RETURN_IF_ERROR(FinishShard());
    reporter_.Phase("writing the view's index");
    MMFS_RETURN_IF_ERROR(WriteIndexAndManifest());
    progress.finished = true;
    progress.elapsed_seconds = Elapsed();
    reporter_.Progress(progress);
    ViewSummary s;
    s.side = options_.side;
    s.images = candidates_.size();
    s.resized = counts_.resized;
    s.unchanged_images = counts_.unchanged;
    s.bad_images = counts_.bad;
    s.omitted = counts_.omitted;
    s.resumed = resumed_;
    s.source_bytes = counts_.source_bytes;
    s.view_bytes = counts_.view_bytes;
    s.shards = shards_.size();
    s.view_bytes_on_disk = index_size_;
    for (const auto& sh : shards_) s.view_bytes_on_disk += sh.size;
    s.dataset_bytes_on_disk = dataset_.manifest().index_size;
    for (const auto& sh : dataset_.manifest().shards) s.dataset_bytes_on_disk += sh.size;
    return s;
  }

  uint64_t finished_shards() const { return shards_.size(); }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  static std::string ShardName(unsigned i) {
    char name[64];
    std::snprintf(name, sizeof name, format::kShardFilePattern, i);
    return name;
  }

  bool ApplyLine(const json& j) {
    if (!j.contains("shard") || !j.contains("records") || !j.contains("next") ||
        !j.contains("counts")) {
      return false;
    }
    try {
      const json& sh = j.at("shard");
      format::ShardInfo info;
      info.file = sh.at("file").get<std::string>();
      info.size = sh.at("size").get<uint64_t>();
      if (!ParseHexU64(sh.at("xxh3").get<std::string>(), &info.checksum)) return false;
      info.first_sample = sh.at("first_sample").get<uint64_t>();
      info.samples = sh.at("samples").get<uint64_t>();
      info.data_bytes = sh.at("data_bytes").get<uint64_t>();
      if (info.file != ShardName(static_cast<unsigned>(shards_.size()))) return false;
      struct stat st;
      std::string file = work_dir_ + "/" + info.file;
      if (::stat(file.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != info.size) {
        return false;  // not what the line says: resume from the shard before
      }
      std::vector<ViewRecord> records;
      for (const json& r : j.at("records")) {
        ViewRecord v{};
        v.entry = r.at(0).get<uint32_t>();
        v.data_offset = r.at(1).get<uint64_t>();
        v.size = r.at(2).get<uint64_t>();
        if (!ParseHexU64(r.at(3).get<std::string>(), &v.checksum)) return false;
        v.width = r.at(4).get<uint16_t>();
        v.height = r.at(5).get<uint16_t>();
        v.kind = r.at(6).get<uint16_t>();
        v.shard = v.kind == static_cast<uint16_t>(ViewRecordKind::kResized)
                      ? static_cast<uint32_t>(shards_.size())
                      : 0;
        records.push_back(v);
      }
      Counts counts = Counts::FromJson(j.at("counts"));
      uint64_t next = j.at("next").get<uint64_t>();
      shards_.push_back(info);
      records_.insert(records_.end(), records.begin(), records.end());
      counts_ = counts;
      next_ = next;
      next_key_ = info.first_sample + info.samples;
      return true;
    } catch (const json::exception&) {
      return false;
    }
  }

  Status WriteLine(const json& j) {
    std::string line = JsonText(j) + "\n";
    MMFS_RETURN_IF_ERROR(WriteFull(checkpoint_fd_.get(), line.data(), line.size(), path_));
    if (::fdatasync(checkpoint_fd_.get()) != 0) return Status::FromErrno(errno, "fsync " + path_);
    return Status::Ok();
  }

  void CollectCandidates() {
    for (uint64_t i = 0; i < dataset_.entry_count(); ++i) {
      auto e = dataset_.GetEntry(i);
      if (!e.ok() || !e->is_regular()) continue;  // a damaged entry: mmfs verify names it
      ImageKind kind = ImageKindOf(e->name);
      if (kind == ImageKind::kOther) continue;
      Candidate c;
      c.entry = static_cast<uint32_t>(i);
      c.shard = e->record.shard;
      c.offset = e->record.data_offset;
      c.size = e->record.size;
      c.kind = kind;
      // The packer records each image's size (clamped to 65535; 0 when it did not decode).
      uint32_t w = e->record.width, h = e->record.height, tw, th;
      c.small = w > 0 && h > 0 && w < 65535 && h < 65535 &&
                !format::ViewSize(w, h, options_.side, &tw, &th);
      candidates_.push_back(c);
    }
    // Shard order: the build reads the base shards front to back, and writes the view's shards
    // in the same order, so a walk of the view reads its shards front to back too.
    std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
      return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
    });
  }

  void Work(const Candidate& c, Outcome* out) {
    if (c.small) return;  // nothing to read: the original serves
    auto e = dataset_.GetEntry(c.entry);
    if (!e.ok()) {
      out->read_error = e.status();
      return;
    }
    auto bytes = format::ReadVerified(origin_, dataset_, *e);
    if (!bytes.ok()) {
      out->read_error = bytes.status().WithContext("reading the original (run mmfs verify)");
      return;
    }
    ResizeRequest req;
    req.kind = c.kind;
    req.side = options_.side;
    req.quality = options_.quality;
    out->image = ResizeImage(std::string_view(bytes->data(), bytes->size()), req);
  }

  // Workers take candidates in order, at most `window` ahead of the commit; this thread commits
  // them in order (shard writes and checkpoint lines are single-threaded).
  Status RunWorkers(pack::PackProgress& progress) {
    const size_t n = candidates_.size();
    const int jobs = std::max(1, options_.jobs);
    const size_t window = static_cast<size_t>(jobs) * 8;
    std::vector<Outcome> slots(window);
    std::mutex mu;
    std::condition_variable work_cv, done_cv;
    size_t next_claim = next_;  // guarded by mu
    size_t committed = next_;   // guarded by mu
    bool stop = false;          // guarded by mu
    auto worker = [&] {
      for (;;) {
        size_t i;
        {
          std::unique_lock<std::mutex> lock(mu);
          work_cv.wait(lock, [&] { return stop || (next_claim < n && next_claim < committed + window); });
          if (stop) return;
          i = next_claim++;
        }
        Outcome out;
        Work(candidates_[i], &out);
        out.ready = true;
        {
          std::lock_guard<std::mutex> lock(mu);
          slots[i % window] = std::move(out);
        }
        done_cv.notify_one();
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
    auto stop_all = [&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        stop = true;
      }
      work_cv.notify_all();
      for (auto& t : threads) t.join();
      threads.clear();
    };
    Status status;
    for (size_t i = next_; i < n && status.ok(); ++i) {
      // Checked on every image, not only while waiting: workers may be ahead of the commit.
      if (options_.cancel != nullptr && options_.cancel->load()) {
        status = Status::Cancelled("interrupted");
        break;
      }
      Outcome out;
      {
        std::unique_lock<std::mutex> lock(mu);
        while (!slots[i % window].ready) {
          if (options_.cancel != nullptr && options_.cancel->load()) break;
          done_cv.wait_for(lock, std::chrono::milliseconds(100));
        }
        if (!slots[i % window].ready) {
          status = Status::Cancelled("interrupted");
          break;
        }
        out = std::move(slots[i % window]);
        slots[i % window] = Outcome{};
        committed = i + 1;
      }
      work_cv.notify_all();
      status = Commit(candidates_[i], out);
      next_ = i + 1;
      progress.files_done++;
      progress.bytes_done += candidates_[i].size;
      progress.elapsed_seconds = Elapsed();
      if (progress.bytes_done < progress.bytes_total) reporter_.Progress(progress);
    }
    stop_all();
    return status;
  }

  Status Commit(const Candidate& c, Outcome& out) {
    if (!out.read_error.ok()) return out.read_error;
    if (!out.image.has_value()) {  // small by the index
      ++counts_.unchanged;
      return Status::Ok();
    }
    Result<std::optional<ResizedImage>>& r = *out.image;
    if (!r.ok()) {
      ++counts_.bad;
      std::string path = dataset_.PathOf(c.entry);
      std::string why = path + ": " + r.status().message();
      switch (on_bad_) {
        case pack::OnBadImage::kFail:
          return Status::InvalidArgument(
              why + " (--on-bad skip leaves it out of the view, --on-bad keep serves the original "
                    "in it)");
        case pack::OnBadImage::kSkip: {
          reporter_.Warning(why + "; left out of view " + std::to_string(options_.side));
          ++counts_.omitted;
          ViewRecord v{};
          v.entry = c.entry;
          v.kind = static_cast<uint16_t>(ViewRecordKind::kOmitted);
          pending_.push_back(v);
          return Status::Ok();
        }
        case pack::OnBadImage::kKeep:
          reporter_.Warning(why + "; view " + std::to_string(options_.side) +
                            " serves the original");
          return Status::Ok();
      }
    }
    if (!r->has_value()) {
      ++counts_.unchanged;
      return Status::Ok();
    }
    ResizedImage& img = **r;
    if (writer_ != nullptr && writer_->samples() > 0 &&
        writer_->data_bytes() + img.bytes.size() > options_.shard_size) {
      MMFS_RETURN_IF_ERROR(FinishShard());
    }
    if (writer_ == nullptr) {
      format::ShardInfo info;
      info.file = ShardName(static_cast<unsigned>(shards_.size()));
      info.first_sample = next_key_;
      MMFS_ASSIGN_OR_RETURN(writer_, format::ShardWriter::Create(work_dir_ + "/" + info.file));
      shards_.push_back(info);
    }
    std::string_view member(img.bytes);
    MMFS_RETURN_IF_ERROR(writer_->Append(next_key_++, std::span<const std::string_view>(&member, 1)));
    ViewRecord v{};
    v.entry = c.entry;
    v.shard = static_cast<uint32_t>(shards_.size() - 1);
    v.size = img.bytes.size();
    v.checksum = XXH3_64bits(img.bytes.data(), img.bytes.size());
    v.width = static_cast<uint16_t>(std::min<uint32_t>(img.width, 65535));
    v.height = static_cast<uint16_t>(std::min<uint32_t>(img.height, 65535));
    v.kind = static_cast<uint16_t>(ViewRecordKind::kResized);
    pending_.push_back(v);
    ++counts_.resized;
    counts_.source_bytes += c.size;
    counts_.view_bytes += img.bytes.size();
    return Status::Ok();
  }

  // Closes the open shard, fills in where its records landed, and checkpoints.
  Status FinishShard() {
    if (writer_ == nullptr) {
      records_.insert(records_.end(), pending_.begin(), pending_.end());
      pending_.clear();
      return Status::Ok();
    }
    format::ShardInfo& info = shards_.back();
    info.samples = writer_->samples();
    info.data_bytes = writer_->data_bytes();
    MMFS_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, writer_->Finish());
    std::string path = writer_->path();
    writer_.reset();
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    info.size = static_cast<uint64_t>(st.st_size);
    MMFS_ASSIGN_OR_RETURN(info.checksum, HashFile(path));
    size_t k = 0;
    json recs = json::array();
    for (ViewRecord& v : pending_) {
      if (v.kind == static_cast<uint16_t>(ViewRecordKind::kResized)) {
        if (k >= offsets.size()) return Status::Corruption(path + ": fewer records than written");
        v.data_offset = offsets[k++];
      }
      recs.push_back({v.entry, v.data_offset, v.size, HexU64(v.checksum), v.width, v.height, v.kind});
    }
    // The shard file is complete and synced (Finish) before the line that names it is written.
    MMFS_RETURN_IF_ERROR(WriteLine({{"shard",
                                     {{"file", info.file},
                                      {"size", info.size},
                                      {"xxh3", HexU64(info.checksum)},
                                      {"first_sample", info.first_sample},
                                      {"samples", info.samples},
                                      {"data_bytes", info.data_bytes}}},
                                    {"records", recs},
                                    {"next", next_},
                                    {"counts", counts_.ToJson()}}));
    records_.insert(records_.end(), pending_.begin(), pending_.end());
    pending_.clear();
    return Status::Ok();
  }

  Status WriteIndexAndManifest() {
    std::sort(records_.begin(), records_.end(),
              [](const ViewRecord& a, const ViewRecord& b) { return a.entry < b.entry; });
    const format::Manifest& base = dataset_.manifest();
    format::ViewIndexIdentity id;
    id.side = options_.side;
    id.base_entry_count = base.entries;
    id.base_index_checksum = base.index_checksum;
    MMFS_ASSIGN_OR_RETURN(format::IndexFileInfo index,
                          format::WriteViewIndexFile(work_dir_ + "/" + format::kViewIndexFileName,
                                                     id, records_));
    index_size_ = index.size;
    format::ViewManifest m;
    m.version = format::kViewFormatVersion;
    m.side = options_.side;
    m.created = UtcNow();
    m.tool = std::string("mmfs ") + MMFS_VERSION;
    m.base_entries = base.entries;
    m.base_index_checksum = base.index_checksum;
    m.resized = counts_.resized;
    m.unchanged_images = counts_.unchanged;
    m.bad_images = counts_.bad;
    m.omitted = counts_.omitted;
    m.view_bytes = counts_.view_bytes;
    m.source_bytes = counts_.source_bytes;
    m.index_file = format::kViewIndexFileName;
    m.index_size = index.size;
    m.index_checksum = index.checksum;
    m.shards = shards_;
    m.quality = static_cast<uint32_t>(options_.quality);
    m.on_bad = pack::OnBadName(on_bad_);
    m.resampler = ResamplerName();
    // The manifest last: the folder is renamed into place only after this.
    MMFS_RETURN_IF_ERROR(
        WriteFileDurably(work_dir_ + "/" + format::kManifestFileName, m.ToJson()));
    checkpoint_fd_.Reset();
    ::unlink(path_.c_str());
    return FsyncPath(work_dir_);
  }

  const ViewOptions& options_;
  const pack::OnBadImage on_bad_;
  const format::Dataset& dataset_;
  origin::Origin& origin_;  // the dataset's shards (kDatasetTree), read by the workers
  pack::PackReporter& reporter_;
  const std::string work_dir_;
  std::string path_;  // the checkpoint file
  UniqueFd checkpoint_fd_;
  std::vector<Candidate> candidates_;
  size_t next_ = 0;        // candidates committed
  uint64_t resumed_ = 0;   // of those, taken over from the checkpoint
  uint64_t next_key_ = 0;  // LMDB key of the next view image
  std::unique_ptr<format::ShardWriter> writer_;
  std::vector<format::ShardInfo> shards_;
  std::vector<ViewRecord> pending_;  // since the last finished shard (offsets not yet known)
  std::vector<ViewRecord> records_;  // in finished shards
  Counts counts_;
  uint64_t index_size_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The most recent ".N.partial-PID" of a gone build that left a checkpoint, or "".
std::string FindResumable(const std::string& views_dir, uint32_t side) {
  std::string prefix = PartialPrefix(side), best;
  fsys::file_time_type best_time;
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(views_dir, ec)) {
    long pid = PartialPid(e.path().filename().string(), prefix);
    if (pid < 0 || !ProcessGone(pid)) continue;
    fsys::path cp = e.path() / kCheckpointFileName;
    if (!fsys::exists(cp, ec)) continue;
    auto t = fsys::last_write_time(cp, ec);
    if (best.empty() || t > best_time) {
      best = e.path().string();
      best_time = t;
    }
  }
  return best;
}

void RemoveStalePartials(const std::string& views_dir, uint32_t side, const std::string& keep,
                         pack::PackReporter& reporter) {
  std::string prefix = PartialPrefix(side);
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(views_dir, ec)) {
    long pid = PartialPid(e.path().filename().string(), prefix);
    if (pid < 0 || !ProcessGone(pid) || e.path().string() == keep) continue;
    reporter.Warning("removing " + e.path().string() +
                     ", left by an interrupted view build (--resume continues one instead)");
    fsys::remove_all(e.path(), ec);
  }
}

Result<pack::OnBadImage> OnBadOf(const ViewOptions& options, const format::Manifest& base) {
  if (options.on_bad.has_value()) return *options.on_bad;
  if (base.on_bad == "skip") return pack::OnBadImage::kSkip;
  if (base.on_bad == "keep") return pack::OnBadImage::kKeep;
  return pack::OnBadImage::kFail;
}

}  // namespace

Result<ViewSummary> BuildView(const ViewOptions& options, pack::PackReporter& reporter) {
  if (options.side < format::kMinViewSide || options.side > format::kMaxViewSide) {
    return Status::InvalidArgument("view side " + std::to_string(options.side) + " is outside " +
                                   std::to_string(format::kMinViewSide) + ".." +
                                   std::to_string(format::kMaxViewSide) + " px");
  }
  if (options.quality < 1 || options.quality > 100) {
    return Status::InvalidArgument("--view-quality must be 1..100, not " +
                                   std::to_string(options.quality));
  }
  if (options.shard_size < (64u << 10)) {
    return Status::InvalidArgument("view shard size must be at least 64K");
  }
  MMFS_RETURN_IF_ERROR(InitImageLibrary());
  MMFS_ASSIGN_OR_RETURN(format::LocalDataset local, format::OpenLocalDataset(options.dataset));
  const std::unique_ptr<format::Dataset>& dataset = local.dataset;
  MMFS_ASSIGN_OR_RETURN(pack::OnBadImage on_bad, OnBadOf(options, dataset->manifest()));
  const std::string views_dir = options.dataset + "/" + format::kViewsDirName;
  const std::string final_dir = format::ViewDir(options.dataset, options.side);
  struct stat st;
  if (::lstat(final_dir.c_str(), &st) == 0) {
    return Status::AlreadyExists("view " + std::to_string(options.side) + " of " +
                                 options.dataset + " already exists (" + final_dir +
                                 "); remove it first with 'mmfs view rm " + options.dataset + " " +
                                 std::to_string(options.side) + "'");
  }
  if (::mkdir(views_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "mkdir " + views_dir);
  }
  std::string work = views_dir + "/" + PartialPrefix(options.side) + std::to_string(::getpid());
  bool resume = false;
  if (options.resume) {
    std::string found = FindResumable(views_dir, options.side);
    if (found.empty()) {
      reporter.Warning("nothing to resume for view " + std::to_string(options.side) +
                       "; building it from the start");
    } else if (found != work && ::rename(found.c_str(), work.c_str()) != 0) {
      return Status::FromErrno(errno, "take over " + found);
    } else {
      resume = true;
    }
  }
  RemoveStalePartials(views_dir, options.side, resume ? work : "", reporter);
  if (!resume && ::mkdir(work.c_str(), 0755) != 0) return Status::FromErrno(errno, "mkdir " + work);
  std::error_code ec;
  Builder builder(options, on_bad, *dataset, *local.origin, reporter, work);
  Status started = resume ? builder.Resume() : builder.Start();
  auto result = started.ok() ? builder.Run() : Result<ViewSummary>(started);
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled && builder.finished_shards() > 0) {
      return Status::Cancelled("interrupted after " + std::to_string(builder.finished_shards()) +
                               " finished view shard(s), kept in " + work +
                               "; run the same command with --resume to continue");
    }
    if (result.status().code() == StatusCode::kCancelled) {
      fsys::remove_all(work, ec);
      return Status::Cancelled("interrupted; no view was published");
    }
    fsys::remove_all(work, ec);
    return result.status();
  }
  if (::rename(work.c_str(), final_dir.c_str()) != 0) {
    Status s = Status::FromErrno(errno, "publish " + work + " as " + final_dir);
    fsys::remove_all(work, ec);
    return s;
  }
  MMFS_RETURN_IF_ERROR(FsyncPath(views_dir));
  ViewSummary summary = result.value();
  summary.seconds = builder.Elapsed();
  return summary;
}

Status RemoveView(const std::string& dataset, uint32_t side) {
  const std::string dir = format::ViewDir(dataset, side);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status::NotFound(dataset + " has no view " + std::to_string(side) +
                              " ('mmfs view ls " + dataset + "' lists its views)");
    }
    return Status::FromErrno(errno, "stat " + dir);
  }
  const std::string views_dir = dataset + "/" + format::kViewsDirName;
  const std::string gone = views_dir + "/." + std::to_string(side) + ".removing-" +
                           std::to_string(::getpid());
  if (::rename(dir.c_str(), gone.c_str()) != 0) {
    return Status::FromErrno(errno, "rename " + dir + " to " + gone);
  }
  MMFS_RETURN_IF_ERROR(FsyncPath(views_dir));
  std::error_code ec;
  fsys::remove_all(gone, ec);
  if (ec) return Status::IoError("remove " + gone + ": " + ec.message());
  return Status::Ok();
}

std::vector<PartialView> ListPartials(const std::string& dataset) {
  std::vector<PartialView> out;
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dataset + "/" + format::kViewsDirName, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() < 2 || name[0] != '.') continue;
    size_t dot = name.find('.', 1);
    if (dot == std::string::npos) continue;
    uint32_t side = 0;
    if (!format::ParseViewSide(std::string_view(name).substr(1, dot - 1), &side)) continue;
    long pid = PartialPid(name, PartialPrefix(side));
    if (pid < 0) continue;
    PartialView p;
    p.side = side;
    p.dir = e.path().string();
    p.running = pid != ::getpid() && !ProcessGone(pid);
    auto text = ReadWholeFile(p.dir + "/" + kCheckpointFileName, 1ull << 36);
    if (text.ok()) {
      uint64_t lines = static_cast<uint64_t>(std::count(text->begin(), text->end(), '\n'));
      p.finished_shards = lines > 0 ? lines - 1 : 0;
    }
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const PartialView& a, const PartialView& b) { return a.dir < b.dir; });
  return out;
}

}  // namespace mmfs::view
