// Grouping the members of a tar into samples by key across the whole archive.
//
// WebDataset writers put a sample's members next to each other, but `tar -C dir -cf x.tar .`
// writes them in directory order, so `./k.txt` may come long before `./k.jpg`. Taking only
// neighbours as one sample split such samples and dropped their captions as "no image". Instead:
// a first pass over the headers (PlanTarSamples: no data is read; a seek per member in a plain
// tar) counts each key's members, and while the data is read a TarGrouper holds the members of
// each sample until the last one has come, then hands the sample over whole. For a grouped tar
// it holds one sample at a time, as before; for an ungrouped one, the members held past a memory
// limit wait in an unlinked spill file next to the dataset being built (at most the tar's size).
//
// A tar read once from a bucket (TarReader::OpenStream) has no first pass: its grouper takes
// neighbours as one sample (TarGrouper::Neighbours), which is what WebDataset writers produce,
// and refuses a key that comes back after another, naming it, instead of splitting its sample.
//
// Thread-safety: a TarGrouper is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

// The sample a member path belongs to: its folder and the name up to the first dot
// ("a/b/1.jpg" -> "a/b/1", "1.jpg" -> "1"); two members with the same key are one sample.
std::string MemberKey(std::string_view path);

struct TarSamplePlan {
  std::unordered_map<std::string, uint32_t> members_of;  // key -> its regular-file members
  bool grouped = true;  // every key's members are consecutive in the archive
  uint64_t members = 0;
};

// Reads the headers of the tar at `path` the way TarReader does (same members kept and refused,
// `max_member_bytes` as TarReader::Open) and counts the members of each sample. Reports nothing:
// the pass that reads the data reports what it skips.
Result<TarSamplePlan> PlanTarSamples(const std::string& path, uint64_t max_member_bytes);

// One complete sample: its members in archive order, with their bytes.
struct TarSample {
  std::string key;
  std::vector<SourceNode*> nodes;  // not owned
  std::vector<std::string> contents;
};

class TarGrouper {
 public:
  // `plan` must outlive the grouper. Spill files go to `spill_dir`; `memory_limit` bounds the
  // bytes of incomplete samples held in memory (a single sample may exceed it only while it is
  // handed over).
  TarGrouper(const TarSamplePlan& plan, std::string spill_dir, uint64_t memory_limit);
  // A grouper with no plan, for an archive read once: consecutive members with one key are a
  // sample, handed over when a member of another key comes (or by Finish). A key that comes
  // back after another is InvalidArgument naming the key (the caller names the archive). A
  // sample's members past `memory_limit` wait in a spill file in `spill_dir`, as above.
  static TarGrouper Neighbours(std::string spill_dir, uint64_t memory_limit);

  // Adds the member at `path` (its node and bytes). When it completes its sample, `*done` is
  // that sample and true is returned. Corruption if the archive does not match the plan (it
  // changed between the passes).
  Result<bool> Add(const std::string& path, SourceNode* node, std::string data, TarSample* done);

  // At the end of the archive: a sample still held (the last one of a Neighbours grouper) is
  // `*done` and true is returned; false when none is.
  Result<bool> Finish(TarSample* done);
  // The keys still waiting for members (the archive lost members between the passes).
  std::vector<std::string> Incomplete() const;
  uint64_t spilled_bytes() const { return spill_end_; }

 private:
  struct Held {
    std::string data;          // in memory, or
    uint64_t spill_offset = 0;  // in the spill file when `spilled`
    uint64_t size = 0;
    bool spilled = false;
  };
  struct Pending {
    std::vector<SourceNode*> nodes;
    std::vector<Held> held;
  };
  Status Spill(Held* h);
  Status Unspill(Held* h);
  Result<bool> AddNeighbour(const std::string& key, SourceNode* node, std::string data,
                            TarSample* done);
  Status HandOver(const std::string& key, TarSample* done);

  const TarSamplePlan* plan_;  // null: a Neighbours grouper
  std::string current_;        // the key a Neighbours grouper holds now ("": none)
  std::string spill_dir_;
  uint64_t memory_limit_;
  uint64_t in_memory_ = 0;
  std::unordered_map<std::string, Pending> pending_;
  std::unordered_set<std::string> handed_over_;  // keys of the samples complete so far
  UniqueFd spill_fd_;  // created on first use, unlinked at once
  std::string spill_name_;  // for messages
  uint64_t spill_end_ = 0;
};

}  // namespace mmfs::pack
