// The second phase of `mmfs pack`: the samples of the scanned tree go into the shards, in path
// order (depth-first, names sorted), so a sequential walk of the mount is a sequential read of
// the shards.
//
// Every sample group, from a folder (a run of files sharing a key, SampleRunEnd) or from a tar
// (members sharing a folder and key anywhere in the archive, TarGrouper), takes one route
// (AddGroup): while a resumed pack is still inside what its checkpoint recorded, the group is
// matched against the record and filled from it; after that it is read, checked and checksummed
// on the SamplePipeline and committed in input order, where --on-bad is applied, its record
// appended to the ShardSequence and the group remembered for the next checkpoint line. Each
// member's node is filled with what the index needs (shard, sample, offset, checksum, size of
// the image) or marked skipped.
//
// Ownership: the writer keeps references to everything it is given; they must outlive it. The
// tree passed to Write must outlive the Write call, which stops every preparation before it
// returns.
// Thread-safety: used by the packing thread; it runs the preparations on the pipeline's threads.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/pack/checkpoint.h"
#include "tools/pack/packer.h"
#include "tools/pack/progress.h"
#include "tools/pack/reporter.h"
#include "tools/pack/sample_pipeline.h"
#include "tools/pack/shard_sequence.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

class SampleWriter {
 public:
  // Spill files of ungrouped tars go to `work_dir`; counts go to `summary` and `progress`.
  SampleWriter(const PackOptions& options, PackReporter& reporter, std::string work_dir,
               ShardSequence& shards, PackProgressTracker& progress, PackSummary& summary);

  // The groups an interrupted pack committed (its checkpoint), in order: the first groups met
  // must be these, and are taken from them instead of being read again.
  void Resume(std::deque<CheckpointGroup> groups) { resume_groups_ = std::move(groups); }

  // Writes every sample below `root` and commits them all. InvalidArgument when a resumed pack
  // finds sources other than its checkpoint recorded.
  Status Write(SourceNode* root);

  // The groups committed since the last call, for the checkpoint line of the shard that has just
  // been finished.
  std::vector<CheckpointGroup> TakeCommittedGroups();

 private:
  Status CheckCancelled() const;
  Status WriteFolder(SourceNode* dir);
  Status WriteTar(SourceNode* dir);
  // The one route of a sample group. `contents`: the members' bytes when already read (tar);
  // nullptr when they are to be read from their files.
  Status AddGroup(std::vector<SourceNode*> members, std::vector<std::string>* contents);
  Status ApplyResumed(const std::vector<SourceNode*>& members, bool from_tar);
  Status CommitSample(PreparedSample& p);

  const PackOptions& options_;
  PackReporter& reporter_;
  std::string work_dir_;
  ShardSequence& shards_;
  PackProgressTracker& progress_;
  PackSummary& summary_;
  std::vector<CheckpointGroup> committed_groups_;  // since the last checkpoint line
  std::deque<CheckpointGroup> resume_groups_;      // from the checkpoint, not yet reached
  SamplePipeline pipeline_;
};

}  // namespace mmfs::pack
