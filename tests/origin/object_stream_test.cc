// A shard read in order with reads ahead (fs/origin/object_stream.h), over the in-memory origin:
// the blocks make up the shard's bytes exactly, reads overlap up to `ahead` and no further, an
// error or a short read stops the stream at its block, and destroying a stream mid-read waits
// for its reads and issues no more.
#include "fs/origin/object_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/fakes/memory_origin.h"

namespace mmfs::origin {
namespace {

constexpr size_t kStreamBlock = 4096;

// `n` bytes in which no two blocks of kStreamBlock are alike, so a block out of order shows.
std::string StreamBytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 4093) & 0xff);
  return s;
}

// An origin over a MemoryOrigin that counts its reads (started, in flight, the most in flight at
// once, finished) and makes the read at one offset take one of the memory origin's faults.
class StreamProbeOrigin final : public OriginWrapper {
 public:
  enum class Fault { kNone, kFail, kShort };

  explicit StreamProbeOrigin(std::unique_ptr<testing::MemoryOrigin> memory)
      : OriginWrapper(std::move(memory)) {}

  testing::MemoryOrigin& memory() { return static_cast<testing::MemoryOrigin&>(target()); }
  // Before a stream starts: the read at `offset` takes `fault`. Reads are then made one at a
  // time, so that no other read takes the fault.
  void FaultAt(uint64_t offset, Fault fault) {
    fault_offset_ = offset;
    fault_ = fault;
  }

  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override {
    started_.fetch_add(1);
    const int now = in_flight_.fetch_add(1) + 1;
    int seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    std::optional<Result<OriginBytes>> got;
    if (fault_ == Fault::kNone) {
      got.emplace(OriginWrapper::ReadSpan(ref, offset, len));
    } else {
      std::lock_guard<std::mutex> lock(serial_);
      if (offset == fault_offset_) {
        fault_ == Fault::kFail ? memory().FailNextReads(1) : memory().ShortenNextReads(1);
      }
      got.emplace(OriginWrapper::ReadSpan(ref, offset, len));
    }
    in_flight_.fetch_sub(1);
    finished_.fetch_add(1);
    return std::move(*got);
  }

  int started() const { return started_.load(); }
  int in_flight() const { return in_flight_.load(); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int finished() const { return finished_.load(); }

 private:
  uint64_t fault_offset_ = 0;
  Fault fault_ = Fault::kNone;
  std::mutex serial_;
  std::atomic<int> started_{0}, in_flight_{0}, max_in_flight_{0}, finished_{0};
};

class ObjectStreamTest : public ::testing::Test {
 protected:
  // A probe over one shard holding `bytes` (shard-00000.mdb).
  void Hold(std::string bytes) {
    probe_ = std::make_unique<StreamProbeOrigin>(testing::MemoryOrigin::FromStrings({bytes}));
    bytes_ = std::move(bytes);
  }
  std::unique_ptr<ObjectStream> Open(unsigned ahead) {
    return std::make_unique<ObjectStream>(*probe_, ShardRef{kDatasetTree, 0}, bytes_.size(),
                                          ObjectStreamOptions{kStreamBlock, ahead});
  }
  // Waits until `done` holds, or fails the test after 10 s.
  template <typename F>
  void PollUntil(F done, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "waiting for " << what;
      std::this_thread::yield();
    }
  }

  std::unique_ptr<StreamProbeOrigin> probe_;
  std::string bytes_;
};

TEST_F(ObjectStreamTest, BlocksMakeUpTheShardExactlyAtEverySize) {
  const size_t sizes[] = {
      0, 1, kStreamBlock - 1, kStreamBlock, kStreamBlock + 1, 5 * kStreamBlock + 123};
  for (size_t size : sizes) {
    for (unsigned ahead : {1u, 4u}) {
      SCOPED_TRACE(std::to_string(size) + " bytes, ahead " + std::to_string(ahead));
      Hold(StreamBytes(size));
      auto stream = Open(ahead);
      std::string got;
      int blocks = 0;
      for (;;) {
        auto block = stream->Next();
        ASSERT_TRUE(block.ok()) << block.status().ToString();
        if (block->empty()) break;
        // Every block but the last is whole.
        EXPECT_EQ(block->size(), std::min(kStreamBlock, size - got.size()));
        got.append(*block);
        ++blocks;
        EXPECT_EQ(stream->bytes_handed(), got.size());
      }
      EXPECT_EQ(got, bytes_);
      EXPECT_EQ(blocks, static_cast<int>((size + kStreamBlock - 1) / kStreamBlock));
      EXPECT_EQ(probe_->started(), blocks) << "one read per block";
      auto again = stream->Next();
      ASSERT_TRUE(again.ok());
      EXPECT_TRUE(again->empty()) << "the end stays the end";
    }
  }
}

TEST_F(ObjectStreamTest, ReadsOverlapUpToAheadAndNoFurther) {
  constexpr unsigned kAhead = 4;
  constexpr int kBlocks = 8;
  Hold(StreamBytes(kBlocks * kStreamBlock));
  probe_->memory().SetReadDelay(std::chrono::milliseconds(50));
  auto stream = Open(kAhead);
  std::string got;
  for (int handed = 0;; ++handed) {
    // Block `handed` is the next: blocks before it are gone, at most kAhead from it on read.
    EXPECT_LE(probe_->started(), handed + static_cast<int>(kAhead));
    auto block = stream->Next();
    ASSERT_TRUE(block.ok()) << block.status().ToString();
    if (block->empty()) break;
    got.append(*block);
  }
  EXPECT_EQ(got, bytes_);
  EXPECT_GT(probe_->max_in_flight(), 1) << "the reads did not overlap";
  EXPECT_LE(probe_->max_in_flight(), static_cast<int>(kAhead));
  EXPECT_EQ(probe_->started(), kBlocks);
}

TEST_F(ObjectStreamTest, AnErrorEndsTheStreamAtItsBlock) {
  constexpr int kBad = 2;
  constexpr unsigned kAhead = 4;
  Hold(StreamBytes(12 * kStreamBlock));
  probe_->FaultAt(kBad * kStreamBlock, StreamProbeOrigin::Fault::kFail);
  auto stream = Open(kAhead);
  for (int i = 0; i < kBad; ++i) {
    auto block = stream->Next();
    ASSERT_TRUE(block.ok()) << i << ": " << block.status().ToString();
    EXPECT_EQ(*block, std::string_view(bytes_).substr(i * kStreamBlock, kStreamBlock));
  }
  auto bad = stream->Next();
  ASSERT_FALSE(bad.ok()) << "block " << kBad << " was handed out";
  EXPECT_EQ(bad.status().code(), StatusCode::kIoError);
  EXPECT_NE(bad.status().message().find("shard-00000.mdb"), std::string::npos)
      << bad.status().ToString();
  auto again = stream->Next();
  ASSERT_FALSE(again.ok()) << "a block after the error was handed out";
  EXPECT_EQ(again.status().message(), bad.status().message());
  EXPECT_EQ(stream->bytes_handed(), kBad * kStreamBlock);
  // Reads ahead of the error were claimed before it was known (at most kAhead past the blocks
  // handed out); none is issued once it is.
  stream.reset();
  EXPECT_LE(probe_->started(), kBad + static_cast<int>(kAhead)) << "reads after the error";
}

TEST_F(ObjectStreamTest, AShortReadIsAnErrorNotAShortBlock) {
  Hold(StreamBytes(3 * kStreamBlock));
  probe_->FaultAt(kStreamBlock, StreamProbeOrigin::Fault::kShort);
  auto stream = Open(2);
  auto first = stream->Next();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), kStreamBlock);
  auto shortened = stream->Next();
  ASSERT_FALSE(shortened.ok()) << "a block of " << shortened->size() << " bytes";
  const std::string& why = shortened.status().message();
  EXPECT_NE(why.find("shard-00000.mdb"), std::string::npos) << why;
  EXPECT_NE(why.find("offset " + std::to_string(kStreamBlock)), std::string::npos) << why;
  EXPECT_FALSE(stream->Next().ok());
}

TEST_F(ObjectStreamTest, DestroyingMidReadWaitsForReadsAndIssuesNoMore) {
  constexpr unsigned kAhead = 4;
  constexpr int kBlocks = 16;
  Hold(StreamBytes(kBlocks * kStreamBlock));
  probe_->memory().SetReadDelay(std::chrono::milliseconds(50));
  auto stream = Open(kAhead);
  auto first = stream->Next();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Block 0 handed out: blocks 1 to kAhead may be read, and are (or are being).
  const int allowed = 1 + static_cast<int>(kAhead);
  PollUntil([&] { return probe_->started() == allowed; }, "the reads ahead to start");
  stream.reset();
  EXPECT_EQ(probe_->in_flight(), 0) << "the destructor returned with reads in flight";
  EXPECT_EQ(probe_->started(), allowed) << "reads were issued while stopping";
  EXPECT_EQ(probe_->finished(), allowed);
  EXPECT_EQ(probe_->memory().reads(), allowed);
}

}  // namespace
}  // namespace mmfs::origin
