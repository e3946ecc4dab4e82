// RangedReader: serves byte ranges of files too large to load whole, still checking every file's
// XXH3 before serving any of its bytes.
//
// The format keeps one checksum per file, so a file must be read whole once before its first
// byte is served. For a file the reader cannot hold (larger than the largest blob loaded whole,
// or than both the RAM tier's admission limit and the read buffer), the first read streams it
// in chunks through the hash, keeping its first bytes (up to the read buffer's budget) in the
// read buffer, where the reader's next READs find them; the file is then remembered as verified
// and later reads fetch just the range asked for. So the first pass over such a file reads
// 2 x size - (read buffer budget) from the origin and every later pass its size.
//
// Ownership: borrows the origin reader (its reads are demand reads, counted there) and the read
// buffer, which must outlive it. The origin reader owns it (origin_reader.h).
// Thread-safety: all methods are thread-safe; concurrent first reads of one file verify it once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "base/status.h"
#include "cache/read_buffer.h"
#include "fs/format/dataset.h"

namespace mmfs::fs {

class OriginReader;

struct RangedCounters {
  uint64_t verified_files = 0;  // files checked whole by streaming
  uint64_t verify_bytes = 0;    // bytes read to check them
  uint64_t range_reads = 0;     // ranges read from verified files
  uint64_t range_bytes = 0;
};

class RangedReader {
 public:
  RangedReader(OriginReader& origin, cache::ReadBuffer& buffer);

  // Bytes covering [offset, offset + len) of regular file `e`, after its checksum passed once.
  // A Corruption or IoError is returned as is (the caller counts and logs it).
  Result<cache::ReadBuffer::Span> Read(const format::Entry& e, uint64_t offset, size_t len);
  RangedCounters Counters() const;

  // Size of the chunks the checksum pass reads.
  static constexpr uint64_t kVerifyChunk = 4ull << 20;

 private:
  // Reads `e` whole in chunks, checks its sum, keeps its first bytes in the read buffer.
  Status Verify(const format::Entry& e);
  Result<std::string> ReadSpan(const format::Entry& e, uint64_t offset, size_t len);

  OriginReader& origin_;
  cache::ReadBuffer& buffer_;

  mutable std::mutex mu_;
  std::condition_variable verify_done_;
  std::unordered_set<uint32_t> verified_;   // entry indexes; guarded by mu_
  std::unordered_set<uint32_t> verifying_;  // guarded by mu_
  std::atomic<uint64_t> verified_files_{0}, verify_bytes_{0}, range_reads_{0}, range_bytes_{0};
};

}  // namespace mmfs::fs
