#include "tools/view/view_builder.h"

// BuildView itself: checks the options and the dataset, stages the build in
// DST/views/.N.partial-PID (continuing an interrupted build's with --resume) and publishes it as
// DST/views/N (tools/stage/staging.h). The phases are modules of their own: view_candidates (the
// base images, in shard order), resize_pipeline (read and resized on -j threads, handed back in
// order), view_output (--on-bad, the view's shards and records, the checkpoint) and
// view_index_and_manifest.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/file_util.h"
#include "base/json_text.h"
#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "fs/format/view_format.h"
#include "fs/format/view_set.h"
#include "tools/stage/checkpoint_file.h"
#include "tools/stage/staging.h"
#include "tools/view/image_resizer.h"
#include "tools/view/resize_pipeline.h"
#include "tools/view/view_candidates.h"
#include "tools/view/view_index_and_manifest.h"
#include "tools/view/view_output.h"

namespace mmfs::view {

namespace fsys = std::filesystem;

namespace {

// One build of one view into one staging directory: the phases in order.
class Builder {
 public:
  Builder(const ViewOptions& options, pack::OnBadImage on_bad, const format::Dataset& dataset,
          origin::Origin& shards, pack::PackReporter& reporter, std::string work_dir)
      : options_(options),
        on_bad_(on_bad),
        dataset_(dataset),
        origin_(shards),
        reporter_(reporter),
        work_dir_(std::move(work_dir)),
        output_(options, on_bad, dataset, reporter, work_dir_) {}

  // Everything that changes the output; a checkpoint is only resumed with the same.
  std::string Fingerprint() const {
    return JsonText({{"side", options_.side},
                     {"quality", options_.quality},
                     {"on_bad", pack::OnBadName(on_bad_)},
                     {"shard_size", options_.shard_size},
                     {"base_index", HexU64(dataset_.manifest().index_checksum)},
                     {"resampler", ResamplerName()}});
  }

  Status Start() { return output_.Start(Fingerprint()); }
  // Takes over the finished shards of an interrupted build; the rest is built again.
  Status Resume() { return output_.Resume(Fingerprint()); }

  Result<ViewSummary> Run() {
    start_ = std::chrono::steady_clock::now();
    const std::vector<Candidate> candidates = CollectCandidates(dataset_, options_.side);
    const uint64_t resumed = output_.resumed();
    pack::PackProgress progress;
    progress.files_total = candidates.size();
    for (const Candidate& c : candidates) progress.bytes_total += c.size;
    for (size_t i = 0; i < output_.next() && i < candidates.size(); ++i) {
      progress.files_done++;
      progress.bytes_done += candidates[i].size;
    }
    reporter_.Phase("view " + std::to_string(options_.side) + ": " +
                    std::to_string(candidates.size()) + " images" +
                    (resumed > 0 ? ", " + std::to_string(resumed) + " done before" : ""));
    ResizePipeline pipeline(dataset_, origin_, options_.side, options_.quality, options_.jobs,
                            options_.cancel);
    MMFS_RETURN_IF_ERROR(pipeline.Run(
        candidates, static_cast<size_t>(output_.next()), [&](size_t i, ResizeOutcome& out) {
          Status committed = output_.Commit(candidates[i], out);
          progress.files_done++;
          progress.bytes_done += candidates[i].size;
          progress.elapsed_seconds = Elapsed();
          if (progress.bytes_done < progress.bytes_total) reporter_.Progress(progress);
          return committed;
        }));
    MMFS_RETURN_IF_ERROR(output_.Finish());
    reporter_.Phase("writing the view's index");
    ViewMaking making;
    making.side = options_.side;
    making.quality = options_.quality;
    making.on_bad = on_bad_;
    MMFS_ASSIGN_OR_RETURN(uint64_t index_size,
                          WriteViewIndexAndManifest(output_.records(), output_.shards(),
                                                    output_.counts(), dataset_.manifest(),
                                                    making, work_dir_));
    output_.DropCheckpoint();
    MMFS_RETURN_IF_ERROR(FsyncPath(work_dir_));
    progress.finished = true;
    progress.elapsed_seconds = Elapsed();
    reporter_.Progress(progress);
    const ViewCounts& counts = output_.counts();
    ViewSummary s;
    s.side = options_.side;
    s.images = candidates.size();
    s.resized = counts.resized;
    s.unchanged_images = counts.unchanged;
    s.bad_images = counts.bad;
    s.omitted = counts.omitted;
    s.resumed = resumed;
    s.source_bytes = counts.source_bytes;
    s.view_bytes = counts.view_bytes;
    s.shards = output_.shards().size();
    s.view_bytes_on_disk = index_size;
    for (const auto& sh : output_.shards()) s.view_bytes_on_disk += sh.size;
    s.dataset_bytes_on_disk = dataset_.manifest().index_size;
    for (const auto& sh : dataset_.manifest().shards) s.dataset_bytes_on_disk += sh.size;
    return s;
  }

  // Shards started, the one being written included: what the message of an interrupted build
  // has always called its finished shards.
  uint64_t started_shards() const { return output_.shards().size(); }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  const ViewOptions& options_;
  const pack::OnBadImage on_bad_;
  const format::Dataset& dataset_;
  origin::Origin& origin_;  // the dataset's shards (kDatasetTree), read by the resize workers
  pack::PackReporter& reporter_;
  const std::string work_dir_;
  ViewOutput output_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

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
  stage::Staging staging(views_dir, std::to_string(options.side));
  const std::string& work = staging.dir();
  stage::Staging::Notes notes;
  notes.nothing_to_resume = [&] {
    reporter.Warning("nothing to resume for view " + std::to_string(options.side) +
                     "; building it from the start");
  };
  notes.removing = [&](const std::string& dir) {
    reporter.Warning("removing " + dir +
                     ", left by an interrupted view build (--resume continues one instead)");
  };
  MMFS_ASSIGN_OR_RETURN(bool resume, staging.Begin(options.resume, 0755, notes));
  Builder builder(options, on_bad, *dataset, *local.origin, reporter, work);
  Status started = resume ? builder.Resume() : builder.Start();
  auto result = started.ok() ? builder.Run() : Result<ViewSummary>(started);
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled && builder.started_shards() > 0) {
      return Status::Cancelled("interrupted after " + std::to_string(builder.started_shards()) +
                               " finished view shard(s), kept in " + work +
                               "; run the same command with --resume to continue");
    }
    staging.Discard();
    if (result.status().code() == StatusCode::kCancelled) {
      return Status::Cancelled("interrupted; no view was published");
    }
    return result.status();
  }
  MMFS_RETURN_IF_ERROR(
      staging.Publish(/*replace=*/false, "publish " + work + " as " + final_dir));
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
    std::string name;
    long pid = 0;
    uint32_t side = 0;
    if (!stage::ParseStagingName(e.path().filename().string(), &name, &pid) ||
        !format::ParseViewSide(name, &side)) {
      continue;
    }
    PartialView p;
    p.side = side;
    p.dir = e.path().string();
    p.running = !stage::ProcessGone(pid);
    p.finished_shards = stage::CountCheckpointLines(p.dir + "/" + stage::kCheckpointFileName);
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const PartialView& a, const PartialView& b) { return a.dir < b.dir; });
  return out;
}

}  // namespace mmfs::view
