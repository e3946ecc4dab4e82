#include "fs/origin/object_stream.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

namespace mmfs::origin {

ObjectStream::ObjectStream(Origin& origin, ShardRef ref, uint64_t size, ObjectStreamOptions options)
    : origin_(origin),
      ref_(ref),
      size_(size),
      block_bytes_(options.block_bytes),
      ahead_(std::max(options.ahead, 1u)),
      blocks_(block_bytes_ == 0 ? 0 : size / block_bytes_ + (size % block_bytes_ != 0 ? 1 : 0)),
      slots_(ahead_),
      end_(blocks_) {
  if (block_bytes_ == 0) {
    failed_ = Status::InvalidArgument(origin_.ShardName(ref_) + ": a block of 0 bytes");
    return;
  }
  const uint64_t threads = std::min<uint64_t>(ahead_, blocks_);
  for (uint64_t i = 0; i < threads; ++i) {
    try {
      if (i == 0) threads_.reserve(threads);
      threads_.emplace_back([this] { Loop(); });
    } catch (const std::exception& e) {  // std::system_error, std::bad_alloc
      // Fewer threads read fewer blocks at once; none cannot read at all.
      if (threads_.empty()) {
        failed_ = Status::ResourceExhausted(origin_.ShardName(ref_) +
                                            ": no thread to read with: " + e.what());
      }
      break;
    }
  }
}

ObjectStream::~ObjectStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  room_.notify_all();
  for (std::thread& t : threads_) t.join();
}

Result<std::string_view> ObjectStream::Next() {
  current_ = OriginBytes();  // the last view ends here, and its memory with it
  if (!failed_.ok()) return failed_;
  std::unique_lock<std::mutex> lock(mu_);
  if (next_hand_ == blocks_) return std::string_view();
  std::optional<Result<OriginBytes>>& slot = slots_[next_hand_ % ahead_];
  ready_.wait(lock, [&] { return slot.has_value(); });
  Result<OriginBytes> got = std::move(*slot);
  slot.reset();
  ++next_hand_;
  lock.unlock();
  room_.notify_one();
  if (!got.ok()) {
    failed_ = got.status();
    return failed_;
  }
  current_ = std::move(got).value();  // not moved again while the view is out
  bytes_handed_.fetch_add(current_.size(), std::memory_order_relaxed);
  return std::string_view(current_.data(), current_.size());
}

void ObjectStream::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // A block may be read when its slot is free: Next has taken the block `ahead_` before it.
    room_.wait(lock,
               [&] { return stop_ || next_read_ >= end_ || next_read_ < next_hand_ + ahead_; });
    if (stop_ || next_read_ >= end_) return;
    const uint64_t index = next_read_++;
    lock.unlock();
    // On a thread of its own: an exception here would end the process.
    Result<OriginBytes> got = Status::ResourceExhausted("");
    try {
      got = ReadBlock(index);
    } catch (const std::exception& e) {
      got = Status::ResourceExhausted(origin_.ShardName(ref_) + ": reading block " +
                                      std::to_string(index) + ": " + e.what());
    }
    lock.lock();
    if (!got.ok() && index + 1 < end_) {
      end_ = index + 1;
      room_.notify_all();  // the others stop claiming
    }
    slots_[index % ahead_] = std::move(got);
    ready_.notify_one();
  }
}

Result<OriginBytes> ObjectStream::ReadBlock(uint64_t index) {
  const uint64_t offset = index * block_bytes_;
  const size_t len = static_cast<size_t>(std::min<uint64_t>(block_bytes_, size_ - offset));
  Result<OriginBytes> got = origin_.ReadSpan(ref_, offset, len);
  if (got.ok() && got->size() != len) {
    return Status::IoError(origin_.ShardName(ref_) + ": " + std::to_string(got->size()) +
                           " bytes at offset " + std::to_string(offset) + ", " +
                           std::to_string(len) + " asked for");
  }
  return got;
}

}  // namespace mmfs::origin
