#include "tools/view/view_output.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>

namespace mmfs::view {

using format::ViewRecord;
using format::ViewRecordKind;

ViewOutput::ViewOutput(const ViewOptions& options, pack::OnBadImage on_bad,
                       const format::Dataset& dataset, pack::PackReporter& reporter,
                       std::string work_dir)
    : options_(options),
      on_bad_(on_bad),
      dataset_(dataset),
      reporter_(reporter),
      work_dir_(std::move(work_dir)),
      shards_(work_dir_, options.shard_size) {
  shards_.set_on_finished([this](const format::ShardInfo& info, std::span<const uint64_t> offsets) {
    return OnShardFinished(info, offsets);
  });
}

Status ViewOutput::Start(std::string_view fingerprint) {
  MMFS_ASSIGN_OR_RETURN(checkpoint_,
                        stage::CheckpointFile::Create(work_dir_ + "/" + stage::kCheckpointFileName,
                                                      EncodeViewCheckpointHeader(fingerprint)));
  return Status::Ok();
}

Status ViewOutput::Resume(std::string_view fingerprint) {
  const std::string path = work_dir_ + "/" + stage::kCheckpointFileName;
  MMFS_ASSIGN_OR_RETURN(
      LoadedViewCheckpoint loaded,
      ReadViewCheckpoint(path, fingerprint, options_.side,
                         [this](const format::ShardInfo& info) { return shards_.IsWhole(info); }));
  MMFS_ASSIGN_OR_RETURN(checkpoint_, stage::CheckpointFile::Continue(path, loaded.usable_bytes));
  shards_.Restore(std::move(loaded.shards), std::move(loaded.record_offsets));
  records_ = std::move(loaded.records);
  counts_ = loaded.counts;
  next_ = loaded.next;
  resumed_ = next_;
  return Status::Ok();
}

Status ViewOutput::Commit(const Candidate& c, ResizeOutcome& out) {
  Status s = Apply(c, out);
  ++next_;  // counted even when it failed: the build stops there
  return s;
}

Status ViewOutput::Apply(const Candidate& c, ResizeOutcome& out) {
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
  return CommitResized(c, **r);
}

Status ViewOutput::CommitResized(const Candidate& c, const ResizedImage& img) {
  std::string_view member(img.bytes);
  uint32_t shard = 0;
  uint64_t key = 0;
  // May finish the shard before this image's (OnShardFinished), whose line then records the
  // candidates committed before this one.
  MMFS_RETURN_IF_ERROR(shards_.Append(std::span<const std::string_view>(&member, 1),
                                      img.bytes.size(), &shard, &key));
  ViewRecord v{};
  v.entry = c.entry;
  v.shard = shard;
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

Status ViewOutput::OnShardFinished(const format::ShardInfo& info,
                                   std::span<const uint64_t> offsets) {
  if (!checkpoint_) return Status::InvalidArgument("a view shard finished before the checkpoint");
  size_t k = 0;
  for (ViewRecord& v : pending_) {
    if (v.kind == static_cast<uint16_t>(ViewRecordKind::kResized)) {
      if (k >= offsets.size()) {
        return Status::Corruption(work_dir_ + "/" + info.file + ": fewer records than written");
      }
      v.data_offset = offsets[k++];
    }
  }
  ViewCheckpointShard line;
  line.info = info;
  line.records = pending_;
  line.next = next_;
  line.counts = counts_;
  // The shard file is complete and synced (ShardWriter::Finish) before the line that names it.
  MMFS_RETURN_IF_ERROR(checkpoint_->Append(EncodeViewCheckpointShard(line)));
  records_.insert(records_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  return Status::Ok();
}

Status ViewOutput::Finish() {
  MMFS_RETURN_IF_ERROR(shards_.FinishShard());
  // Records after the last shard (images left out, no shard open): nothing to wait for.
  records_.insert(records_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  return Status::Ok();
}

void ViewOutput::DropCheckpoint() {
  if (!checkpoint_) return;
  std::string path = checkpoint_->path();
  checkpoint_.reset();
  ::unlink(path.c_str());
}

}  // namespace mmfs::view
