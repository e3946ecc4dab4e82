#include "base/heap_prefaulter.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "tests/test_util.h"

namespace mmfs {
namespace {

// An anonymous mapping standing in for the heap: the prefaulter keeps [base, edge) populated,
// and the test moves the edge as an allocator moves the program break.
class FakeHeap {
 public:
  explicit FakeHeap(size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
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
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((to - from + page - 1) / page);
    if (::mincore(base_ + from, to - from, v.data()) != 0) return 0;
    size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
  }

 private:
  size_t bytes_;
  char* base_;
  std::atomic<uintptr_t> edge_;
};

using testing::WaitFor;

constexpr size_t kMiB = size_t{1} << 20;

TEST(HeapPrefaulterTest, PopulatesWhatTheHeapGrewByAndNothingAboveIt) {
  FakeHeap heap(32 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  heap.Grow(page);
  heap.base()[0] = 7;  // below the edge at start: in use, left to the allocator
  HeapPrefaulter prefaulter([&] { return heap.edge(); });
  heap.Grow(8 * kMiB);
  prefaulter.Nudge();
  const size_t grown = 8 * kMiB / page;
  ASSERT_TRUE(WaitFor([&] { return heap.ResidentPages(page, page + 8 * kMiB) == grown; }, 30))
      << heap.ResidentPages(page, page + 8 * kMiB) << " of " << grown << " pages resident";
  EXPECT_EQ(heap.ResidentPages(page + 8 * kMiB, 32 * kMiB), 0u) << "above the edge";
  EXPECT_TRUE(WaitFor([&] { return prefaulter.counters().populated_bytes == 8 * kMiB; }, 30))
      << prefaulter.counters().populated_bytes;
  // The advice changed no byte: what was written stays, the rest reads as zeros.
  EXPECT_EQ(heap.base()[0], 7);
  std::vector<char> zeros(8 * kMiB, 0);
  EXPECT_EQ(std::memcmp(heap.base() + page, zeros.data(), zeros.size()), 0);
  EXPECT_FALSE(prefaulter.counters().unsupported);
}

TEST(HeapPrefaulterTest, ANudgeWithoutGrowthDoesNothingAndAShrunkHeapIsFollowed) {
  FakeHeap heap(16 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  HeapPrefaulter prefaulter([&] { return heap.edge(); });
  prefaulter.Nudge();
  heap.Grow(4 * kMiB);
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().populated_bytes == 4 * kMiB; }, 30));
  EXPECT_EQ(prefaulter.counters().rounds, 1u);
  prefaulter.Nudge();  // no growth since
  // The heap gives 2 MiB back, then grows 2 MiB past where it was: the prefaulter populates
  // from where the heap shrank to, not from where it had got to before.
  heap.Shrink(2 * kMiB);
  ::madvise(heap.base() + 2 * kMiB, 2 * kMiB, MADV_DONTNEED);  // as a trim would
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return prefaulter.counters().rounds == 2; }, 30));
  heap.Grow(4 * kMiB);
  prefaulter.Nudge();
  ASSERT_TRUE(WaitFor([&] { return heap.ResidentPages(0, 6 * kMiB) == 6 * kMiB / ::getpagesize(); },
                      30))
      << heap.ResidentPages(0, 6 * kMiB);
  EXPECT_EQ(heap.ResidentPages(6 * kMiB, 16 * kMiB), 0u);
}

TEST(HeapPrefaulterTest, StopsPromptlyWhileIdle) {
  FakeHeap heap(4 * kMiB);
  ASSERT_NE(heap.base(), nullptr);
  auto prefaulter = std::make_unique<HeapPrefaulter>([&] { return heap.edge(); });
  prefaulter.reset();  // joins a thread waiting for a nudge
  SUCCEED();
}

}  // namespace
}  // namespace mmfs
