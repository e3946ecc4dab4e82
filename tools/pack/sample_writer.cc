#include "tools/pack/sample_writer.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "fs/format/format.h"
#include "tools/pack/bucket_source.h"
#include "tools/pack/tar_grouping.h"
#include "tools/pack/tar_source.h"

namespace mmfs::pack {

namespace {

// Members of incomplete samples of an ungrouped tar held in memory; the rest wait on disk.
constexpr uint64_t kTarGroupingMemory = 256ull << 20;

bool IsType(const SourceNode& n, uint32_t type) {
  return (n.mode & format::kModeTypeMask) == type;
}

// Where a file came from, for messages.
std::string Describe(const SourceNode& f) {
  return f.source_path.empty() ? f.name : f.source_path;
}

}  // namespace

SampleWriter::SampleWriter(const PackOptions& options, PackReporter& reporter,
                           std::string work_dir, ShardSequence& shards,
                           PackProgressTracker& progress, PackSummary& summary)
    : options_(options),
      reporter_(reporter),
      work_dir_(std::move(work_dir)),
      shards_(shards),
      progress_(progress),
      summary_(summary),
      pipeline_(options.jobs, [this](PreparedSample& p) { return CommitSample(p); }) {}

Status SampleWriter::Write(SourceNode* root) {
  Status s = WriteFolder(root);
  if (s.ok()) s = pipeline_.Finish();
  if (!s.ok()) {
    // Queued preparations point into the tree: they stop before the caller may free it.
    pipeline_.Stop();
    return s;
  }
  if (!resume_groups_.empty()) {
    return Status::InvalidArgument("the sources hold fewer samples than the interrupted pack "
                                   "recorded; run without --resume");
  }
  return Status::Ok();
}

std::vector<CheckpointGroup> SampleWriter::TakeCommittedGroups() {
  std::vector<CheckpointGroup> groups = std::move(committed_groups_);
  committed_groups_.clear();
  return groups;
}

Status SampleWriter::CheckCancelled() const {
  if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
    return Status::Cancelled("pack interrupted");
  }
  return Status::Ok();
}

// Depth-first, names sorted: the order of the shards.
Status SampleWriter::WriteFolder(SourceNode* dir) {
  if (!dir->tar_path.empty()) return WriteTar(dir);
  auto& kids = dir->children;
  for (size_t i = 0; i < kids.size();) {
    SourceNode& node = kids[i];
    if (IsType(node, format::kModeDirectory)) {
      MMFS_RETURN_IF_ERROR(WriteFolder(&node));
      ++i;
      continue;
    }
    if (!IsType(node, format::kModeRegular)) {
      ++i;
      continue;
    }
    size_t end = SampleRunEnd(kids, i);
    MMFS_RETURN_IF_ERROR(CheckCancelled());
    std::vector<SourceNode*> members;
    for (size_t j = i; j < end; ++j) members.push_back(&kids[j]);
    MMFS_RETURN_IF_ERROR(AddGroup(std::move(members), /*contents=*/nullptr));
    i = end;
  }
  return Status::Ok();
}

Status SampleWriter::AddGroup(std::vector<SourceNode*> members,
                              std::vector<std::string>* contents) {
  bool from_tar = contents != nullptr;
  if (!resume_groups_.empty()) return ApplyResumed(members, from_tar);
  if (!from_tar) {
    ReadLimits limits;
    limits.max_file_bytes = options_.max_file_bytes;
    limits.keep_bad_images = options_.on_bad == OnBadImage::kKeep;
    uint64_t bytes = 0;
    for (const SourceNode* m : members) bytes += m->size;
    return pipeline_.Submit(
        [members = std::move(members), limits]() { return PrepareFromFiles(members, limits); },
        bytes);
  }
  // std::function needs a copyable callable: the bytes travel behind a shared_ptr.
  auto shared = std::make_shared<PreparedSample>();
  shared->members = std::move(members);
  shared->contents = std::move(*contents);
  shared->from_tar = true;
  uint64_t bytes = 0;
  for (const std::string& c : shared->contents) bytes += c.size();
  return pipeline_.Submit(
      [shared]() {
        CheckAndHash(*shared);
        return std::move(*shared);
      },
      bytes);
}

// Streams one tar: members sharing a directory and key are one sample wherever they are in
// the archive (tar_grouping.h); the folder's tree is built from the member paths as they come.
Status SampleWriter::WriteTar(SourceNode* dir) {
  const std::string& path = dir->tar_path;
  // A tar in a bucket is read once, front to back (bucket_source.h); a local one is read twice,
  // its headers first, so that members of one sample may be anywhere in it.
  const bool from_bucket = IsRemoteSource(path);
  TarSamplePlan plan;
  std::unique_ptr<BucketTar> bucket;
  std::unique_ptr<TarReader> local;
  if (from_bucket) {
    MMFS_ASSIGN_OR_RETURN(std::string name, RemoteTarName(path));
    BucketTarObject object{path, std::move(name), dir->size};
    MMFS_ASSIGN_OR_RETURN(bucket, BucketTar::Open(object, options_.remote, reporter_,
                                                  options_.max_file_bytes));
  } else {
    MMFS_ASSIGN_OR_RETURN(plan, PlanTarSamples(path, options_.max_file_bytes));
    if (!plan.grouped) {
      reporter_.Phase(path + ": the members of a sample are not next to each other; grouping "
                      "them by key across the archive");
    }
    MMFS_ASSIGN_OR_RETURN(local, TarReader::Open(path, reporter_, options_.max_file_bytes));
  }
  TarReader* reader = from_bucket ? &bucket->reader() : local.get();
  TarGrouper grouper = from_bucket ? TarGrouper::Neighbours(work_dir_, kTarGroupingMemory)
                                   : TarGrouper(plan, work_dir_, kTarGroupingMemory);
  // Member nodes live in `files` until the end, keyed by path; pointers into a std::map stay.
  std::map<std::string, SourceNode> files;
  std::set<std::string> dirs;
  // Samples in flight point into `files`. On an early return (a damaged or duplicate member)
  // they must stop before `files` goes: this guard, declared after it, runs first.
  struct StopUnlessFinished {
    SamplePipeline& pipeline;
    bool finished = false;
    ~StopUnlessFinished() {
      if (!finished) pipeline.Stop();
    }
  } stop_guard{pipeline_};
  PackProgress& progress = progress_.counts();
  uint64_t base_bytes = progress.bytes_done;
  auto submit = [&](TarSample& sample) -> Status {
    bool has_image = std::any_of(sample.nodes.begin(), sample.nodes.end(),
                                 [](const SourceNode* n) { return IsImageName(n->name); });
    if (has_image) return AddGroup(std::move(sample.nodes), &sample.contents);
    // img2dataset leaves the caption and metadata of a failed download: not a sample.
    summary_.samples_without_image++;
    std::string names;
    for (const SourceNode* n : sample.nodes) names += (names.empty() ? "" : ", ") + n->name;
    if (summary_.samples_without_image <= 20) {
      reporter_.Warning("skipping sample '" + sample.key + "' in " + path + ": no image (" +
                        names + ")");
    }
    for (SourceNode* n : sample.nodes) n->skipped = true;
    summary_.skipped += sample.nodes.size();
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
    progress.files_done++;
    progress.bytes_done = base_bytes + reader->bytes_consumed();
    auto complete = grouper.Add(m.path, &node, std::move(m.data), &sample);
    if (!complete.ok()) return complete.status().WithContext(path);
    if (*complete) MMFS_RETURN_IF_ERROR(submit(sample));
  }
  MMFS_ASSIGN_OR_RETURN(bool last, grouper.Finish(&sample));
  if (last) MMFS_RETURN_IF_ERROR(submit(sample));
  if (!grouper.Incomplete().empty()) {
    return Status::Corruption(path + ": sample '" + grouper.Incomplete().front() +
                              "' lost members since the archive was first read: it changed "
                              "while packing");
  }
  progress.bytes_done = base_bytes + dir->size;
  // Samples still in flight point into `files`: let them land before the nodes move.
  MMFS_RETURN_IF_ERROR(pipeline_.Finish());
  stop_guard.finished = true;
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

// Fills a group's nodes from the checkpoint instead of reading and checking them again.
Status SampleWriter::ApplyResumed(const std::vector<SourceNode*>& members, bool from_tar) {
  CheckpointGroup g = std::move(resume_groups_.front());
  resume_groups_.pop_front();
  if (g.members.size() != members.size() || g.names_sum != CheckpointNamesSum(members)) {
    return Status::InvalidArgument("the sources changed since the interrupted pack (" +
                                   Describe(*members.front()) + " is not what it recorded); run "
                                   "without --resume");
  }
  bool bad_sample = false;
  for (size_t j = 0; j < members.size(); ++j) {
    SourceNode& f = *members[j];
    const CheckpointMember& m = g.members[j];
    if (!from_tar) {
      progress_.counts().files_done++;
      progress_.counts().bytes_done += f.size;
    }
    if (m.outcome != MemberOutcome::kPacked) {
      f.skipped = true;
      summary_.skipped++;
      if (m.outcome == MemberOutcome::kBadImage) {
        summary_.bad_images++;
        bad_sample = true;
      }
      continue;
    }
    f.checksum = m.checksum;
    f.width = m.width;
    f.height = m.height;
    f.offset_in_record = m.offset_in_record;
    f.shard = g.shard;
    f.sample = static_cast<uint64_t>(g.sample);
  }
  if (bad_sample && options_.on_bad == OnBadImage::kSkip) summary_.samples_with_bad_image++;
  return Status::Ok();
}

// In input order: applies --on-bad, appends the sample and records where it landed.
Status SampleWriter::CommitSample(PreparedSample& p) {
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
      progress_.counts().files_done++;
      progress_.counts().bytes_done += f.size;
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
  CheckpointGroup group;
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
    group.sample = static_cast<int64_t>(sample);
    group.shard = shard;
  }
  group.names_sum = CheckpointNamesSum(p.members);
  for (size_t j = 0; j < p.members.size(); ++j) {
    const SourceNode* f = p.members[j];
    CheckpointMember m;
    m.outcome = !f->skipped            ? MemberOutcome::kPacked
                : !p.images[j].ok()    ? MemberOutcome::kBadImage
                                       : MemberOutcome::kLeftOutWithSample;
    m.checksum = f->checksum;
    m.width = f->width;
    m.height = f->height;
    m.offset_in_record = f->offset_in_record;
    group.members.push_back(m);
  }
  committed_groups_.push_back(std::move(group));
  progress_.Report(/*finished=*/false);
  return Status::Ok();
}

}  // namespace mmfs::pack
