#include "tools/pack/packer.h"

// Pack() itself: checks the destination, builds the dataset in a staging directory next to it
// (continuing an interrupted pack's with --resume) and publishes it there (tools/stage/staging.h).
// The phases are modules of their own: source_scan (the tree), sample_writer (the shards, through
// the sample_pipeline and the shard_sequence, with the checkpoint), index_and_manifest.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>
#include <xxhash.h>

#include "base/file_util.h"
#include "base/json_text.h"
#include "fs/format/format.h"
#include "fs/origin/s3_location.h"
#include "fs/origin/s3_upload.h"
#include "tools/pack/bucket_destination.h"
#include "tools/pack/bucket_source.h"
#include "tools/pack/checkpoint.h"
#include "tools/pack/index_and_manifest.h"
#include "tools/pack/progress.h"
#include "tools/pack/sample_writer.h"
#include "tools/pack/shard_sequence.h"
#include "tools/pack/source_access.h"
#include "tools/pack/source_scan.h"
#include "tools/stage/staging.h"

namespace mmfs::pack {

namespace fsys = std::filesystem;

const char* OnBadName(OnBadImage v) {
  switch (v) {
    case OnBadImage::kFail: return "fail";
    case OnBadImage::kSkip: return "skip";
    case OnBadImage::kKeep: return "keep";
  }
  return "fail";
}

namespace {

// One pack into one work directory: the phases in order, and the checkpoint that lets it resume.
// With a bucket (`bucket` not null), each finished shard is uploaded and leaves the work
// directory, and the index and the manifest follow the last one (bucket_destination.h).
class Packer {
 public:
  Packer(const PackOptions& options, PackReporter& reporter, std::string work_dir, bool resume,
         origin::S3Uploader* bucket = nullptr)
      : resume_(resume),
        bucket_(bucket),
        options_(options),
        reporter_(reporter),
        work_dir_(std::move(work_dir)),
        progress_(reporter),
        shards_(work_dir_, options.shard_size),
        writer_(options, reporter, work_dir_, shards_, progress_, summary_) {
    // The checkpoint line of a shard is written once the shard file is whole.
    shards_.set_on_finished([this](const format::ShardInfo& info,
                                   std::span<const uint64_t> offsets) -> Status {
      if (!checkpoint_) return Status::InvalidArgument("a shard finished before the checkpoint");
      CheckpointShard line;
      line.info = info;
      line.record_offsets.assign(offsets.begin(), offsets.end());
      line.groups = writer_.TakeCommittedGroups();
      MMFS_RETURN_IF_ERROR(checkpoint_->Append(line));
      return uploads_ ? uploads_->Add(info) : Status::Ok();
    });
    if (bucket_ != nullptr) {
      uploads_.emplace(*bucket_, work_dir_, options_.cancel);
      progress_.set_bytes_uploaded([this] { return bucket_->bytes_sent(); });
    }
  }

  // The objects in the bucket a failed pack may leave, in the order to remove them: the
  // manifest and the index once their uploads began (the manifest first: no reader may find it
  // without its shards), then the shards uploaded by this run and by the runs it resumed.
  // Stops the uploads first.
  std::vector<std::string> StopUploads() {
    std::vector<std::string> objects;
    if (!uploads_) return objects;
    uploads_->Stop();
    if (publishing_) objects = {format::kManifestFileName, format::kIndexFileName};
    for (size_t i = 0; i < restored_shards_; ++i) objects.push_back(shards_.shards()[i].file);
    for (std::string& o : uploads_->uploaded()) objects.push_back(std::move(o));
    return objects;
  }
  // Whether the index's and the manifest's uploads have begun.
  bool publishing() const { return publishing_; }
  // Shards in the bucket (uploaded by this run or by those it resumed).
  size_t shards_in_bucket() const {
    return restored_shards_ + (uploads_ ? uploads_->uploaded().size() : 0);
  }

  // Shards finished (and checkpointed) by this run.
  uint64_t finished_shards() const { return checkpoint_ ? checkpoint_->appended() : 0; }
  bool keep_work_dir() const { return keep_work_dir_; }
  double Elapsed() const { return progress_.Elapsed(); }

  Result<PackSummary> Run() {
    MMFS_ASSIGN_OR_RETURN(ScannedSources scanned, ScanSources(options_, reporter_, &summary_));
    progress_.counts().files_total = scanned.files;
    progress_.counts().bytes_total = scanned.bytes;
    reporter_.Phase(scanned.tars > 0 ? "packing " + std::to_string(scanned.tars) +
                                           " tar files and " + std::to_string(scanned.files) +
                                           " files"
                                     : "packing " + std::to_string(scanned.files) + " files");
    MMFS_RETURN_IF_ERROR(StartOrResume());
    MMFS_RETURN_IF_ERROR(writer_.Write(&scanned.root));
    MMFS_RETURN_IF_ERROR(shards_.FinishShard());
    if (uploads_) {
      reporter_.Phase("uploading the last shards to " + options_.destination);
      MMFS_RETURN_IF_ERROR(uploads_->Finish());
    }
    progress_.Report(/*finished=*/true);
    if (bucket_ == nullptr) {
      ::unlink(checkpoint_->path().c_str());
    } else {
      // A bucket's checkpoint is kept until the dataset is published, so a resumed pack may
      // find the index and manifest an earlier run wrote here: they are written afresh.
      for (const char* name : {format::kIndexFileName, format::kManifestFileName}) {
        ::unlink((work_dir_ + "/" + name).c_str());
      }
    }
    reporter_.Phase("writing index");
    MMFS_RETURN_IF_ERROR(WriteIndexAndManifest(scanned.root, shards_, options_, scanned.layouts,
                                               work_dir_, &summary_));
    if (bucket_ != nullptr) {
      // The manifest last: a reader of the URL sees the dataset whole or not at all.
      publishing_ = true;
      for (const char* name : {format::kIndexFileName, format::kManifestFileName}) {
        MMFS_RETURN_IF_ERROR(bucket_->PutFile(name, work_dir_ + "/" + name));
      }
      summary_.bytes_uploaded = bucket_->bytes_sent();
      return summary_;
    }
    // Shards hold every file's bytes: no more users may read them than may read each source.
    MMFS_ASSIGN_OR_RETURN(OutputModes modes, RestrictOutputModes(work_dir_, scanned.access));
    if ((modes.file_mode & 0004) == 0) {
      reporter_.Phase(std::string("not every source file is readable by other users: the "
                                  "dataset's files are made ") +
                      ((modes.file_mode & 0040) != 0 ? "0640 in a 0750" : "0600 in a 0700") +
                      " folder");
    }
    return summary_;
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
    // A bucket source on another store is another source: its store is in the fingerprint
    // (--endpoint, else AWS_ENDPOINT_URL, as the listing takes them). Packs without one keep
    // the fingerprint they had, and stay resumable across versions.
    if (std::any_of(options_.sources.begin(), options_.sources.end(), IsBucketSource)) {
      const char* env = std::getenv("AWS_ENDPOINT_URL");
      j["endpoint"] = !options_.remote.endpoint.empty() ? options_.remote.endpoint
                      : env != nullptr                 ? std::string(env)
                                                       : std::string();
    }
    return JsonText(j);
  }

  Status StartOrResume() {
    std::string path = work_dir_ + "/" + kCheckpointFileName;
    if (!resume_) {
      MMFS_ASSIGN_OR_RETURN(checkpoint_, CheckpointWriter::Create(path, Fingerprint()));
      return Status::Ok();
    }
    // A bucket's shard is trusted when the bucket holds the very one (its size and checksum):
    // its local file left when it was uploaded.
    Status look_error;  // a shard the bucket could not be asked about stops the resume
    auto shard_is_whole = [this, &look_error](const format::ShardInfo& info) {
      if (bucket_ == nullptr) return shards_.IsWhole(info);
      if (!look_error.ok()) return false;
      Result<bool> there = ShardIsInBucket(*bucket_, info);
      if (!there.ok()) look_error = there.status();
      return there.ok() && *there;
    };
    Result<LoadedCheckpoint> loaded = ReadCheckpoint(path, Fingerprint(), shard_is_whole);
    if (!look_error.ok()) {
      keep_work_dir_ = true;  // resumable once the bucket answers
      return look_error;
    }
    Result<CheckpointWriter> writer =
        loaded.ok() ? CheckpointWriter::Continue(path, loaded->usable_bytes) : loaded.status();
    if (!writer.ok()) {
      keep_work_dir_ = true;  // still resumable with the right options
      return writer.status();
    }
    checkpoint_ = std::move(writer).value();
    reporter_.Phase("resuming after " + std::to_string(loaded->shards.size()) +
                    " finished shards (" + std::to_string(loaded->record_offsets.size()) +
                    " samples)");
    restored_shards_ = loaded->shards.size();
    shards_.Restore(std::move(loaded->shards), std::move(loaded->record_offsets));
    writer_.Resume(std::move(loaded->groups));
    return Status::Ok();
  }

  const bool resume_;
  origin::S3Uploader* const bucket_;  // not owned; null for a local destination
  bool keep_work_dir_ = false;
  size_t restored_shards_ = 0;  // finished by the runs this one resumed
  bool publishing_ = false;     // the index's and the manifest's uploads have begun
  const PackOptions& options_;
  PackReporter& reporter_;
  std::string work_dir_;
  PackSummary summary_;
  PackProgressTracker progress_;
  ShardSequence shards_;
  std::optional<CheckpointWriter> checkpoint_;
  SampleWriter writer_;
  std::optional<ShardUploader> uploads_;  // a bucket's; declared last, so stopped first
};

bool IsInsideDir(const fsys::path& path, const fsys::path& dir) {
  auto p = path.lexically_normal().string();
  auto d = dir.lexically_normal().string();
  return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/');
}

// Pack() into a bucket: staged on this machine a few shards at a time (bucket_destination.h).
Result<PackSummary> PackIntoBucket(const PackOptions& options, PackReporter& reporter) {
  std::string url = options.destination;
  while (!url.empty() && url.back() == '/') url.pop_back();
  for (const std::string& source : options.sources) {
    std::string prefix = source;
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (IsBucketSource(source) && (url == prefix || url.rfind(prefix + "/", 0) == 0)) {
      return Status::InvalidArgument("destination " + url + " is inside the source " + source +
                                     "; choose a place outside it");
    }
  }
  MMFS_ASSIGN_OR_RETURN(std::unique_ptr<origin::S3Uploader> bucket,
                        origin::S3Uploader::Open(url, options.remote));
  Result<std::optional<origin::RemoteObject>> manifest = bucket->Head(format::kManifestFileName);
  if (!manifest.ok()) {
    // S3 answers 403 for a key that is not there when the caller may not list the bucket.
    if (manifest.status().message().find("HTTP 403") != std::string::npos) {
      return manifest.status().WithNote(" (mmfs looks for a dataset there first: without "
                                        "s3:ListBucket on the bucket, S3 answers a missing "
                                        "object with 403)");
    }
    return manifest.status();
  }
  if (*manifest) {
    if (!options.force) {
      return Status::AlreadyExists(url + " already holds a dataset; use --force to replace it");
    }
    // Its shards are overwritten one by one: no reader may take the old manifest with them.
    reporter.Warning("removing the manifest of the dataset at " + url +
                     ": it cannot be mounted until this pack publishes the new one");
    MMFS_RETURN_IF_ERROR(bucket->Delete(format::kManifestFileName));
  }
  std::string staging_parent = options.staging_dir;
  if (staging_parent.empty()) {
    MMFS_ASSIGN_OR_RETURN(staging_parent, DefaultStagingDir());
  }
  std::error_code ec;
  fsys::create_directories(staging_parent, ec);
  if (ec) return Status::FromErrno(ec.value(), "--staging-dir " + staging_parent);
  // The staged shards would be packed again on --resume (or read while they are removed).
  const fsys::path staging_real = fsys::weakly_canonical(staging_parent, ec);
  for (const std::string& source : options.sources) {
    if (IsRemoteSource(source)) continue;
    const fsys::path src = fsys::weakly_canonical(source, ec);
    if (!ec && IsInsideDir(staging_real, src)) {
      return Status::InvalidArgument("the staging directory " + staging_parent +
                                     " is inside the source " + source +
                                     "; give --staging-dir outside it");
    }
  }
  // One staging directory per destination: an interrupted pack to it is found by --resume.
  stage::Staging staging(staging_parent, "bucket-" + HexU64(XXH3_64bits(url.data(), url.size())));
  const std::string& work = staging.dir();
  stage::Staging::Notes notes;
  notes.nothing_to_resume = [&] {
    reporter.Warning("nothing to resume for " + url + " in " + staging_parent +
                     "; packing from the start");
  };
  notes.removing = [&](const std::string& dir) {
    reporter.Warning("removing " + dir +
                     ", left by an interrupted pack (--resume continues one instead)");
  };
  MMFS_ASSIGN_OR_RETURN(bool resume, staging.Begin(options.resume, 0700, notes));
  Packer packer(options, reporter, work, resume, bucket.get());
  Result<PackSummary> result = packer.Run();
  if (result.ok()) {
    staging.Discard();
    result->seconds = packer.Elapsed();
    return result;
  }
  std::vector<std::string> objects = packer.StopUploads();
  const size_t shards_kept = packer.shards_in_bucket();
  const StatusCode code = result.status().code();
  if (code == StatusCode::kCancelled && shards_kept > 0) {
    return Status::Cancelled("interrupted after " + std::to_string(shards_kept) +
                             " shards uploaded to " + url + " (staged in " + work +
                             "); run the same command with --resume to continue");
  }
  if (packer.keep_work_dir()) return result.status().WithContext("kept " + work);
  // Anything but bad input (a store or a disk that failed, a full disk, an object gone or
  // changed on the way) may go away: what is uploaded stays, for --resume, rather than be
  // fetched, packed and sent again. Nothing is published: a manifest that went up is removed.
  const bool bad_input = code == StatusCode::kInvalidArgument || code == StatusCode::kAlreadyExists;
  if (!bad_input && shards_kept > 0) {
    Status removed =
        packer.publishing() ? bucket->Delete(format::kManifestFileName) : Status::Ok();
    return result.status().WithNote(
        "; " + std::to_string(shards_kept) + " shards uploaded to " + url +
        " are kept: run the same command with --resume to continue" +
        (removed.ok() ? std::string() : " (and remove " + url + "/" +
                                            format::kManifestFileName + ": " +
                                            removed.message() + ")"));
  }
  // Bad input (a damaged image under --on-bad fail, a tar that cannot be packed): what this
  // pack put in the bucket is removed, and the staging directory with it once nothing is left
  // there to resume.
  std::vector<std::string> left;
  Status first_refusal;
  for (const std::string& name : objects) {
    Status removed = bucket->Delete(name);
    if (removed.ok()) continue;
    left.push_back(bucket->Shown(name));
    if (first_refusal.ok()) first_refusal = removed;
  }
  if (left.empty()) {
    staging.Discard();
    return result.status();
  }
  std::string list;
  for (const std::string& o : left) list += (list.empty() ? "" : ", ") + o;
  return result.status().WithNote("; these objects could not be removed (" +
                                  first_refusal.message() + "): " + list);
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
  if (origin::IsHttpUrl(options.destination)) {
    return Status::InvalidArgument(options.destination +
                                   ": a dataset is written to a directory or an s3:// URL, not "
                                   "to an http(s):// one");
  }
  if (origin::IsS3Url(options.destination)) return PackIntoBucket(options, reporter);
  std::error_code ec;
  fsys::path dst = fsys::absolute(options.destination, ec).lexically_normal();
  if (ec || dst.filename().empty()) {
    dst = fsys::absolute(options.destination, ec).lexically_normal().parent_path();
  }
  fsys::path dst_parent = fsys::weakly_canonical(dst.parent_path(), ec);
  for (const std::string& source : options.sources) {
    if (IsRemoteSource(source)) continue;  // not a place on this machine
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
  // Built next to DST (same filesystem, so the final rename is atomic). Private while it is
  // written: the modes it may have are known at the end (RestrictOutputModes).
  stage::Staging staging(dst.parent_path().string(), dst.filename().string());
  const std::string& work = staging.dir();
  stage::Staging::Notes notes;
  notes.nothing_to_resume = [&] {
    reporter.Warning("nothing to resume for " + dst.string() + "; packing from the start");
  };
  notes.removing = [&](const std::string& dir) {
    reporter.Warning("removing " + dir +
                     ", left by an interrupted pack (--resume continues one instead)");
  };
  MMFS_ASSIGN_OR_RETURN(bool resume, staging.Begin(options.resume, 0700, notes));
  Packer packer(options, reporter, work, resume);
  auto result = packer.Run();
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled && packer.finished_shards() > 0) {
      return Status::Cancelled("interrupted after " + std::to_string(packer.finished_shards()) +
                               " finished shards, kept in " + work +
                               "; run the same command with --resume to continue");
    }
    if (packer.keep_work_dir()) return result.status().WithContext("kept " + work);
    staging.Discard();
    return result.status();
  }
  MMFS_RETURN_IF_ERROR(
      staging.Publish(/*replace=*/dst_exists, "rename " + work + " to " + dst.string()));
  PackSummary summary = result.value();
  summary.seconds = packer.Elapsed();
  return summary;
}

}  // namespace mmfs::pack
