// ObjectStream: one shard (object) of an origin read from start to end, in order, with a few
// reads ahead of the reader. `mmfs pack` reads a source tar straight from a bucket through it
// (libarchive's read callback asks for the next block), so that the store's latency is paid
// for `ahead` blocks at once rather than block after block.
//
// The shard is read in blocks of `block_bytes` (the last one shorter), each by one ReadSpan
// call, on threads the stream owns; up to `ahead` reads are in flight at once. Blocks are
// handed out strictly in order, each without a copy: the view points into the bytes the origin
// returned. Memory: at most `ahead` blocks read or being read, plus the one handed out.
//
// Errors: a read's error (after the origin's own retries) is returned as the origin gave it at
// the block it was for, and again at every later call; no block after it is handed out, and
// once it is known no further read is issued (reads already in flight finish and are dropped).
// A block of another length than asked is an IoError naming the shard and the offset.
//
// Ownership: the stream borrows `origin` (it must outlive the stream) and owns its threads and
// the blocks; a view from Next belongs to the stream and is valid until the next call of Next
// or the destructor.
// Thread-safety: one consumer thread calls Next; bytes_handed may be called from any thread.
// Lock order: mu_ is the only lock, never held during a read.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "fs/origin/origin.h"
#include "fs/origin/origin_bytes.h"

namespace mmfs::origin {

struct ObjectStreamOptions {
  // Bytes per read (the last read of the shard shorter). 0: every Next is an InvalidArgument.
  size_t block_bytes = 8 << 20;
  // Reads in flight at most (0 reads as 1), each on its own thread.
  unsigned ahead = 4;
};

class ObjectStream {
 public:
  // Starts reading shard `ref` of `origin` at once, from offset 0 to `size` (its bytes, as
  // ShardSize says). REQUIRES: `origin` outlives the stream.
  ObjectStream(Origin& origin, ShardRef ref, uint64_t size, ObjectStreamOptions options = {});
  // Issues no more reads, waits for those in flight (a ReadSpan cannot be cancelled) and joins
  // the threads.
  ~ObjectStream();
  ObjectStream(const ObjectStream&) = delete;
  ObjectStream& operator=(const ObjectStream&) = delete;

  // The next block in order, valid until the next call of Next or the destructor; an empty view
  // after the last block (and at every call after that). An error: see above.
  Result<std::string_view> Next();
  // Bytes returned by Next so far (progress).
  uint64_t bytes_handed() const { return bytes_handed_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  // Block `index`, read and checked.
  Result<OriginBytes> ReadBlock(uint64_t index);

  Origin& origin_;
  const ShardRef ref_;
  const uint64_t size_;
  const size_t block_bytes_;
  const unsigned ahead_;
  const uint64_t blocks_;  // how many blocks the shard has

  // Consumer-only state (Next's thread).
  OriginBytes current_;  // the block handed out last
  Status failed_;        // the error Next returned, returned again at every later call

  std::mutex mu_;
  std::condition_variable room_;   // workers wait for a free slot, or for the end
  std::condition_variable ready_;  // Next waits for its block
  // Block i's result, once read, in slots_[i % ahead_] until Next takes it.
  std::vector<std::optional<Result<OriginBytes>>> slots_;  // guarded by mu_
  uint64_t next_read_ = 0;  // the next block a worker claims; guarded by mu_
  uint64_t next_hand_ = 0;  // the next block Next hands out; guarded by mu_
  uint64_t end_ = 0;        // no block at or past it is read: blocks_, or one past an error;
                            // guarded by mu_
  bool stop_ = false;       // the destructor runs; guarded by mu_
  std::atomic<uint64_t> bytes_handed_{0};
  std::vector<std::thread> threads_;
};

}  // namespace mmfs::origin
