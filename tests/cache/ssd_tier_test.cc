#include "cache/ssd_tier.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

using testing::TempDir;

class SsdTierTest : public ::testing::Test {
 protected:
  std::unique_ptr<SsdTier> Open(uint64_t budget = 1 << 20, std::string ns = "ds-test",
                                double min_free = 0.0) {
    SsdTierOptions o;
    o.dir = tmp_ / "cache";
    o.name_space = std::move(ns);
    o.budget_bytes = budget;
    o.expected_keys = 1000;
    o.min_free_fraction = min_free;
    auto t = SsdTier::Open(o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  Result<std::unique_ptr<SsdTier>> TryOpen(const std::string& dir, double min_free = 0.0,
                                           uint64_t budget = 1 << 20,
                                           std::function<void()> before_write = {}) {
    SsdTierOptions o;
    o.before_write = std::move(before_write);
    o.dir = dir;
    o.name_space = "ds-test";
    o.budget_bytes = budget;
    o.expected_keys = 1000;
    o.min_free_fraction = min_free;
    return SsdTier::Open(o);
  }
  static Blob B(const std::string& s) { return std::make_shared<const std::string>(s); }
  // Looks the key up first, as the tiered cache does, so the policy counts the access.
  static void Put(SsdTier& t, CacheKey k, const std::string& s) {
    t.Lookup(k);
    t.Insert(k, B(s));
  }
  TempDir tmp_;
};

TEST_F(SsdTierTest, WriteThenReadBack) {
  auto t = Open();
  Put(*t, 1, "hello");
  Put(*t, 2, std::string(100000, 'q'));
  t->Flush();
  EXPECT_EQ(*t->Lookup(1), "hello");
  EXPECT_EQ(*t->Lookup(2), std::string(100000, 'q'));
  EXPECT_EQ(t->Lookup(3), nullptr);
  TierCounters c = t->Counters();
  EXPECT_EQ(c.inserts, 2u);
  EXPECT_EQ(c.entries, 2u);
  EXPECT_EQ(c.bytes_used, 5 + 100000 + 2 * SsdTier::kHeaderBytes);
  EXPECT_TRUE(std::filesystem::exists(t->PathFor(1)));
}

TEST_F(SsdTierTest, SurvivesRestart) {
  {
    auto t = Open();
    Put(*t, 7, "persisted");
  }  // the destructor flushes
  auto t = Open();
  EXPECT_EQ(t->Counters().entries, 1u);
  ASSERT_NE(t->Lookup(7), nullptr);
  EXPECT_EQ(*t->Lookup(7), "persisted");
  auto other = Open(1 << 20, "ds-other");
  EXPECT_EQ(other->Lookup(7), nullptr);  // another dataset never sees it
}

TEST_F(SsdTierTest, DamagedEntriesAreMissesNeverServed) {
  auto t = Open();
  Put(*t, 1, "good bytes here");
  Put(*t, 2, "more good bytes");
  Put(*t, 3, "and some more");
  t->Flush();
  // Flip a payload byte of 1, truncate 2, overwrite 3's header.
  int fd = ::open(t->PathFor(1).c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "X", 1, SsdTier::kHeaderBytes + 3), 1);
  ::close(fd);
  std::filesystem::resize_file(t->PathFor(2), SsdTier::kHeaderBytes + 4);
  fd = ::open(t->PathFor(3).c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "garbage!", 8, 0), 8);
  ::close(fd);
  EXPECT_EQ(t->Lookup(1), nullptr);
  EXPECT_EQ(t->Lookup(2), nullptr);
  EXPECT_EQ(t->Lookup(3), nullptr);
  EXPECT_EQ(t->Counters().corrupt, 3u);
  EXPECT_EQ(t->Counters().entries, 0u);
  t->Flush();  // the writer deletes them, in order with any write of the same key
  EXPECT_FALSE(std::filesystem::exists(t->PathFor(1)));
}

TEST_F(SsdTierTest, BudgetHoldsAcrossRestartsAndScanCleansUp) {
  {
    auto t = Open(64 * 1024);
    for (CacheKey k = 0; k < 100; ++k) Put(*t, k, std::string(4000, 'a'));
    t->Flush();
    EXPECT_LE(t->Counters().bytes_used, 64u * 1024);
    EXPECT_GT(t->Counters().entries, 10u);
  }
  testing::WriteFile(tmp_ / "cache/mmfs-cache-v1/ds-test/00/0000000000000000.tmp", "torn");
  testing::WriteFile(tmp_ / "cache/mmfs-cache-v1/ds-test/00/not-a-key", "foreign");
  auto small = Open(16 * 1024);
  EXPECT_LE(small->Counters().bytes_used, 16u * 1024);
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "cache/mmfs-cache-v1/ds-test/00/0000000000000000.tmp"));
  // Not of our naming scheme: never ours to delete.
  EXPECT_EQ(testing::ReadFile(tmp_ / "cache/mmfs-cache-v1/ds-test/00/not-a-key"), "foreign");
  uint64_t files = 0, bytes = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(tmp_ / "cache")) {
    if (e.is_regular_file() && e.path().filename() != "not-a-key") {
      ++files;
      bytes += e.file_size();
    }
  }
  EXPECT_EQ(files, small->Counters().entries);
  EXPECT_LE(bytes, 16u * 1024);
}

TEST_F(SsdTierTest, FullDiskStopsAdmissionButKeepsServing) {
  {
    auto t = Open();
    Put(*t, 1, "kept");
  }
  auto t = Open(1 << 20, "ds-test", /*min_free=*/1.01);  // never enough free space
  Put(*t, 2, "refused");
  t->Flush();
  EXPECT_EQ(t->Lookup(2), nullptr);
  EXPECT_TRUE(t->Counters().admission_paused);
  EXPECT_EQ(*t->Lookup(1), "kept");
  Put(*t, 3, "also refused");
  t->Flush();
  EXPECT_EQ(t->Lookup(3), nullptr);
}

TEST_F(SsdTierTest, EvictingUnwrittenEntriesKeepsTheQueueAccountingRight) {
  auto t = Open(40 * 1024);
  for (CacheKey k = 0; k < 10; ++k) Put(*t, k, std::string(4000, 'o'));
  // Popular newcomers push out entries, some of which may still be waiting to be written.
  for (CacheKey k = 100; k < 200; ++k) {
    for (int i = 0; i < 4; ++i) t->Lookup(k);
    t->Insert(k, B(std::string(4000, 'n')));
  }
  t->Flush();
  EXPECT_EQ(t->pending_bytes(), 0u);
  EXPECT_GT(t->Counters().evictions, 0u);
  EXPECT_LE(t->Counters().bytes_used, 40u * 1024);
  EXPECT_EQ(t->Counters().dropped, 0u);
}

TEST_F(SsdTierTest, RejectsBadNamespace) {
  SsdTierOptions o;
  o.dir = tmp_ / "cache";
  o.name_space = "../escape";
  o.budget_bytes = 1000;
  EXPECT_FALSE(SsdTier::Open(o).ok());
}

// A directory of root's (or of whoever runs the test) that another user links into a shared
// cache directory: the tier must not write, scan or delete through the link.
TEST_F(SsdTierTest, SymlinkedNamespaceIsRefusedAndItsTargetSurvives) {
  std::string victim = tmp_ / "victim";
  testing::WriteFile(victim + "/precious-1", "one");
  testing::WriteFile(victim + "/precious-2", "two");
  std::filesystem::create_directories(tmp_ / "cache/mmfs-cache-v1");
  std::filesystem::create_directory_symlink(victim, tmp_ / "cache/mmfs-cache-v1/ds-test");
  auto t = TryOpen(tmp_ / "cache");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(tmp_ / "cache/mmfs-cache-v1/ds-test is a symbolic link"),
            std::string::npos)
      << t.status().ToString();
  EXPECT_NE(t.status().message().find("refusing it"), std::string::npos);
  EXPECT_EQ(testing::ReadFile(victim + "/precious-1"), "one");
  EXPECT_EQ(testing::ReadFile(victim + "/precious-2"), "two");
  EXPECT_FALSE(std::filesystem::exists(victim + "/00"));
}

TEST_F(SsdTierTest, SymlinkedLayoutDirAndFolderAreRefused) {
  std::string victim = tmp_ / "victim";
  testing::WriteFile(victim + "/precious", "x");
  std::filesystem::create_directories(tmp_ / "cache");
  std::filesystem::create_directory_symlink(victim, tmp_ / "cache/mmfs-cache-v1");
  auto t = TryOpen(tmp_ / "cache");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("mmfs-cache-v1 is a symbolic link"), std::string::npos)
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(victim + "/ds-test"));
  // One of the 256 folders.
  std::filesystem::remove(tmp_ / "cache/mmfs-cache-v1");
  std::filesystem::create_directories(tmp_ / "cache2/mmfs-cache-v1/ds-test");
  std::filesystem::create_directory_symlink(victim, tmp_ / "cache2/mmfs-cache-v1/ds-test/7f");
  t = TryOpen(tmp_ / "cache2");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("ds-test/7f is a symbolic link"), std::string::npos)
      << t.status().ToString();
  EXPECT_EQ(testing::ReadFile(victim + "/precious"), "x");
}

// The given directory may be the operator's own link; one owned by another user is refused.
TEST_F(SsdTierTest, GivenDirMayBeOwnLinkButNotAnotherUsers) {
  std::filesystem::create_directories(tmp_ / "real");
  std::filesystem::create_directory_symlink(tmp_ / "real", tmp_ / "link");
  {
    auto t = TryOpen(tmp_ / "link");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
  }
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "real/mmfs-cache-v1/ds-test/00"));
  if (::geteuid() != 0) GTEST_SKIP() << "changing a link's owner needs root";
  ASSERT_EQ(::lchown((tmp_ / "link").c_str(), 65534, 65534), 0);
  auto t = TryOpen(tmp_ / "link");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("is a symbolic link owned by uid 65534"), std::string::npos)
      << t.status().ToString();
}

TEST_F(SsdTierTest, DirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to nobody needs root";
  for (const char* level : {"cache", "cache/mmfs-cache-v1", "cache/mmfs-cache-v1/ds-test",
                            "cache/mmfs-cache-v1/ds-test/a0"}) {
    SCOPED_TRACE(level);
    std::filesystem::remove_all(tmp_ / "cache");
    std::filesystem::create_directories(tmp_ / level);
    testing::WriteFile(tmp_ / level + "/theirs", "keep");
    ASSERT_EQ(::chown((tmp_ / level).c_str(), 65534, 65534), 0);
    auto t = TryOpen(tmp_ / "cache");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.status().message().find(tmp_ / std::string(level) + " is owned by uid 65534"),
              std::string::npos)
        << t.status().ToString();
    EXPECT_EQ(testing::ReadFile(tmp_ / level + "/theirs"), "keep");
  }
}

TEST_F(SsdTierTest, ForeignFilesInOurFoldersAreLeftAlone) {
  {
    auto t = Open();
    Put(*t, 0x100, "ours");
  }
  std::string ns = tmp_ / "cache/mmfs-cache-v1/ds-test";
  testing::WriteFile(ns + "/00/notes.txt", "foreign");
  testing::WriteFile(ns + "/00/00000000000000ab", "a key name in the wrong folder");
  testing::WriteFile(ns + "/README", "foreign too");
  std::filesystem::create_directories(tmp_ / "elsewhere");
  std::filesystem::create_symlink(tmp_ / "elsewhere", ns + "/00/0000000000000200");
  auto t = Open();
  EXPECT_EQ(t->foreign_files(), 4u);
  EXPECT_EQ(t->Counters().entries, 1u);
  EXPECT_EQ(*t->Lookup(0x100), "ours");
  EXPECT_EQ(testing::ReadFile(ns + "/00/notes.txt"), "foreign");
  EXPECT_EQ(testing::ReadFile(ns + "/00/00000000000000ab"), "a key name in the wrong folder");
  EXPECT_EQ(testing::ReadFile(ns + "/README"), "foreign too");
  EXPECT_TRUE(std::filesystem::is_symlink(ns + "/00/0000000000000200"));
  EXPECT_TRUE(std::filesystem::exists(tmp_ / "elsewhere"));
}

TEST_F(SsdTierTest, EntriesAre0600AndFolders0700) {
  std::filesystem::create_directories(tmp_ / "cache/mmfs-cache-v1/ds-test/01");
  std::filesystem::permissions(tmp_ / "cache/mmfs-cache-v1/ds-test/01",
                               std::filesystem::perms::all);  // an older cache's 0777 folder
  auto t = Open();
  Put(*t, 1, "secret bytes");
  t->Flush();
  auto mode = [](const std::string& p) {
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(t->PathFor(1)), 0600u);
  for (const char* dir : {"cache/mmfs-cache-v1", "cache/mmfs-cache-v1/ds-test",
                          "cache/mmfs-cache-v1/ds-test/01", "cache/mmfs-cache-v1/ds-test/ff"}) {
    EXPECT_EQ(mode(tmp_ / dir), 0700u) << dir;
  }
  // The directory the operator gave is theirs (it may be /tmp): never changed.
  EXPECT_EQ(mode(tmp_ / "cache"), 0755u);
  // One the tier creates is 0700.
  ASSERT_TRUE(TryOpen(tmp_ / "fresh").ok());
  EXPECT_EQ(mode(tmp_ / "fresh"), 0700u);
}

// A file that went away (evicted by the writer while a lookup opened it, or deleted by hand) is
// a miss; only a file that is there and wrong counts as damage.
TEST_F(SsdTierTest, MissingFileIsAMissNotDamage) {
  auto t = Open();
  Put(*t, 1, "soon gone");
  Put(*t, 2, "stays");
  t->Flush();
  ASSERT_TRUE(std::filesystem::remove(t->PathFor(1)));
  EXPECT_EQ(t->Lookup(1), nullptr);
  EXPECT_EQ(t->Counters().corrupt, 0u);
  t->Flush();
  EXPECT_FALSE(t->Contains(1));  // no longer claimed
  EXPECT_EQ(t->Counters().entries, 1u);
  EXPECT_EQ(*t->Lookup(2), "stays");
}

// An eviction or an erase drops the key from the policy at once and has the writer delete the
// file later: a lookup that got its yes before then finds no file.
TEST_F(SsdTierTest, LookupsRacingRemovalsCountNoDamage) {
  auto t = Open();
  auto body = [](CacheKey k) { return std::string(4000, static_cast<char>('a' + k)); };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> served{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(r);
      while (!stop.load()) {
        CacheKey k = rng() % 4;
        if (Blob b = t->Lookup(k)) {
          EXPECT_EQ(*b, body(k));
          served.fetch_add(1);
        }
      }
    });
  }
  // Entries reach the disk, then go while readers open them.
  for (int round = 0; round < 800; ++round) {
    for (CacheKey k = 0; k < 4; ++k) Put(*t, k, body(k));
    t->Flush();
    for (CacheKey k = 0; k < 4; ++k) t->Erase(k);
    t->Flush();
  }
  stop = true;
  for (auto& th : readers) th.join();
  t->Flush();
  TierCounters c = t->Counters();
  EXPECT_GT(served.load(), 0u);
  EXPECT_EQ(c.corrupt, 0u);
  EXPECT_EQ(c.entries, 0u);
}

// A small filesystem of its own, unmounted whatever happens.
class SmallDisk {
 public:
  explicit SmallDisk(const std::string& dir) : dir_(dir) {
    std::filesystem::create_directories(dir);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=20m,mode=0700") == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  double FreeFraction() const {
    struct statvfs v;
    if (::statvfs(dir_.c_str(), &v) != 0) return -1;
    return static_cast<double>(v.f_bavail) / static_cast<double>(v.f_blocks);
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST_F(SsdTierTest, FreeSpaceGuardHoldsOnASmallDisk) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  SmallDisk disk(tmp_ / "small");
  ASSERT_TRUE(disk.mounted());
  {
    auto opened = TryOpen(tmp_ / "small", /*min_free=*/0.05, /*budget=*/100 << 20);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto& t = *opened;
    // 30 MiB offered to a 20 MiB disk, flushed now and then as warm-up does.
    for (CacheKey k = 0; k < 300; ++k) {
      Put(*t, k, std::string(100 << 10, 'z'));
      if (t->pending_bytes() > (4 << 20)) t->Flush();
    }
    t->Flush();
    EXPECT_GE(disk.FreeFraction(), 0.05);
    TierCounters c = t->Counters();
    EXPECT_TRUE(c.admission_paused);
    EXPECT_EQ(c.write_errors, 0u);  // stopped at the guard, never at ENOSPC
    uint64_t files = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(tmp_ / "small")) {
      files += e.is_regular_file();
    }
    EXPECT_EQ(files, c.entries);  // what it claims is what it holds
    uint64_t held = 0;
    for (CacheKey k = 0; k < 300; ++k) held += t->Contains(k);
    EXPECT_EQ(held, c.entries);
    EXPECT_NE(t->AdmissionProblem().find("free-space guard"), std::string::npos)
        << t->AdmissionProblem();
  }
}

// Entries queued faster than they are written: after the guard refuses a large one, a small one
// behind it still fits. Admission stays stopped, and the guard stays the reason (warm-up counts
// what a tier did not store by it; an emptied reason turned "not stored" into "not admitted").
TEST_F(SsdTierTest, TheGuardStaysTheReasonWhenASmallerEntryStillFits) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  SmallDisk disk(tmp_ / "small");
  ASSERT_TRUE(disk.mounted());
  // The writer waits until everything is queued.
  std::mutex mu;
  std::condition_variable cv;
  bool queued = false;
  auto opened = TryOpen(tmp_ / "small", /*min_free=*/0.05, /*budget=*/100 << 20, [&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return queued; });
  });
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto& t = *opened;
  // 25 MiB of large entries for a 20 MiB disk, then a one-byte one, queued (within the 64 MiB
  // queue bound) before the first write: the guard refuses the large entries past 19 MiB, while
  // the small one still fits in what they leave above it.
  for (CacheKey k = 0; k < 250; ++k) Put(*t, k, std::string(100 << 10, 'z'));
  Put(*t, 1000, "s");
  {
    std::lock_guard<std::mutex> lock(mu);
    queued = true;
  }
  cv.notify_all();
  t->Flush();
  EXPECT_GE(disk.FreeFraction(), 0.05);
  EXPECT_TRUE(t->Counters().admission_paused);
  EXPECT_NE(t->AdmissionProblem().find("free-space guard"), std::string::npos)
      << t->AdmissionProblem();
  EXPECT_TRUE(t->Contains(1000));  // written after the trip
  // What it claims is what it holds.
  uint64_t held = 0;
  for (CacheKey k = 0; k < 250; ++k) held += t->Contains(k);
  EXPECT_EQ(held + 1, t->Counters().entries);
  EXPECT_LT(held, 250u);
}

// The cache folder deleted under a running tier: writes fail, and the reason names it.
TEST_F(SsdTierTest, RemovedDirectoryIsNamedAsTheProblem) {
  auto t = Open();
  Put(*t, 1, "before");
  t->Flush();
  EXPECT_EQ(t->AdmissionProblem(), "");
  std::filesystem::remove_all(tmp_ / "cache");
  Put(*t, 2, "after");
  t->Flush();
  EXPECT_FALSE(t->Contains(2));
  EXPECT_NE(t->AdmissionProblem().find("the cache directory " + (tmp_ / "cache/mmfs-cache-v1/ds-test") +
                                       " was removed"),
            std::string::npos)
      << t->AdmissionProblem();
  EXPECT_NE(t->AdmissionProblem().find("No such file or directory"), std::string::npos);
  EXPECT_EQ(t->Lookup(1), nullptr);  // gone with it: a miss
  EXPECT_EQ(t->Counters().corrupt, 0u);
}

}  // namespace
}  // namespace mmfs::cache
