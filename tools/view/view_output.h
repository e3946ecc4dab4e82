// The committing half of a view build: what the build has made so far, in its staging directory.
// Each candidate's outcome comes in candidate order (Commit): --on-bad is applied to an image
// that did not decode, a resized image is appended to the view's shards (pack::ShardSequence),
// and the view records are kept. A resized record's offset is known once its shard is finished,
// and that is when the shard's checkpoint line is written (tools/view/view_checkpoint.h), after
// the shard file is synced; Resume takes over what those lines recorded.
//
// Ownership: keeps references to everything it is given; they must outlive it.
// Thread-safety: used by the committing thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/format/view_format.h"
#include "tools/pack/packer.h"
#include "tools/pack/reporter.h"
#include "tools/pack/shard_sequence.h"
#include "tools/stage/checkpoint_file.h"
#include "tools/view/resize_pipeline.h"
#include "tools/view/view_builder.h"
#include "tools/view/view_candidates.h"
#include "tools/view/view_checkpoint.h"

namespace mmfs::view {

class ViewOutput {
 public:
  ViewOutput(const ViewOptions& options, pack::OnBadImage on_bad, const format::Dataset& dataset,
             pack::PackReporter& reporter, std::string work_dir);

  // A new build: a new checkpoint, whose header holds `fingerprint`.
  Status Start(std::string_view fingerprint);
  // Continues an interrupted build of the same `fingerprint`: its finished shards, their records
  // and counts are taken over; the rest is built again.
  Status Resume(std::string_view fingerprint);

  // Commits the next candidate `c` (candidate number next()) with its outcome.
  Status Commit(const Candidate& c, ResizeOutcome& out);
  // Finishes the shard being written, if any; after it every record is final.
  Status Finish();
  // Closes and removes the checkpoint: once the manifest is written, nothing is left to resume.
  void DropCheckpoint();

  uint64_t next() const { return next_; }  // candidates committed
  uint64_t resumed() const { return resumed_; }  // of those, taken over by Resume
  const ViewCounts& counts() const { return counts_; }
  // Every shard started, the one being written included.
  const std::vector<format::ShardInfo>& shards() const { return shards_.shards(); }
  // The records of the finished shards (all of them after Finish), in commit order.
  std::vector<format::ViewRecord>& records() { return records_; }

 private:
  Status Apply(const Candidate& c, ResizeOutcome& out);
  Status CommitResized(const Candidate& c, const ResizedImage& img);
  // The FinishedFn of the shard sequence: offsets into the pending records, the checkpoint line.
  Status OnShardFinished(const format::ShardInfo& info, std::span<const uint64_t> offsets);

  const ViewOptions& options_;
  const pack::OnBadImage on_bad_;
  const format::Dataset& dataset_;
  pack::PackReporter& reporter_;
  const std::string work_dir_;
  pack::ShardSequence shards_;
  std::optional<stage::CheckpointFile> checkpoint_;
  uint64_t next_ = 0;
  uint64_t resumed_ = 0;
  std::vector<format::ViewRecord> pending_;  // since the last finished shard (offsets unknown)
  std::vector<format::ViewRecord> records_;  // of finished shards
  ViewCounts counts_;
};

}  // namespace mmfs::view
