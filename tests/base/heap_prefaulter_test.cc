#include "base/heap_prefaulter.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/test_util.h"

namespace mmfs {
namespace {

using testing::WaitFor;

constexpr size_t kMiB = size_t{1} << 20;

// An anonymous mapping standing in for the heap: the prefaulter keeps [base, edge) populated,
// and the test moves the edge as an allocator moves the program break. Small pages only, so that
// a populated page is exactly one page whatever the kernel's THP setting.
class FakeHeap {
 public:
  explicit FakeHeap(size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (base_ != nullptr) ::madvise(base_, bytes, MADV_NOHUGEPAGE);
    edge_ = reinterpret_cast<uintptr_t>(base_);
  }
  ~FakeHeap() {
    if (base_ != nullptr) ::munmap(base_, bytes_);
  }
  char* base() const { return base_; }
  uintptr_t edge() const { return edge_.load(); }
  void Grow(size_t bytes) { edge_ += bytes; }
  void Shrink(size_t bytes) { edge_ -= bytes; }
  // Pages of [base + from, base + to) the kernel has in memory (mincore).
  size_t ResidentPages(size_t from, size_t to) const {
    std::vector<unsigned char> v((to - from + kPage - 1) / kPage);
    if (::mincore(base_ + from, to - from, v.data()) != 0) return 0;
    size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
  }

  static inline const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

 private:
  size_t bytes_;
  char* base_;
  std::atomic<uintptr_t> edge_;
};

class HeapPrefaulterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HeapPrefaulter::Supported()) {
      GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE (Linux 5.14)";
    }
  }
};

TEST_F(HeapPrefaulterTest, PopulatesWhatTheHeapGrewByAndNothingAboveIt) {
  FakeHeap heap(32 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  const size_t page = FakeHeap::kPage;
  heap.Grow(page);
  HeapPrefaulter prefaulter([&] { return heap.edge(); });
  heap.Grow(8 * kMiB);
  // The allocator writes its header into the new part before anyone nudges: it must survive.
  std::memcpy(heap.base() + page, "header", 6);
  heap.base()[page + 5 * kMiB] = 'x';
  prefaulter.Nudge();
  const size_t grown = 8 * kMiB / page;
  ASSERT_TRUE(WaitFor([&] { return heap.ResidentPages(page, page + 8 * kMiB) == grown; }, 30))
      << heap.ResidentPages(page, page + 8 * kMiB) << " of " << grown << " pages resident";
  EXPECT_EQ(heap.ResidentPages(0, page), 0u) << "below the edge at start: left alone";
  EXPECT_EQ(heap.ResidentPages(page + 8 * kMiB, 32 * kMiB), 0u) << "above the edge";
  EXPECT_TRUE(WaitFor([&] { return prefaulter.counters().rounds == 1; }, 30));
  // Of the 8 MiB, two pages were already there: the kernel counts what it was asked.
  EXPECT_EQ(prefaulter.counters().populated_bytes, 8 * kMiB);
  EXPECT_EQ(std::memcmp(heap.base() + page, "header", 6), 0);
  EXPECT_EQ(heap.base()[page + 5 * kMiB], 'x');
}

TEST_F(HeapPrefaulterTest, AShrunkHeapIsFollowedDownAndPopulatedAgainAsItGrows) {
  FakeHeap heap(16 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  HeapPrefaulter prefaulter([&] { return heap.edge(); });
  prefaulter.Nudge();  // nothing grew: no round
  heap.Grow(4 * kMiB);
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().populated_bytes == 4 * kMiB; }, 30));
  // The heap gives 2 MiB back (a trim), then grows 4 MiB: the prefaulter populates from where
  // the heap shrank to, not from where it had got to before.
  heap.Shrink(2 * kMiB);
  ::madvise(heap.base() + 2 * kMiB, 2 * kMiB, MADV_DONTNEED);
  ASSERT_EQ(heap.ResidentPages(0, 4 * kMiB), 2 * kMiB / FakeHeap::kPage);
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().rounds == 2; }, 30));
  heap.Grow(4 * kMiB);
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return heap.ResidentPages(0, 6 * kMiB) == 6 * kMiB / FakeHeap::kPage; },
                      30))
      << heap.ResidentPages(0, 6 * kMiB);
  EXPECT_EQ(heap.ResidentPages(6 * kMiB, 16 * kMiB), 0u);
  // Rounds are counted as they end: the third is the growth's, and no nudge without growth
  // counted one.
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().rounds >= 3; }, 30));
  EXPECT_EQ(prefaulter.counters().rounds, 3u) << "the nudge without growth counted a round";
}

// An edge past the end of the mapping (memory that is not the heap's any more): the kernel
// refuses the part beyond it, what came before is populated, and the thread goes on serving.
TEST_F(HeapPrefaulterTest, ARefusedStepEndsTheRoundAndTheNextGrowthIsServed) {
  FakeHeap heap(8 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  // The heap's last 2 MiB are unmapped under the prefaulter, as a trim unmaps them: that step
  // is refused.
  ::munmap(heap.base() + 6 * kMiB, 2 * kMiB);
  HeapPrefaulter prefaulter([&] { return heap.edge(); });
  heap.Grow(8 * kMiB);
  prefaulter.Nudge();
  // The round is counted once it has ended, so its bytes are all counted by then.
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().rounds == 1; }, 30));
  EXPECT_EQ(heap.ResidentPages(0, 6 * kMiB), 6 * kMiB / FakeHeap::kPage);
  EXPECT_EQ(prefaulter.counters().populated_bytes, 6 * kMiB);
  // Mapped again (the heap grew back over it): the next nudge populates it.
  void* back = ::mmap(heap.base() + 6 * kMiB, 2 * kMiB, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  ASSERT_NE(back, MAP_FAILED);
  ::madvise(back, 2 * kMiB, MADV_NOHUGEPAGE);
  prefaulter.Nudge();
  EXPECT_TRUE(WaitFor([&] { return prefaulter.counters().populated_bytes == 8 * kMiB; }, 30))
      << prefaulter.counters().populated_bytes;
  EXPECT_EQ(heap.ResidentPages(6 * kMiB, 8 * kMiB), 2 * kMiB / FakeHeap::kPage);
}

// The destructor stops the thread between two steps: a growth of 2 GiB is not populated whole.
TEST_F(HeapPrefaulterTest, StopsBetweenStepsOfALargeGrowth) {
  constexpr size_t kLarge = size_t{2} << 30;
  FakeHeap heap(kLarge);
  ASSERT_NE(heap.base(), nullptr);
  auto prefaulter = std::make_unique<HeapPrefaulter>([&] { return heap.edge(); });
  heap.Grow(kLarge);
  prefaulter->Nudge();
  ASSERT_TRUE(WaitFor([&] { return prefaulter->counters().populated_bytes > 0; }, 30));
  prefaulter.reset();
  const size_t resident = heap.ResidentPages(0, kLarge) * FakeHeap::kPage;
  EXPECT_LT(resident, kLarge) << "the thread populated the whole growth before it stopped";
}

}  // namespace
}  // namespace mmfs
