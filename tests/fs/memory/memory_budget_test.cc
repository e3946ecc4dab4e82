// The memory budget module against fake /proc and /sys trees, and the governor's control loop
// against fake samples.
#include "fs/memory/memory_budget.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "fs/memory/memory_governor.h"
#include "fs/stats/stats_format.h"
#include "tests/test_util.h"

namespace mmfs {
namespace {

using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kBudgetMiB = 1ull << 20, kGiB = 1ull << 30;

// A fake root: /proc/meminfo with `mem_total_kib`, and /proc/self/{cgroup,mountinfo} as given.
class FakeRoot {
 public:
  FakeRoot(uint64_t mem_total_kib, const std::string& cgroup, const std::string& mountinfo) {
    WriteFile(tmp_ / "proc/meminfo", "MemTotal:       " + std::to_string(mem_total_kib) +
                                         " kB\nMemFree:        100 kB\nMemAvailable:   " +
                                         std::to_string(mem_total_kib / 2) + " kB\n");
    WriteFile(tmp_ / "proc/self/cgroup", cgroup);
    WriteFile(tmp_ / "proc/self/mountinfo", mountinfo);
  }
  std::string root() const { return tmp_.path(); }
  void Write(const std::string& rel, const std::string& text) { WriteFile(tmp_ / rel, text); }

 private:
  TempDir tmp_;
};

const char kV1MountInfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char kV2MountInfo[] =
    "22 1 0:21 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

TEST(MemoryLimitTest, CgroupV1HierarchicalLimit) {
  FakeRoot r(24 * 1024 * 1024, "4:memory:/kube/pod1\n1:cpu:/\n0::/\n", kV1MountInfo);
  // The parent's limit is the one that applies: hierarchical_memory_limit says so.
  r.Write("sys/fs/cgroup/memory/kube/pod1/memory.limit_in_bytes", "9223372036854771712\n");
  r.Write("sys/fs/cgroup/memory/kube/pod1/memory.stat",
          "cache 100\nrss 200\nhierarchical_memory_limit 536870912\ntotal_inactive_file 4096\n");
  auto l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->physical_bytes, 24 * kGiB);
  EXPECT_EQ(l->cgroup_version, 1);
  EXPECT_EQ(l->cgroup_bytes, 512 * kBudgetMiB);
  EXPECT_EQ(l->bytes(), 512 * kBudgetMiB);
  EXPECT_EQ(l->source(), LimitSource::kCgroupV1);
  EXPECT_EQ(l->cgroup_dir, r.root() + "/sys/fs/cgroup/memory/kube/pod1");
  // With the parent's limit file in the mounted tree, the parent is the cgroup to watch: its
  // usage counts the pod's neighbours (a loader in a sibling cgroup).
  r.Write("sys/fs/cgroup/memory/kube/memory.limit_in_bytes", "536870912\n");
  l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_bytes, 512 * kBudgetMiB);
  EXPECT_EQ(l->cgroup_dir, r.root() + "/sys/fs/cgroup/memory/kube");
  // A tighter limit of its own binds again.
  r.Write("sys/fs/cgroup/memory/kube/pod1/memory.limit_in_bytes", "268435456\n");
  r.Write("sys/fs/cgroup/memory/kube/pod1/memory.stat", "hierarchical_memory_limit 268435456\n");
  l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_bytes, 256 * kBudgetMiB);
  EXPECT_EQ(l->cgroup_dir, r.root() + "/sys/fs/cgroup/memory/kube/pod1");
}

TEST(MemoryLimitTest, CgroupV1WithoutStatAndUnlimited) {
  FakeRoot r(8 * 1024 * 1024, "4:memory:/a\n", kV1MountInfo);
  r.Write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "268435456\n");
  auto l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->bytes(), 256 * kBudgetMiB);
  r.Write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "9223372036854771712\n");
  l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_bytes, 0u) << "no limit";
  EXPECT_EQ(l->source(), LimitSource::kPhysical);
  EXPECT_EQ(l->bytes(), 8 * kGiB);
}

TEST(MemoryLimitTest, CgroupV2SmallestLimitOfTheAncestors) {
  FakeRoot r(16 * 1024 * 1024, "0::/system.slice/mmfs.service\n", kV2MountInfo);
  r.Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  r.Write("sys/fs/cgroup/system.slice/mmfs.service/memory.max", "max\n");
  r.Write("sys/fs/cgroup/system.slice/memory.max", "1073741824\n");
  auto l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_version, 2);
  EXPECT_EQ(l->cgroup_bytes, 1 * kGiB);
  EXPECT_EQ(l->source(), LimitSource::kCgroupV2);
  EXPECT_STREQ(LimitSourceName(l->source()), "cgroup v2");
  // The slice's limit binds: the slice is the cgroup to watch (its usage counts the service's
  // neighbours in it).
  EXPECT_EQ(l->cgroup_dir, r.root() + "/sys/fs/cgroup/system.slice");
  // A tighter limit on the leaf wins, and the leaf is watched.
  r.Write("sys/fs/cgroup/system.slice/mmfs.service/memory.max", "402653184\n");
  EXPECT_EQ(ReadMemoryLimit(r.root())->bytes(), 384 * kBudgetMiB);
  EXPECT_EQ(ReadMemoryLimit(r.root())->cgroup_dir,
            r.root() + "/sys/fs/cgroup/system.slice/mmfs.service");
}

TEST(MemoryLimitTest, CgroupV2MountedAsASubtreeAndWithoutMemoryController) {
  // A container's view: the hierarchy's subtree /kubepods/pod1 is mounted at /sys/fs/cgroup.
  FakeRoot r(16 * 1024 * 1024, "0::/kubepods/pod1/ctr\n",
            "22 1 0:21 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  r.Write("sys/fs/cgroup/cgroup.controllers", "memory pids\n");
  r.Write("sys/fs/cgroup/ctr/memory.max", "536870912\n");
  auto l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_dir, r.root() + "/sys/fs/cgroup/ctr");
  EXPECT_EQ(l->bytes(), 512 * kBudgetMiB);
  // No memory controller in the hierarchy: no cgroup limit.
  r.Write("sys/fs/cgroup/cgroup.controllers", "pids\n");
  l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cgroup_version, 0);
  EXPECT_EQ(l->source(), LimitSource::kPhysical);
}

TEST(MemoryLimitTest, LimitAbovePhysicalIsPhysicalAndMissingMeminfoIsAnError) {
  FakeRoot r(1024 * 1024, "4:memory:/big\n", kV1MountInfo);
  r.Write("sys/fs/cgroup/memory/big/memory.limit_in_bytes", "4294967296\n");
  auto l = ReadMemoryLimit(r.root());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->bytes(), 1 * kGiB);
  EXPECT_EQ(l->source(), LimitSource::kPhysical);
  TempDir empty;
  EXPECT_FALSE(ReadMemoryLimit(empty.path()).ok());
}

TEST(MemorySampleTest, ReadsTheSignalsOfEachKind) {
  FakeRoot v1(24 * 1024 * 1024, "4:memory:/a\n", kV1MountInfo);
  v1.Write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "536870912\n");
  v1.Write("sys/fs/cgroup/memory/a/memory.usage_in_bytes", "400000000\n");
  v1.Write("sys/fs/cgroup/memory/a/memory.stat", "total_inactive_file 100000000\n");
  v1.Write("sys/fs/cgroup/memory/a/memory.kmem.usage_in_bytes", "56000000\n");
  v1.Write("sys/fs/cgroup/memory/a/memory.failcnt", "7\n");
  v1.Write("sys/fs/cgroup/memory/a/memory.oom_control",
           "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  MemorySample s = SampleMemory(*ReadMemoryLimit(v1.root()), v1.root());
  EXPECT_EQ(s.usage_bytes, 400000000u);
  EXPECT_EQ(s.working_bytes(), 300000000u);
  // v1 has no slab counter: its kernel memory counts as reclaimable objects (dentries, inodes).
  EXPECT_EQ(s.non_file_bytes(), 300000000u);
  EXPECT_EQ(s.kernel_reclaimable_bytes, 56000000u);
  EXPECT_EQ(s.unreclaimable_bytes(), 244000000u);
  EXPECT_EQ(s.limit_events, 7u);
  EXPECT_EQ(s.oom_kills, 2u);
  EXPECT_FALSE(s.has_psi);

  FakeRoot v2(24 * 1024 * 1024, "0::/x\n", kV2MountInfo);
  v2.Write("sys/fs/cgroup/cgroup.controllers", "memory\n");
  v2.Write("sys/fs/cgroup/x/memory.max", "536870912\n");
  v2.Write("sys/fs/cgroup/x/memory.current", "300000000\n");
  v2.Write("sys/fs/cgroup/x/memory.stat", "anon 1000\ninactive_file 50000000\nslab_reclaimable 20000000\n"
           "slab_unreclaimable 3000000\n");
  v2.Write("sys/fs/cgroup/x/memory.events", "low 0\nhigh 3\nmax 4\noom 1\noom_kill 1\n");
  v2.Write("sys/fs/cgroup/x/memory.pressure",
           "some avg10=12.50 avg60=1.00 avg300=0.00 total=1\nfull avg10=3.25 avg60=0 "
           "avg300=0 total=1\n");
  s = SampleMemory(*ReadMemoryLimit(v2.root()), v2.root());
  EXPECT_EQ(s.working_bytes(), 250000000u);
  EXPECT_EQ(s.kernel_reclaimable_bytes, 20000000u);  // slab_reclaimable only
  EXPECT_EQ(s.unreclaimable_bytes(), 230000000u);
  EXPECT_EQ(s.limit_events, 7u);
  EXPECT_EQ(s.oom_kills, 1u);
  ASSERT_TRUE(s.has_psi);
  EXPECT_DOUBLE_EQ(s.psi_some_avg10, 12.5);
  EXPECT_DOUBLE_EQ(s.psi_full_avg10, 3.25);

  // No cgroup limit: the host's MemTotal - MemAvailable, and the host's PSI.
  FakeRoot host(1024 * 1024, "0::/\n", "");
  host.Write("proc/pressure/memory", "some avg10=0.50 avg60=0 avg300=0 total=0\n");
  s = SampleMemory(*ReadMemoryLimit(host.root()), host.root());
  EXPECT_EQ(s.usage_bytes, 512 * kBudgetMiB);
  EXPECT_TRUE(s.has_psi);
}

MemoryLimit CgroupLimit(uint64_t bytes, int version = 1) {
  MemoryLimit l;
  l.physical_bytes = 24 * kGiB;
  l.cgroup_bytes = bytes;
  l.cgroup_version = version;
  l.cgroup_dir = "/sys/fs/cgroup/memory/pod";
  return l;
}

MemoryLimit HostLimit(uint64_t bytes) {
  MemoryLimit l;
  l.physical_bytes = bytes;
  return l;
}

TEST(MemoryBudgetTest, DefaultsComeFromTheSmallerLimitLessWhatTheDaemonNeeds) {
  // The host alone: 1/8 of physical memory as before, full-size buffers.
  MemoryBudget b = PlanMemoryBudget(HostLimit(24 * kGiB), {});
  EXPECT_EQ(b.ram_cache_bytes, 3 * kGiB);
  EXPECT_EQ(b.prefetch_bytes, 64 * kBudgetMiB);
  EXPECT_STREQ(b.source(), "physical");
  EXPECT_FALSE(b.shared_limit());
  EXPECT_FALSE(b.clamped);
  // A 512 MiB host: 1/8 of it is below the 64 MiB floor; the buffers shrink to 1/16.
  b = PlanMemoryBudget(HostLimit(512 * kBudgetMiB), {});
  EXPECT_EQ(b.limit_bytes, 512 * kBudgetMiB);
  EXPECT_EQ(b.prefetch_bytes, 32 * kBudgetMiB);
  EXPECT_EQ(b.read_buffer_bytes, 32 * kBudgetMiB);
  EXPECT_EQ(b.ram_cache_bytes, 64 * kBudgetMiB);
  EXPECT_EQ(b.reserved_bytes, kBaseBytes + 16 * kPerThreadBytes + 64 * kBudgetMiB);
  // The huge-page heap's step, populated ahead, is reserved too.
  BudgetRequest huge;
  huge.heap_slack_bytes = 32 * kBudgetMiB;
  EXPECT_EQ(PlanMemoryBudget(HostLimit(512 * kBudgetMiB), huge).reserved_bytes,
            b.reserved_bytes + 32 * kBudgetMiB);
  // A dataset fetched ahead: its reads in flight are reserved, 1/8 of the limit within 32 to
  // 96 MiB, and the RAM tier gets that much less.
  BudgetRequest fill;
  fill.fill_chunk_bytes = 8 * kBudgetMiB;
  const MemoryBudget filled = PlanMemoryBudget(HostLimit(512 * kBudgetMiB), fill);
  EXPECT_EQ(filled.fill_bytes, 64 * kBudgetMiB);
  EXPECT_EQ(filled.reserved_bytes, b.reserved_bytes + 64 * kBudgetMiB);
  EXPECT_EQ(PlanMemoryBudget(HostLimit(24 * kGiB), fill).fill_bytes, 96 * kBudgetMiB);
  EXPECT_EQ(PlanMemoryBudget(HostLimit(128 * kBudgetMiB), fill).fill_bytes, 32 * kBudgetMiB);
  // Never less than one read of the fill's.
  fill.fill_chunk_bytes = 48 * kBudgetMiB;
  EXPECT_EQ(PlanMemoryBudget(HostLimit(128 * kBudgetMiB), fill).fill_bytes, 48 * kBudgetMiB);
  EXPECT_EQ(b.fill_bytes, 0u);
  // A small one: at most half of what is left after the reserve.
  BudgetRequest r;
  r.in_use_bytes = 20 * kBudgetMiB;
  b = PlanMemoryBudget(HostLimit(160 * kBudgetMiB), r);
  EXPECT_EQ(b.ram_cache_bytes, (160 * kBudgetMiB - b.reserved_bytes - 20 * kBudgetMiB) / 2);
  // One smaller than the reserve: no RAM tier at all, rather than an OOM kill.
  b = PlanMemoryBudget(HostLimit(32 * kBudgetMiB), {});
  EXPECT_GE(b.reserved_bytes, 32 * kBudgetMiB);
  EXPECT_EQ(b.ram_cache_bytes, 0u);
  EXPECT_NE(b.Explain().find("physical"), std::string::npos) << b.Explain();
}

// Under a memory cgroup's limit with no memory option, the loader, the daemon and the page
// cache share one limit: the mount plans as if given --memory of what the others left.
TEST(MemoryBudgetTest, UnderACgroupLimitTheDefaultSharesIt) {
  BudgetRequest r;
  r.in_use_bytes = 31 * kBudgetMiB;
  r.index_bytes = 2 * kBudgetMiB;
  MemoryBudget b = PlanMemoryBudget(CgroupLimit(831000000), r);
  EXPECT_TRUE(b.shared_limit());
  EXPECT_FALSE(b.memory_given);
  EXPECT_STREQ(b.source(), "shared");
  EXPECT_EQ(b.memory_bytes, 831000000 - 31 * kBudgetMiB);
  EXPECT_EQ(b.page_cache_bytes, b.memory_bytes / 8);
  EXPECT_EQ(b.ram_cache_bytes, b.memory_bytes - b.reserved_bytes - b.page_cache_bytes);
  EXPECT_EQ(b.held_limit_bytes(), 831000000 - b.page_cache_bytes);
  EXPECT_TRUE(b.Warning().empty()) << b.Warning();
  EXPECT_NE(b.Explain().find("shared-limit mode, the default under a memory cgroup"),
            std::string::npos)
      << b.Explain();
  EXPECT_NE(b.Explain().find("cgroup v1"), std::string::npos) << b.Explain();
  // The same split as --memory of what was left, named as given.
  BudgetRequest given = r;
  given.memory_bytes = b.memory_bytes;
  MemoryBudget g = PlanMemoryBudget(CgroupLimit(831000000), given);
  EXPECT_TRUE(g.memory_given);
  EXPECT_STREQ(g.source(), "memory");
  EXPECT_EQ(g.ram_cache_bytes, b.ram_cache_bytes);
  EXPECT_EQ(g.page_cache_bytes, b.page_cache_bytes);
  // cgroup v2 (a systemd unit's MemoryMax=) alike.
  EXPECT_TRUE(PlanMemoryBudget(CgroupLimit(512 * kBudgetMiB, 2), {}).shared_limit());
  // The locked index is not reserved up front (the governor counts its pages as they are read):
  // a 152 MB index of a million samples left a quarter of a 611 MiB cgroup's tier unused when
  // an epoch read a tenth of them. Unlocked, it is reserved as before.
  BudgetRequest big = r;
  big.index_bytes = 152 * kBudgetMiB;
  MemoryBudget live = PlanMemoryBudget(CgroupLimit(831000000), big);
  EXPECT_TRUE(live.index_counted_as_read);
  EXPECT_EQ(live.reserved_bytes, b.reserved_bytes);
  EXPECT_NE(live.Explain().find("the locked index counted as it is read"), std::string::npos)
      << live.Explain();
  big.lock_index = false;
  MemoryBudget unlocked = PlanMemoryBudget(CgroupLimit(831000000), big);
  EXPECT_FALSE(unlocked.index_counted_as_read);
  EXPECT_EQ(unlocked.reserved_bytes, b.reserved_bytes + 152 * kBudgetMiB);
  EXPECT_EQ(unlocked.ram_cache_bytes, live.ram_cache_bytes - 152 * kBudgetMiB);
  // --ram-cache alone keeps a tier of that size beside the page cache.
  BudgetRequest ram;
  ram.ram_cache_bytes = 64 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(831000000), ram);
  EXPECT_FALSE(b.shared_limit());
  EXPECT_STREQ(b.source(), "explicit");
  EXPECT_EQ(b.ram_cache_bytes, 64 * kBudgetMiB);
  EXPECT_FALSE(b.index_counted_as_read);  // beside the page cache: the index reserved
  // A large limit: the page-cache share stops at 512 MiB, the tier takes the rest.
  b = PlanMemoryBudget(CgroupLimit(16 * kGiB), {});
  EXPECT_TRUE(b.shared_limit());
  EXPECT_EQ(b.page_cache_bytes, kMaxPageCacheBytes);
  EXPECT_EQ(b.ram_cache_bytes, 16 * kGiB - b.reserved_bytes - kMaxPageCacheBytes);
  // Others already hold the whole limit: nothing for a tier, never an underflow.
  BudgetRequest full;
  full.in_use_bytes = 900 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(800 * kBudgetMiB), full);
  EXPECT_TRUE(b.shared_limit());
  EXPECT_EQ(b.ram_cache_bytes, 0u);
  EXPECT_LE(b.memory_bytes, 1u);
  EXPECT_FALSE(b.Warning().empty());
  // --memory with --ram-cache: the tier is capped at what --ram-cache asks, the mode stays.
  BudgetRequest both;
  both.memory_bytes = 512 * kBudgetMiB;
  both.ram_cache_bytes = 64 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(831000000), both);
  EXPECT_TRUE(b.shared_limit());
  EXPECT_STREQ(b.source(), "memory");
  EXPECT_EQ(b.ram_cache_bytes, 64 * kBudgetMiB);
  // A cgroup whose limit is above physical memory: physical memory binds, the old default.
  EXPECT_FALSE(PlanMemoryBudget(CgroupLimit(32 * kGiB), {}).shared_limit());
  // A limit too small for a tier: none, and the warning says why.
  b = PlanMemoryBudget(CgroupLimit(40 * kBudgetMiB), {});
  EXPECT_EQ(b.ram_cache_bytes, 0u);
  const std::string w = b.Warning();
  EXPECT_NE(w.find("leaves no room for a RAM tier"), std::string::npos) << w;
  EXPECT_NE(w.find("cgroup v1"), std::string::npos) << w;
}

TEST(MemoryBudgetTest, ExplicitBudgetThatCannotFitIsClampedWithAWarning) {
  // A 537 MB cgroup shared with a DataLoader, --ram-cache 403M.
  BudgetRequest r;
  r.ram_cache_bytes = 403 * kBudgetMiB;
  r.in_use_bytes = 150 * kBudgetMiB;
  r.index_bytes = 2 * kBudgetMiB;
  MemoryBudget b = PlanMemoryBudget(CgroupLimit(537000000), r);
  EXPECT_TRUE(b.clamped);
  EXPECT_STREQ(b.source(), "explicit");
  EXPECT_EQ(b.requested_ram_bytes, 403 * kBudgetMiB);
  EXPECT_EQ(b.ram_cache_bytes, 537000000 - b.reserved_bytes - 150 * kBudgetMiB);
  EXPECT_LE(b.ram_cache_bytes + b.reserved_bytes + b.in_use_bytes, b.limit_bytes);
  std::string w = b.Warning();
  EXPECT_NE(w.find("does not fit"), std::string::npos) << w;
  EXPECT_NE(w.find("cgroup v1"), std::string::npos) << w;
  EXPECT_NE(b.Explain().find("clamped"), std::string::npos) << b.Explain();
  // One that fits is kept as asked, and says so.
  r.ram_cache_bytes = 64 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(537000000), r);
  EXPECT_FALSE(b.clamped);
  EXPECT_EQ(b.ram_cache_bytes, 64 * kBudgetMiB);
  EXPECT_TRUE(b.Warning().empty());
  // The SSD and cluster queues are reserved too.
  r.ssd_tier = r.cluster_tier = true;
  EXPECT_EQ(PlanMemoryBudget(CgroupLimit(537000000), r).reserved_bytes,
            b.reserved_bytes + 2 * kQueueBytes);
}

TEST(PressureTest, ThresholdsAndCounters) {
  const uint64_t limit = 1000 * kBudgetMiB;
  MemorySample prev, cur;
  cur.usage_bytes = 600 * kBudgetMiB;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kLow);
  cur.reclaimable_bytes = 0;
  cur.usage_bytes = 720 * kBudgetMiB;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kModerate);
  cur.usage_bytes = 990 * kBudgetMiB;
  cur.reclaimable_bytes = 400 * kBudgetMiB;  // page cache the kernel drops first
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kLow);
  cur.reclaimable_bytes = 0;
  cur.usage_bytes = 820 * kBudgetMiB;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kHigh);
  cur.usage_bytes = 960 * kBudgetMiB;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kCritical);
  // Hitting the limit with the working set low is page cache being dropped: no pressure.
  cur.usage_bytes = 100 * kBudgetMiB;
  cur.limit_events = 5;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kLow);
  cur.usage_bytes = 750 * kBudgetMiB;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kHigh);
  prev = cur;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kModerate) << "no new limit hit";
  cur.usage_bytes = 100 * kBudgetMiB;
  cur.oom_kills = 1;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kCritical) << "a new OOM kill";
  prev = cur;
  cur.has_psi = true;
  cur.psi_some_avg10 = 15;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kHigh);
  cur.psi_some_avg10 = 3;
  EXPECT_EQ(AssessPressure(limit, prev, cur), Pressure::kModerate);
  EXPECT_STREQ(PressureName(Pressure::kCritical), "critical");
}

TEST(MemoryGovernorTest, GrowsByTheHeadroomShrinksUnderPressureAndNeverPassesThePlan) {
  BudgetRequest asked;  // --ram-cache 500M: the tier beside the page cache, not shared-limit mode
  asked.ram_cache_bytes = 500 * kBudgetMiB;
  MemoryBudget plan = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), asked);
  ASSERT_EQ(plan.ram_cache_bytes, 500 * kBudgetMiB);
  uint64_t used = 0;
  fs::MemoryTargets applied;
  int applies = 0;
  fs::MemoryGovernor g(CgroupLimit(1000 * kBudgetMiB), plan, /*push_wanted=*/true,
                       {[&](const fs::MemoryTargets& t) {
                          applied = t;
                          ++applies;
                        },
                        [&] { return used; }});
  auto step = [&](uint64_t working_mib) {
    MemorySample s;
    s.usage_bytes = working_mib * kBudgetMiB;
    g.Step(s);
    return g.Counters();
  };
  // Plenty of room: a step of 1/16 of the limit per sample, up to the plan, no more.
  fs::GovernorCounters c = step(100);
  EXPECT_EQ(c.level, Pressure::kLow);
  EXPECT_EQ(c.targets.ram_cache_bytes, 1000 * kBudgetMiB / 16);
  EXPECT_TRUE(c.targets.push);
  used = 480 * kBudgetMiB;
  c = step(580);
  EXPECT_EQ(c.targets.ram_cache_bytes, 500 * kBudgetMiB);
  used = 0;
  // Others use 700 MiB: the tier (100 MiB held) may grow only to 80% of the limit.
  used = 100 * kBudgetMiB;
  c = step(750);
  EXPECT_EQ(c.level, Pressure::kModerate);
  EXPECT_EQ(c.targets.ram_cache_bytes, used + 50 * kBudgetMiB);
  EXPECT_FALSE(c.targets.push) << "pushed pages are charged to the daemon";
  EXPECT_EQ(applied.ram_cache_bytes, c.targets.ram_cache_bytes);
  EXPECT_EQ(c.shrinks, 0u);
  // 880 MiB: 80 MiB over the target; the tier gives it back, the buffers halve.
  c = step(880);
  EXPECT_EQ(c.level, Pressure::kHigh);
  EXPECT_EQ(c.targets.ram_cache_bytes, 20 * kBudgetMiB);
  EXPECT_EQ(c.targets.prefetch_bytes, plan.prefetch_bytes / 2);
  EXPECT_EQ(c.targets.read_buffer_bytes, plan.read_buffer_bytes / 2);
  EXPECT_EQ(c.shrinks, 1u);
  // Critical: half of what is held, buffers halve again.
  used = 20 * kBudgetMiB;
  c = step(970);
  EXPECT_EQ(c.level, Pressure::kCritical);
  EXPECT_EQ(c.targets.ram_cache_bytes, 10 * kBudgetMiB);
  EXPECT_EQ(c.targets.prefetch_bytes, plan.prefetch_bytes / 4);
  EXPECT_EQ(c.shrinks, 2u);
  // Calm again: everything comes back, within the plan.
  used = 480 * kBudgetMiB;
  for (int i = 0; i < 10; ++i) c = step(200);
  EXPECT_EQ(c.level, Pressure::kLow);
  EXPECT_EQ(c.targets.ram_cache_bytes, 500 * kBudgetMiB);
  EXPECT_EQ(c.targets.prefetch_bytes, plan.prefetch_bytes);
  EXPECT_EQ(c.targets.read_buffer_bytes, plan.read_buffer_bytes);
  EXPECT_TRUE(c.targets.push);
  EXPECT_EQ(c.samples, 15u);
  EXPECT_EQ(applied, c.targets);
  // With the push off by option, it stays off.
  fs::MemoryGovernor nopush(CgroupLimit(1000 * kBudgetMiB), plan, false, {});
  MemorySample low;
  nopush.Step(low);
  EXPECT_FALSE(nopush.Counters().targets.push);
  // The stats section shows the plan, why, and the state now.
  nlohmann::json j = fs::MemoryStatsJson(1234, &g);
  EXPECT_EQ(j["rss_bytes"], 1234);
  EXPECT_EQ(j["budget"]["limit_source"], "cgroup v1");
  EXPECT_EQ(j["budget"]["source"], "explicit");
  EXPECT_EQ(j["pressure"]["level"], "low");
  EXPECT_EQ(j["pressure"]["shrinks"], 2);
  EXPECT_FALSE(fs::MemoryStatsJson(1, nullptr).contains("budget"));
}

// --memory is all the mount may use, page cache included; the RAM tier gets what the
// daemon's needs and the page-cache share leave.
TEST(MemoryBudgetTest, MemoryGivenIsSplitBetweenDaemonTierAndPageCache) {
  BudgetRequest r;
  r.memory_bytes = 512 * kBudgetMiB;
  r.index_bytes = 4 * kBudgetMiB;
  MemoryBudget b = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), r);
  EXPECT_TRUE(b.shared_limit());
  EXPECT_STREQ(b.source(), "memory");
  EXPECT_EQ(b.memory_bytes, 512 * kBudgetMiB);
  EXPECT_EQ(b.page_cache_bytes, 64 * kBudgetMiB);  // an eighth
  EXPECT_EQ(b.prefetch_bytes, 32 * kBudgetMiB);    // a sixteenth of the memory, not of the limit
  EXPECT_EQ(b.ram_cache_bytes + b.reserved_bytes + b.page_cache_bytes, 512 * kBudgetMiB);
  EXPECT_FALSE(b.clamped);
  EXPECT_NE(b.Explain().find("page cache"), std::string::npos) << b.Explain();
  // More than is left under the limit: clamped, and said.
  r.memory_bytes = 2 * kGiB;
  r.in_use_bytes = 200 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), r);
  EXPECT_EQ(b.memory_bytes, 800 * kBudgetMiB);
  EXPECT_EQ(b.requested_memory_bytes, 2 * kGiB);
  EXPECT_TRUE(b.clamped);
  EXPECT_LE(b.ram_cache_bytes + b.reserved_bytes + b.page_cache_bytes, 800 * kBudgetMiB);
  EXPECT_NE(b.Warning().find("--memory 2.00 GiB does not fit"), std::string::npos) << b.Warning();
  // --ram-cache with --memory: kept when it fits in the memory given, else clamped to it.
  r = {};
  r.memory_bytes = 512 * kBudgetMiB;
  r.ram_cache_bytes = 100 * kBudgetMiB;
  b = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), r);
  EXPECT_EQ(b.ram_cache_bytes, 100 * kBudgetMiB);
  r.ram_cache_bytes = 1 * kGiB;
  b = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), r);
  EXPECT_TRUE(b.clamped);
  EXPECT_LE(b.ram_cache_bytes + b.reserved_bytes + b.page_cache_bytes, 512 * kBudgetMiB);
  // Too little for the daemon itself: no tier, and the warning says why (also for --memory 0).
  for (uint64_t given : {uint64_t{0}, 8 * kBudgetMiB}) {
    r = {};
    r.memory_bytes = given;
    b = PlanMemoryBudget(CgroupLimit(1000 * kBudgetMiB), r);
    EXPECT_EQ(b.ram_cache_bytes, 0u);
    EXPECT_NE(b.Warning().find("leaves no room for a RAM tier"), std::string::npos)
        << given << ": " << b.Warning();
  }
}

// With --memory the loader shares the limit: the governor judges memory that is no page cache
// against the limit less the page-cache share, so a full cgroup of page cache is no pressure.
TEST(MemoryGovernorTest, WithMemoryGivenPageCacheGivesWayAndTheTierStays) {
  BudgetRequest r;
  r.memory_bytes = 512 * kBudgetMiB;
  const MemoryLimit limit = CgroupLimit(800 * kBudgetMiB);
  MemoryBudget plan = PlanMemoryBudget(limit, r);
  ASSERT_EQ(plan.page_cache_bytes, 64 * kBudgetMiB);
  uint64_t used = 0;
  fs::MemoryGovernor g(limit, plan, true, {nullptr, [&] { return used; }});
  auto step = [&](uint64_t usage_mib, uint64_t file_mib) {
    MemorySample s;
    s.usage_bytes = usage_mib * kBudgetMiB;
    s.reclaimable_bytes = file_mib / 2 * kBudgetMiB;
    s.active_file_bytes = (file_mib - file_mib / 2) * kBudgetMiB;
    s.limit_events = 1000 + usage_mib;  // the limit is hit all the time: page cache fills it
    g.Step(s);
    return g.Counters();
  };
  // The cgroup is full, mostly of page cache (half of it active): low pressure, the tier may
  // have all of its plan at once (the headroom, 436 MiB, is larger).
  fs::GovernorCounters c = step(800, 500);
  EXPECT_EQ(c.level, Pressure::kLow);
  EXPECT_EQ(c.targets.ram_cache_bytes, plan.ram_cache_bytes);
  // Less headroom than the plan: up to the headroom less half the page-cache share, no step
  // (692 MiB unreclaimable, 44 MiB to the target, 12 to grow).
  used = 200 * kBudgetMiB;
  c = step(800, 108);
  EXPECT_EQ(c.level, Pressure::kModerate);
  EXPECT_EQ(c.targets.ram_cache_bytes, used + 12 * kBudgetMiB);
  // Closer to the target than half the share: it does not grow (no churn at the target).
  c = step(800, 90);
  EXPECT_EQ(c.targets.ram_cache_bytes, used);
  EXPECT_EQ(c.shrinks, 0u);
  // Unreclaimable memory past the limit less the page-cache share (736 MiB): the excess goes.
  used = 240 * kBudgetMiB;
  c = step(800, 500);  // calm: back to the plan
  EXPECT_EQ(c.targets.ram_cache_bytes, plan.ram_cache_bytes);
  c = step(800, 50);  // 750 MiB unreclaimable: 14 over, given back, no more
  EXPECT_EQ(c.level, Pressure::kHigh);
  EXPECT_EQ(c.targets.ram_cache_bytes, used - 14 * kBudgetMiB);
  EXPECT_EQ(c.shrinks, 1u);
  // Past half the share (768 MiB): critical.
  c = step(800, 20);
  EXPECT_EQ(c.level, Pressure::kCritical);
  EXPECT_EQ(c.targets.ram_cache_bytes, used / 2);
}

TEST(MemoryGovernorTest, WithMemoryGivenReclaimableKernelObjectsDoNotShrinkTheTier) {
  BudgetRequest r;
  r.memory_bytes = 512 * kBudgetMiB;
  const MemoryLimit limit = CgroupLimit(800 * kBudgetMiB);
  const MemoryBudget plan = PlanMemoryBudget(limit, r);
  // Targets: unreclaimable 736 MiB (800 less the 64 MiB share); all but page cache 784 MiB
  // (less a quarter of the share); critical at 768 and 796 MiB.
  ASSERT_EQ(plan.page_cache_bytes, 64 * kBudgetMiB);
  uint64_t used = 300 * kBudgetMiB;
  fs::MemoryGovernor g(limit, plan, true, {nullptr, [&] { return used; }});
  auto step = [&](uint64_t file_mib, uint64_t kernel_mib) {
    MemorySample s;
    s.usage_bytes = 800 * kBudgetMiB;
    s.reclaimable_bytes = file_mib * kBudgetMiB;
    s.kernel_reclaimable_bytes = kernel_mib * kBudgetMiB;
    g.Step(s);
    return g.Counters();
  };
  // 750 MiB of non-file memory, 56 MiB of it the mount's dentries and inodes (as in the
  // equal-memory bench): 694 MiB unreclaimable, within both; nothing is given back.
  fs::GovernorCounters c = step(50, 56);
  EXPECT_NE(c.level, Pressure::kHigh);
  EXPECT_EQ(c.shrinks, 0u);
  EXPECT_GE(c.targets.ram_cache_bytes, used);
  // The same memory without kernel objects to reclaim: 14 MiB over, given back.
  c = step(50, 0);
  EXPECT_EQ(c.level, Pressure::kHigh);
  EXPECT_EQ(c.targets.ram_cache_bytes, used - 14 * kBudgetMiB);
  EXPECT_EQ(c.shrinks, 1u);
  // Kernel objects of 1.5 times the share (many small files): the tier stops growing below the
  // second ceiling, gives back only its excess past it, and is never halved, sample after
  // sample (critical there halved it and it grew back, again and again).
  used = 250 * kBudgetMiB;
  for (int i = 0; i < 5; ++i) {
    c = step(20, 96);  // 780 MiB non-file, 684 unreclaimable: 4 MiB of room, less than the band
    EXPECT_EQ(c.level, Pressure::kModerate) << i;
    EXPECT_EQ(c.targets.ram_cache_bytes, used) << i;
    c = step(10, 96);  // 790 MiB non-file: 6 MiB past the second ceiling
    EXPECT_EQ(c.level, Pressure::kHigh) << i;
    EXPECT_EQ(c.targets.ram_cache_bytes, used - 6 * kBudgetMiB) << i;
  }
  // Almost no page cache left with every kernel object counted (798 MiB non-file, past the limit
  // less a sixteenth of the share): critical, even though most of it is said to be
  // reclaimable (on cgroup v1 that is an estimate).
  c = step(2, 200);
  EXPECT_EQ(c.level, Pressure::kCritical);
  EXPECT_EQ(c.targets.ram_cache_bytes, used / 2);
}

TEST(MemoryGovernorTest, ThreadSamplesTheFakeTreeUntilDestroyed) {
  FakeRoot r(24 * 1024 * 1024, "4:memory:/a\n", kV1MountInfo);
  r.Write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "1048576000\n");
  r.Write("sys/fs/cgroup/memory/a/memory.usage_in_bytes", "1006632960\n");  // 96%
  auto limit = ReadMemoryLimit(r.root());
  ASSERT_TRUE(limit.ok());
  MemoryBudget plan = PlanMemoryBudget(*limit, {});
  std::atomic<int> applies{0};
  {
    fs::MemoryGovernor g(*limit, plan, true,
                         {[&](const fs::MemoryTargets&) { applies++; }, [] { return 0; }},
                         r.root());
    g.Start(std::chrono::milliseconds(5));
    EXPECT_TRUE(testing::WaitFor([&] { return g.Counters().samples >= 3; }, 10));
    EXPECT_EQ(g.Counters().level, Pressure::kCritical);
    EXPECT_EQ(g.Counters().targets.ram_cache_bytes, 0u);
  }
  EXPECT_GE(applies.load(), 1);
}

// One read of statm gives both: the resident set, and the mapped files' part of it (this test
// binary's own code at least).
TEST(ProcessResidentTest, MappedFilesArePartOfTheResidentSet) {
  const ResidentMemory r = ProcessResident();
  EXPECT_GT(r.bytes, 0u);
  EXPECT_GT(r.file_bytes, 0u);
  EXPECT_LE(r.file_bytes, r.bytes);
}

}  // namespace
}  // namespace mmfs
