// The sequence of shard files a build writes (`mmfs pack`: the dataset's shards; `mmfs view add`:
// the view's): records go in, in key order, into shard-00000.mdb until it holds about the shard
// size of data, then into the next one. Each record lands at a byte offset the index needs (a
// file is served with one pread); the sequence remembers those offsets for every record until
// the index is written. The record keys ("samples") run on across the shards.
//
// A shard is finished (committed, synced, checksummed) before the next one starts, and the
// owner hears of it through the FinishedFn, which is where the resume checkpoint records it.
//
// Thread-safety: used by one thread at a time (the build's committing thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/manifest.h"

namespace mmfs::pack {

class ShardSequence {
 public:
  // Shard files go to `dir`; a shard takes samples while its data stays within `shard_size`
  // (a single larger sample gets a shard of its own).
  ShardSequence(std::string dir, uint64_t shard_size)
      : dir_(std::move(dir)), shard_size_(shard_size) {}

  // Called once a shard file is complete and its checksum known, with the offsets of its records.
  using FinishedFn = std::function<Status(const format::ShardInfo&, std::span<const uint64_t>)>;
  void set_on_finished(FinishedFn fn) { on_finished_ = std::move(fn); }

  // Whether the shard file `info` names is in `dir` with the size `info` records: a checkpoint
  // line is trusted only while its shard file is.
  bool IsWhole(const format::ShardInfo& info) const;

  // Continues after the shards an interrupted build finished (--resume): their files are in `dir`
  // already, `record_offsets` holds the offset of each of their records. The shard files after
  // them are incomplete: they are removed, to be written again from their first record.
  void Restore(std::vector<format::ShardInfo> shards, std::vector<uint64_t> record_offsets);

  // Appends the record of the next sample (`members` concatenated, `bytes` in all), starting a
  // new shard when this one is full, and says where it went.
  Status Append(std::span<const std::string_view> members, uint64_t bytes, uint32_t* shard,
                uint64_t* sample);

  // Finishes the shard being written, if any.
  Status FinishShard();

  // The byte offset of `sample`'s record in its shard file.
  // REQUIRES: the shard holding `sample` is finished.
  uint64_t RecordOffset(uint64_t sample) const { return record_offsets_[sample]; }
  const std::vector<format::ShardInfo>& shards() const { return shards_; }
  uint64_t samples() const { return next_sample_; }

 private:
  std::string dir_;
  uint64_t shard_size_;
  std::unique_ptr<format::ShardWriter> writer_;  // the shard being written, if any
  std::vector<format::ShardInfo> shards_;
  std::vector<uint64_t> record_offsets_;  // by sample number, for the finished shards
  uint64_t next_sample_ = 0;
  FinishedFn on_finished_;
};

// The file name of shard number `shard` ("shard-00042.mdb").
std::string ShardFileName(uint32_t shard);

}  // namespace mmfs::pack
