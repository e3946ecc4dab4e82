// ParseMountOptions: -o lists and the long options of `mmfs mount`, parsed without a mount.
#include "tools/mmfs/mount_options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mmfs::cli {
namespace {

MountArgs WithOptions(std::vector<std::string> options) {
  MountArgs args;
  args.dataset = "/data/train.mmfs";
  args.mountpoint = "/mnt/train";
  args.options = std::move(options);
  return args;
}

TEST(MountOptionsTest, DefaultsWithNoOptions) {
  auto parsed = ParseMountOptions(WithOptions({}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ParsedMountOptions defaults;
  EXPECT_EQ(parsed->mount.max_threads, defaults.mount.max_threads);
  EXPECT_EQ(parsed->mount.read_ahead_kb, defaults.mount.read_ahead_kb);
  EXPECT_FALSE(parsed->mount.overlay_front);
  EXPECT_TRUE(parsed->mount.fuse_options.empty());
  EXPECT_EQ(parsed->readdirplus, fs::ReaddirPlus::kOff);
  EXPECT_TRUE(parsed->hint);
  EXPECT_TRUE(parsed->push);
  EXPECT_TRUE(parsed->cache_listings);
  EXPECT_FALSE(parsed->nonempty);
  EXPECT_FALSE(parsed->ram_cache.has_value());
  EXPECT_TRUE(parsed->cache_dir.empty());
  EXPECT_EQ(parsed->ssd_cache_bytes, 0u);
  EXPECT_TRUE(parsed->cluster_servers.empty());
  EXPECT_EQ(parsed->fs.readahead, defaults.fs.readahead);
  EXPECT_EQ(parsed->fs.direct_reads, defaults.fs.direct_reads);
}

TEST(MountOptionsTest, HintOwnerKeepsTheHintFileTheMountingUsersAlone) {
  auto owner = ParseMountOptions(WithOptions({"allow_other,hint=owner"}));
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_TRUE(owner->hint);
  EXPECT_TRUE(owner->hint_owner_only);
  auto later = ParseMountOptions(WithOptions({"hint=owner", "hint=on"}));
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->hint_owner_only) << "the last hint= wins";
  EXPECT_FALSE(ParseMountOptions(WithOptions({"hint=owners"})).ok());
}

TEST(MountOptionsTest, OnOffValues) {
  auto on = ParseMountOptions(
      WithOptions({"readahead=on,hint=on,direct=on,push=on,hold_once=on", "lock_index=on"}));
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->fs.readahead);
  EXPECT_TRUE(on->hint);
  EXPECT_TRUE(on->fs.direct_reads);
  EXPECT_TRUE(on->push);
  EXPECT_EQ(on->hold_once, true);
  EXPECT_EQ(on->lock_index, true);
  auto off = ParseMountOptions(WithOptions(
      {"readahead=off", "hint=off,direct=off", "push=off", "hold_once=off", "lock_index=off"}));
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->fs.readahead);
  EXPECT_FALSE(off->hint);
  EXPECT_FALSE(off->hint_owner_only);
  EXPECT_FALSE(off->fs.direct_reads);
  EXPECT_FALSE(off->push);
  EXPECT_EQ(off->hold_once, false);
  EXPECT_EQ(off->lock_index, false);
  EXPECT_FALSE(ParseMountOptions(WithOptions({})).value().hold_once.has_value());
  // Unset: decided by the mount (on with --memory).
  EXPECT_FALSE(ParseMountOptions(WithOptions({})).value().lock_index.has_value());
  // opendir=on asks for the OPENDIR round trip, so listings are no longer cached.
  auto opendir_on = ParseMountOptions(WithOptions({"opendir=on"}));
  ASSERT_TRUE(opendir_on.ok()) << opendir_on.status().ToString();
  EXPECT_FALSE(opendir_on->cache_listings);
  auto opendir_off = ParseMountOptions(WithOptions({"opendir=off"}));
  ASSERT_TRUE(opendir_off.ok()) << opendir_off.status().ToString();
  EXPECT_TRUE(opendir_off->cache_listings);
  // The reader accounting is on unless turned off (its cost is measured in bench/README.md).
  EXPECT_TRUE(ParseMountOptions(WithOptions({})).value().fs.reader_accounting);
  EXPECT_TRUE(ParseMountOptions(WithOptions({})).value().huge_pages);
  EXPECT_FALSE(ParseMountOptions(WithOptions({"huge_pages=off"})).value().huge_pages);
  EXPECT_FALSE(ParseMountOptions(WithOptions({"readers=off"})).value().fs.reader_accounting);
}

TEST(MountOptionsTest, BadOnOffValueNamesTheOptionAndTheValue) {
  for (const std::string key :
       {"readahead", "hint", "direct", "push", "hold_once", "lock_index", "opendir", "readers",
        "huge_pages"}) {
    auto parsed = ParseMountOptions(WithOptions({key + "=maybe"}));
    ASSERT_FALSE(parsed.ok()) << key;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), "-o " + key + "=maybe: must be on or off");
  }
  MountArgs args = WithOptions({});
  args.readahead = "yes";
  auto parsed = ParseMountOptions(args);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "--readahead yes: must be on or off");
}

TEST(MountOptionsTest, Sizes) {
  auto parsed = ParseMountOptions(WithOptions({"ram_cache=64M,ssd_cache=2G"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ram_cache, 64ull << 20);
  EXPECT_EQ(parsed->ssd_cache_bytes, 2ull << 30);

  // The long options override -o.
  MountArgs args = WithOptions({"ram_cache=64M,ssd_cache=2G"});
  args.ram_cache = "1G";
  args.ssd_cache = "512M";
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ram_cache, 1ull << 30);
  EXPECT_EQ(parsed->ssd_cache_bytes, 512ull << 20);

  // --memory: -o memory=, overridden by the long option.
  args = WithOptions({"memory=800M"});
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->memory, 800ull << 20);
  args.memory = "2G";
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->memory, 2ull << 30);
  EXPECT_FALSE(ParseMountOptions(WithOptions({})).value().memory.has_value());

  auto bad = ParseMountOptions(WithOptions({"ram_cache=lots"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "-o ram_cache=lots: not a size (expected e.g. 4096, 512M, 1.5G)");
  bad = ParseMountOptions(WithOptions({"ssd_cache=3Q"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "-o ssd_cache=3Q: unknown unit (use K, M, G or T)");
}

TEST(MountOptionsTest, ThreadsAndReadAhead) {
  auto parsed = ParseMountOptions(WithOptions({"threads=4,read_ahead_kb=0"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.max_threads, 4u);
  EXPECT_EQ(parsed->mount.read_ahead_kb, 0u);
  MountArgs args = WithOptions({"threads=4"});
  args.threads = "9";
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->mount.max_threads, 9u);
  parsed = ParseMountOptions(WithOptions({"threads=1,read_ahead_kb=65536"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.max_threads, 1u);
  EXPECT_EQ(parsed->mount.read_ahead_kb, 65536u);
  parsed = ParseMountOptions(WithOptions({"threads=256"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.max_threads, 256u);
}

TEST(MountOptionsTest, MissThreadsTakeZeroToTurnThemOff) {
  auto defaults = ParseMountOptions(WithOptions({}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->fs.miss_threads, 16u);
  for (unsigned n : {0u, 1u, 256u}) {
    auto parsed = ParseMountOptions(WithOptions({"miss_threads=" + std::to_string(n)}));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->fs.miss_threads, n);
  }
  auto bad = ParseMountOptions(WithOptions({"miss_threads=257"}));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// The message a bad option gets, from -o and from its long twin alike.
std::string ErrorOf(const MountArgs& args) {
  auto parsed = ParseMountOptions(args);
  if (parsed.ok()) return "(accepted)";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(MountOptionsTest, NumbersAreReadWholeAndRangeChecked) {
  const std::pair<const char*, const char*> cases[] = {
      // strtoul once read these as 5, 4294967295, 100000 (an empty RAM tier) and 0.
      {"threads=5x", "-o threads=5x: not a whole number"},
      {"threads=-1", "-o threads=-1: not a whole number"},
      {"threads=+4", "-o threads=+4: not a whole number"},
      {"threads= 4", "-o threads= 4: not a whole number"},
      {"threads=100000", "-o threads=100000: must be between 1 and 256"},
      {"threads=99999999999999999999999",
       "-o threads=99999999999999999999999: must be between 1 and 256"},
      {"threads=0", "-o threads=0: must be between 1 and 256"},
      {"threads=257", "-o threads=257: must be between 1 and 256"},
      {"threads=", "-o threads=: needs a value (a whole number between 1 and 256)"},
      {"threads", "-o threads: needs a value (a whole number between 1 and 256)"},
      // Once ~4 GiB and the kernel default 128.
      {"read_ahead_kb=-5", "-o read_ahead_kb=-5: not a whole number"},
      {"read_ahead_kb=abc", "-o read_ahead_kb=abc: not a whole number"},
      {"read_ahead_kb=65537", "-o read_ahead_kb=65537: must be between 0 and 65536"},
      {"read_ahead_kb=4194304", "-o read_ahead_kb=4194304: must be between 0 and 65536"},
  };
  for (const auto& [option, message] : cases) {
    EXPECT_EQ(ErrorOf(WithOptions({option})), message) << option;
  }
  // --threads takes the same path: 0 was accepted (as "not given").
  MountArgs args = WithOptions({});
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"0", "--threads 0: must be between 1 and 256"},
           {"5x", "--threads 5x: not a whole number"},
           {"-1", "--threads -1: not a whole number"},
           {"100000", "--threads 100000: must be between 1 and 256"},
           {"", "--threads '': needs a value (a whole number between 1 and 256)"}}) {
    args.threads = value;
    EXPECT_EQ(ErrorOf(args), message) << value;
  }
}

TEST(MountOptionsTest, SizesAreReadWholeAndRangeChecked) {
  const std::pair<std::string, std::string> cases[] = {
      {"ram_cache=", "-o ram_cache=: needs a value (a size between 0 and 1024T)"},
      {"ram_cache=-1G", "-o ram_cache=-1G: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=1e9", "-o ram_cache=1e9: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=0x10", "-o ram_cache=0x10: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache= 1G", "-o ram_cache= 1G: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=1G ", "-o ram_cache=1G : not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=inf", "-o ram_cache=inf: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=1.", "-o ram_cache=1.: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"ram_cache=2000T", "-o ram_cache=2000T: must be between 0 and 1024T"},
      // Too large for any unit is still a range error, not an unknown unit.
      {"ram_cache=99999999999999999999999",
       "-o ram_cache=99999999999999999999999: must be between 0 and 1024T"},
      {"memory=99999999999999999999999G",
       "-o memory=99999999999999999999999G: must be between 64M and 1024T"},
      {"ram_cache=1" + std::string(400, '0'),
       "-o ram_cache=1" + std::string(400, '0') + ": must be between 0 and 1024T"},
      {"ram_cache=5Q", "-o ram_cache=5Q: unknown unit (use K, M, G or T)"},
      {"memory=10M", "-o memory=10M: must be between 64M and 1024T"},
      {"ssd_cache=0", "-o ssd_cache=0: must be between 1M and 1024T"},
      {"cache_dir=", "-o cache_dir=: needs a value (a directory)"},
      {"extents=1e5", "-o extents=1e5: not a size (expected e.g. 4096, 512M, 1.5G)"},
      {"cluster_cache=", "-o cluster_cache=: needs a value (HOST:PORT[,HOST:PORT...])"},
      {"nonempty=1", "-o nonempty=1: takes no value"},
  };
  for (const auto& [option, message] : cases) {
    EXPECT_EQ(ErrorOf(WithOptions({option})), message) << option;
  }
  EXPECT_EQ(ErrorOf(WithOptions({"extents=1K"})).rfind("-o extents=1K: ", 0), 0u);
  // The long options go through the same checks; '' was once accepted as "not given".
  MountArgs args = WithOptions({});
  args.ram_cache = "";
  EXPECT_EQ(ErrorOf(args), "--ram-cache '': needs a value (a size between 0 and 1024T)");
  args = WithOptions({});
  args.memory = "1x";
  EXPECT_EQ(ErrorOf(args), "--memory 1x: unknown unit (use K, M, G or T)");
  args = WithOptions({});
  args.ssd_cache = "-5";
  EXPECT_EQ(ErrorOf(args), "--ssd-cache -5: not a size (expected e.g. 4096, 512M, 1.5G)");
  args = WithOptions({});
  args.cache_dir = "";
  EXPECT_EQ(ErrorOf(args), "--cache-dir '': needs a value (a directory)");
  args = WithOptions({});
  args.cluster_cache = "nohostport";
  EXPECT_EQ(ErrorOf(args),
            "--cluster-cache nohostport: cluster cache server 'nohostport' is not HOST:PORT");
  // What is in range is taken, fractions and units included.
  auto fine = ParseMountOptions(WithOptions({"ram_cache=0,memory=64M,ssd_cache=1.5G"}));
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->ram_cache, 0u);
  EXPECT_EQ(fine->memory, 64ull << 20);
  EXPECT_EQ(fine->ssd_cache_bytes, 3ull << 29);
}

TEST(MountOptionsTest, SuidAndDevAreRefusedNosuidNodevAccepted) {
  EXPECT_EQ(ErrorOf(WithOptions({"allow_other,suid"})),
            "mmfs mounts are always nosuid,nodev: -o suid would let a setuid file in the "
            "dataset run as its owner; drop it");
  EXPECT_EQ(ErrorOf(WithOptions({"dev"})),
            "mmfs mounts are always nosuid,nodev: -o dev would let a device file in the dataset "
            "open a device; drop it");
  auto parsed = ParseMountOptions(WithOptions({"nosuid,nodev,allow_other"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  // Not passed on: the server adds them itself, last (fuse_server.cc).
  EXPECT_EQ(parsed->mount.fuse_options, (std::vector<std::string>{"allow_other"}));
}

// Either would override the server's own (subtype=mmfs, fsname=mmfs:DATASET), and then
// `mmfs umount` would not know the mount as an mmfs mount.
TEST(MountOptionsTest, SubtypeAndFsnameAreRefused) {
  EXPECT_EQ(ErrorOf(WithOptions({"allow_other,subtype=other"})),
            "-o subtype=other: not allowed; mmfs sets the subtype (mmfs, so that 'mmfs umount' "
            "knows its mounts) itself; drop it");
  EXPECT_EQ(ErrorOf(WithOptions({"fsname=x"})),
            "-o fsname=x: not allowed; mmfs sets the fsname (mmfs:DATASET) itself; drop it");
  EXPECT_FALSE(ParseMountOptions(WithOptions({"subtype"})).ok());
  EXPECT_FALSE(ParseMountOptions(WithOptions({"fsname="})).ok());
}

// libfuse ends the session when INIT does not repeat max_read; refused up front instead of
// "Connection refused" after the fork.
TEST(MountOptionsTest, MaxReadIsRefusedUpFront) {
  EXPECT_EQ(ErrorOf(WithOptions({"max_read=1"})),
            "-o max_read=1: not supported; the size of READs follows -o read_ahead_kb (0 to "
            "65536)");
}

TEST(MountOptionsTest, ReaddirPlus) {
  EXPECT_EQ(ParseMountOptions(WithOptions({"readdirplus=auto"}))->readdirplus,
            fs::ReaddirPlus::kAuto);
  EXPECT_EQ(ParseMountOptions(WithOptions({"readdirplus=always"}))->readdirplus,
            fs::ReaddirPlus::kAlways);
  EXPECT_EQ(ParseMountOptions(WithOptions({"readdirplus=off"}))->readdirplus,
            fs::ReaddirPlus::kOff);
  auto bad = ParseMountOptions(WithOptions({"readdirplus=sometimes"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "-o readdirplus=sometimes: must be off, auto or always");
}

TEST(MountOptionsTest, ClusterServersAcrossCommaItems) {
  // -o cluster_cache=a:11211,b:11211 arrives as two items; the second is still a server.
  auto parsed = ParseMountOptions(WithOptions({"cluster_cache=a:11211,b:11211,allow_other"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->cluster_servers, (std::vector<std::string>{"a:11211", "b:11211"}));
  EXPECT_EQ(parsed->mount.fuse_options, (std::vector<std::string>{"allow_other"}));
  auto bad = ParseMountOptions(WithOptions({"cluster_cache=nohostport"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "-o cluster_cache=nohostport: cluster cache server 'nohostport' is not HOST:PORT");
}

TEST(MountOptionsTest, UnknownWordsGoToLibfuseAndFstabWordsAreIgnored) {
  auto parsed = ParseMountOptions(
      WithOptions({"ro,defaults,noauto,_netdev,nofail,user,users,allow_other,auto_unmount"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.fuse_options, (std::vector<std::string>{"allow_other", "auto_unmount"}));
}

TEST(MountOptionsTest, ReadWriteIsRefused) {
  auto parsed = ParseMountOptions(WithOptions({"ro", "rw"}));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "mmfs mounts are read-only; drop the 'rw' option");
}

TEST(MountOptionsTest, FlagsAndCacheDirMadeAbsolute) {
  auto parsed = ParseMountOptions(WithOptions({"nonempty,overlay,cache_dir=rel/dir/"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->nonempty);
  EXPECT_TRUE(parsed->mount.overlay_front);
  EXPECT_TRUE(std::filesystem::path(parsed->cache_dir).is_absolute()) << parsed->cache_dir;
  MountArgs args = WithOptions({"cache_dir=/a"});
  args.cache_dir = "/b/./c";
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->cache_dir, "/b/c");
}

}  // namespace
}  // namespace mmfs::cli
