// OriginIo: the seam between the origin reader and the shard files (LevelDB's Env, cut down to
// the one call the daemon makes on the origin). The real one reads through the Dataset; tests
// put a fake in its place to fail or shorten a read and watch the error path.
//
// Ownership: OriginBytes owns its buffer. DatasetIo borrows the dataset, which must outlive it.
// Thread-safety: implementations must be safe for concurrent calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "fs/base/status.h"
#include "fs/format/dataset.h"

namespace mmfs::fs {

// Bytes read from a shard and the buffer that holds them: the dataset's (possibly aligned,
// larger) buffer for real reads, no copy made; a string for fakes.
class OriginBytes {
 public:
  OriginBytes() = default;
  explicit OriginBytes(format::ShardBytes bytes) : owner_(std::move(bytes)) {}
  explicit OriginBytes(std::string bytes) : owner_(std::move(bytes)) {}
  const char* data() const {
    if (const auto* s = std::get_if<std::string>(&owner_)) return s->data();
    return std::get<format::ShardBytes>(owner_).data();
  }
  size_t size() const {
    if (const auto* s = std::get_if<std::string>(&owner_)) return s->size();
    return std::get<format::ShardBytes>(owner_).size();
  }

 private:
  std::variant<format::ShardBytes, std::string> owner_;
};

class OriginIo {
 public:
  virtual ~OriginIo() = default;
  // `len` bytes at `offset` of shard `shard`. A read that returns fewer bytes than asked is an
  // IoError, never a short OriginBytes. REQUIRES: the range lies inside the shard.
  virtual Result<OriginBytes> ReadSpan(uint32_t shard, uint64_t offset, size_t len) = 0;
};

// The shard files of `dataset` (Dataset::ReadShardSpan: direct reads where enabled).
std::unique_ptr<OriginIo> NewDatasetIo(const format::Dataset& dataset);

// `inner`, each read taking at least `delay_us` longer: a slow origin (a remote disk) for tests
// and demonstrations (mmfs mount reads MMFS_TEST_ORIGIN_DELAY_US; tools/mmfs/cmd_mount.cc).
std::unique_ptr<OriginIo> NewDelayedIo(std::unique_ptr<OriginIo> inner, uint64_t delay_us);

}  // namespace mmfs::fs
