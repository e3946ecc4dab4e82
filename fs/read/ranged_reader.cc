#include "fs/read/ranged_reader.h"

#include "fs/origin/read_deadline.h"
#include "fs/read/origin_reader.h"

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <string>

namespace mmfs::fs {

RangedReader::RangedReader(OriginReader& origin, cache::ReadBuffer& buffer)
    : origin_(origin), buffer_(buffer) {}

Result<std::string> RangedReader::ReadSpan(const format::Entry& e, uint64_t offset, size_t len) {
  MMFS_ASSIGN_OR_RETURN(OriginBytes raw,
                        origin_.ReadSpan({origin::kDatasetTree, e.record.shard},
                                         e.record.data_offset + offset, len, ReadCause::kDemand));
  return std::string(raw.data(), raw.size());
}

Status RangedReader::Verify(const format::Entry& e) {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("out of memory");
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owned(state, XXH3_freeState);
  XXH3_64bits_reset(state);
  // The reader's next READs come from the start of the file: keep as much of it as the read
  // buffer can hold, so those bytes are not read a second time.
  const uint64_t keep = std::min<uint64_t>(e.size(), buffer_.budget());
  std::string prefix;
  prefix.reserve(static_cast<size_t>(keep));
  for (uint64_t pos = 0; pos < e.size(); pos += kVerifyChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kVerifyChunk, e.size() - pos));
    MMFS_ASSIGN_OR_RETURN(std::string chunk, ReadSpan(e, pos, n));
    verify_bytes_.fetch_add(n, std::memory_order_relaxed);
    XXH3_64bits_update(state, chunk.data(), n);
    if (pos < keep) prefix.append(chunk, 0, static_cast<size_t>(std::min<uint64_t>(n, keep - pos)));
  }
  MMFS_RETURN_IF_ERROR(origin_.dataset().CheckSum(e, XXH3_64bits_digest(state)));
  verified_files_.fetch_add(1, std::memory_order_relaxed);
  buffer_.Put(e.index, 0, std::make_shared<const std::string>(std::move(prefix)));
  return Status::Ok();
}

Result<cache::ReadBuffer::Span> RangedReader::Read(const format::Entry& e, uint64_t offset,
                                                   size_t len) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Another reader's check of this file in progress: wait for it rather than read it twice.
    verify_done_.wait(lock, [&] { return verifying_.count(e.index) == 0; });
    if (verified_.count(e.index) == 0) {
      verifying_.insert(e.index);
      lock.unlock();
      Status s;
      {
        // Every READ of the file waits for this one check, which may take many requests: each
        // has its own budget, not the READ's bound (which no large file could be checked in).
        origin::ScopedNoReadDeadline whole_file;
        s = Verify(e);
      }
      lock.lock();
      verifying_.erase(e.index);
      if (s.ok()) verified_.insert(e.index);
      verify_done_.notify_all();
      if (!s.ok()) return s;
    }
  }
  if (auto span = buffer_.Find(e.index, offset, len)) return *span;
  MMFS_ASSIGN_OR_RETURN(std::string bytes, ReadSpan(e, offset, len));
  range_reads_.fetch_add(1, std::memory_order_relaxed);
  range_bytes_.fetch_add(len, std::memory_order_relaxed);
  return cache::ReadBuffer::Span{std::make_shared<const std::string>(std::move(bytes)), offset};
}

RangedCounters RangedReader::Counters() const {
  RangedCounters c;
  c.verified_files = verified_files_.load(std::memory_order_relaxed);
  c.verify_bytes = verify_bytes_.load(std::memory_order_relaxed);
  c.range_reads = range_reads_.load(std::memory_order_relaxed);
  c.range_bytes = range_bytes_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace mmfs::fs
