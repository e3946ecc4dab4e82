// A READ in two steps (Filesystem::StartRead, FinishLater): what the cache holds is answered at
// once on the calling thread while the misses of a remote origin that hangs wait on the miss
// threads, and every queued READ is answered with the exact bytes once the origin answers.
// No mount: the request thread is the test's own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fs/origin/origin.h"
#include "tests/fs/core/filesystem_fixture.h"

namespace mmfs::fs {
namespace {

using namespace std::chrono_literals;

// The dataset's shards behind a gate, taken for a remote store (it reports request stats):
// while the gate is shut, every read waits, as on a store that does not answer.
class GatedRemoteOrigin final : public origin::OriginWrapper {
 public:
  explicit GatedRemoteOrigin(std::unique_ptr<origin::Origin> target)
      : OriginWrapper(std::move(target)) {}
  Result<origin::OriginBytes> ReadSpan(origin::ShardRef ref, uint64_t offset,
                                       size_t len) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++waiting_;
      cv_.wait(lock, [&] { return open_; });
      --waiting_;
    }
    return OriginWrapper::ReadSpan(ref, offset, len);
  }
  std::optional<origin::RemoteStatsSnapshot> RequestStats() const override {
    origin::RemoteStatsSnapshot s;
    s.url = "http://127.0.0.1:9/gated";
    return s;
  }
  void Set(bool open) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = open;
    }
    cv_.notify_all();
  }
  int waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int waiting_ = 0;
};

class QueuedReadTest : public FilesystemTest {
 protected:
  // A Filesystem over the gated origin, `threads` miss threads, reads of samples only (or
  // `extents`).
  void MakeGated(unsigned threads, ExtentOptions extents = SampleReads().extents) {
    fs_.reset();
    auto ds = format::Dataset::Open(tmp_ / "ds");
    ASSERT_TRUE(ds.ok());
    auto gated = std::make_unique<GatedRemoteOrigin>(testing::LocalOrigin(**ds));
    gate_ = gated.get();
    FilesystemOptions o = SampleReads();
    o.readahead = false;
    o.miss_threads = threads;
    o.extents = std::move(extents);
    fs_ = testing::NewFilesystem(std::move(ds).value(), o, nullptr, std::move(gated));
  }
  void TearDown() override {
    if (gate_ != nullptr) gate_->Set(true);  // nothing left waiting, whatever failed
    fs_.reset();
  }
  std::string Many(int i) const { return std::to_string(i - 1000); }  // many/<i>.txt holds this

  GatedRemoteOrigin* gate_ = nullptr;
};

TEST_F(QueuedReadTest, ACachedFileIsAnsweredAtOnceWhileEveryMissThreadWaitsOnTheOrigin) {
  MakeGated(4);
  const Attr cached = Walk("many/1000.txt");
  EXPECT_EQ(ReadAll(cached.ino), Many(1000));  // now in the RAM tier
  const auto reads = [&] { return fs_->Stats().requests[static_cast<size_t>(Op::kRead)].count; };
  const uint64_t reads_before = reads();
  gate_->Set(false);

  // Twice as many misses as miss threads: four wait on the origin, four in the queue.
  std::mutex mu;
  std::map<uint64_t, Result<ReadData>> answers;
  std::map<uint64_t, int> expected;
  for (int i = 1001; i <= 1008; ++i) {
    const Attr a = Walk("many/" + std::to_string(i) + ".txt");
    expected[a.ino] = i;
    Filesystem::ReadStart start = fs_->StartRead(a.ino, 0, 4096, 0);
    ASSERT_FALSE(start.answer.has_value()) << "a miss of a remote origin is not read here";
    ASSERT_NE(start.pending, nullptr);
    fs_->FinishLater(std::move(start.pending), [&, ino = a.ino](Result<ReadData> r) {
      std::lock_guard<std::mutex> lock(mu);
      answers.emplace(ino, std::move(r));
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return gate_->waiting() == 4; }, 10));
  EXPECT_EQ(fs_->Stats().origin.queued.waiting, 4u);

  for (int round = 0; round < 20; ++round) {
    const auto start = std::chrono::steady_clock::now();
    Filesystem::ReadStart hit = fs_->StartRead(cached.ino, 0, 4096, 0);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(hit.answer.has_value());
    ASSERT_TRUE(hit.answer->ok()) << hit.answer->status().ToString();
    EXPECT_EQ(std::string((*hit.answer)->data, (*hit.answer)->size), Many(1000));
    EXPECT_LT(took, 100ms);
  }
  // A second READ of a file whose load is in flight does not wait for it here either.
  const Attr again = Walk("many/1001.txt");
  Filesystem::ReadStart second = fs_->StartRead(again.ino, 0, 4096, 0);
  EXPECT_FALSE(second.answer.has_value());
  ASSERT_NE(second.pending, nullptr);
  std::atomic<bool> second_done{false};
  fs_->FinishLater(std::move(second.pending), [&](Result<ReadData> r) {
    EXPECT_TRUE(r.ok());
    if (r.ok()) {
      EXPECT_EQ(std::string(r->data, r->size), Many(1001));
    }
    second_done = true;
  });

  gate_->Set(true);
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return answers.size() == expected.size() && second_done.load();
      },
      10));
  for (auto& [ino, r] : answers) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(std::string(r->data, r->size), Many(expected[ino]));
  }
  const StatsSnapshot s = fs_->Stats();
  EXPECT_EQ(s.origin.queued.reads, 9u);
  EXPECT_EQ(s.origin.queued.waiting, 0u);
  EXPECT_EQ(reads() - reads_before, 20u + 9u) << "each READ counted once, queued or not";
}

// A file that an extent read in flight brings along is not waited for on the calling thread:
// it is queued too, and served once the extent lands (without a read of its own).
TEST_F(QueuedReadTest, ANeighbourOfAnExtentInFlightIsNotWaitedForHere) {
  ExtentOptions extents;
  extents.mode = ExtentMode::kFixed;
  extents.fixed_bytes = 64 << 10;
  MakeGated(2, extents);
  gate_->Set(false);
  const Attr first = Walk("many/1100.txt");
  Filesystem::ReadStart a = fs_->StartRead(first.ino, 0, 4096, 0);
  ASSERT_NE(a.pending, nullptr);
  std::atomic<int> done{0};
  fs_->FinishLater(std::move(a.pending), [&](Result<ReadData> r) {
    EXPECT_TRUE(r.ok() && std::string(r->data, r->size) == Many(1100));
    done++;
  });
  ASSERT_TRUE(testing::WaitFor([&] { return gate_->waiting() == 1; }, 10));
  ASSERT_GT(fs_->Stats().extents.extents, 0u) << "the miss reads an extent";

  const Attr next = Walk("many/1101.txt");
  const auto start = std::chrono::steady_clock::now();
  Filesystem::ReadStart b = fs_->StartRead(next.ino, 0, 4096, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << "waited for the extent in flight";
  ASSERT_FALSE(b.answer.has_value());
  fs_->FinishLater(std::move(b.pending), [&](Result<ReadData> r) {
    EXPECT_TRUE(r.ok() && std::string(r->data, r->size) == Many(1101));
    done++;
  });
  gate_->Set(true);
  ASSERT_TRUE(testing::WaitFor([&] { return done.load() == 2; }, 20));
  EXPECT_EQ(fs_->Stats().extents.extents, 1u) << "the neighbour came with the extent";
}

// From a fast local disk a miss costs less than the hand-over to another thread: read at once.
TEST_F(QueuedReadTest, AMissOfAFastLocalOriginIsReadOnTheCallingThread) {
  const Attr a = Walk("many/1010.txt");
  Filesystem::ReadStart start = fs_->StartRead(a.ino, 0, 4096, 0);
  ASSERT_TRUE(start.answer.has_value());
  ASSERT_TRUE(start.answer->ok());
  EXPECT_EQ(std::string((*start.answer)->data, (*start.answer)->size), Many(1010));
  EXPECT_EQ(fs_->Stats().origin.queued.reads, 0u);
}

TEST_F(QueuedReadTest, WithoutMissThreadsEveryReadIsAnsweredOnTheCallingThread) {
  MakeGated(0);
  const Attr a = Walk("many/1011.txt");
  Filesystem::ReadStart start = fs_->StartRead(a.ino, 0, 4096, 0);
  ASSERT_TRUE(start.answer.has_value());
  EXPECT_EQ(std::string((*start.answer)->data, (*start.answer)->size), Many(1011));
}

}  // namespace
}  // namespace mmfs::fs
