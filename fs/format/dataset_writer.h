// Writing the pieces of a packed dataset: LMDB shard files and the index file.
//
// The packer (tools/pack) decides what goes where; this module only knows the bytes of
// fs/format/format.h. A ShardWriter appends sample records to one single-file LMDB environment and,
// when finished, reports the byte offset of each record's value inside the file, which the index
// stores so that the mount can serve a file with one pread.
//
// Thread-safety: a ShardWriter is used by one thread at a time.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fs/base/status.h"
#include "fs/format/format.h"

namespace mmfs::format {

class ShardWriter {
 public:
  // Creates a new LMDB environment file at `path`; fails if it exists.
  static Result<std::unique_ptr<ShardWriter>> Create(const std::string& path);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends the record of one sample: key = `sample` (big-endian), value = the members' bytes
  // concatenated in order.
  // REQUIRES: `sample` greater than every sample appended before.
  Status Append(uint64_t sample, std::span<const std::string_view> members);

  // Commits, syncs and closes the environment, then maps it read-only and returns the byte
  // offset inside the file of each record's value, in append order.
  Result<std::vector<uint64_t>> Finish();

  uint64_t data_bytes() const { return data_bytes_; }
  uint64_t samples() const { return samples_; }
  const std::string& path() const { return path_; }

 private:
  explicit ShardWriter(std::string path) : path_(std::move(path)) {}
  Status Lmdb(int rc, std::string_view what) const;
  Status BeginTxn();
  Status CommitTxn();
  // Commits and grows the map when `bytes` more might not fit.
  Status EnsureRoom(uint64_t bytes);

  std::string path_;
  MDB_env* env_ = nullptr;   // owned
  MDB_txn* txn_ = nullptr;   // owned; the open write transaction, if any
  MDB_dbi dbi_ = 0;
  uint64_t map_size_ = 0;
  uint64_t data_bytes_ = 0;
  uint64_t txn_bytes_ = 0;
  uint64_t samples_ = 0;
  uint64_t last_sample_ = 0;
  std::vector<uint64_t> keys_;
};

struct IndexFileInfo {
  uint64_t size = 0;
  uint64_t checksum = 0;  // XXH3-64 of the whole file
};

// Writes index.mmfs: header, `entries`, then `strings`; fsyncs it.
Result<IndexFileInfo> WriteIndexFile(const std::string& path,
                                     std::span<const EntryRecord> entries,
                                     std::string_view strings);

// Big-endian 8-byte LMDB key of a sample.
std::string SampleKey(uint64_t sample);

}  // namespace mmfs::format
