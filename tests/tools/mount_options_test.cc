// ParseMountOptions: -o lists and the long options of `mmfs mount`, parsed without a mount.
#include "tools/mmfs/mount_options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
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
  auto off = ParseMountOptions(
      WithOptions({"readahead=off", "hint=off,direct=off", "push=off", "hold_once=off",
                   "lock_index=off"}));
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->fs.readahead);
  EXPECT_FALSE(off->hint);
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
  EXPECT_FALSE(ParseMountOptions(WithOptions({"readers=off"})).value().fs.reader_accounting);
}

TEST(MountOptionsTest, BadOnOffValueNamesTheOptionAndTheValue) {
  for (const std::string key :
       {"readahead", "hint", "direct", "push", "hold_once", "lock_index", "opendir", "readers"}) {
    auto parsed = ParseMountOptions(WithOptions({key + "=maybe"}));
    ASSERT_FALSE(parsed.ok()) << key;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), key + " must be on or off, not 'maybe'");
  }
  MountArgs args = WithOptions({});
  args.readahead = "yes";
  auto parsed = ParseMountOptions(args);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "--readahead must be on or off, not 'yes'");
}

TEST(MountOptionsTest, Sizes) {
  auto parsed = ParseMountOptions(WithOptions({"ram_cache=64M,ssd_cache=2G"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ram_cache, 64ull << 20);
  EXPECT_EQ(parsed->ssd_cache_bytes, 2ull << 30);

  // The long options override -o.
  MountArgs args = WithOptions({"ram_cache=64M,ssd_cache=2G"});
  args.ram_cache = "1G";
  args.ssd_cache = "512K";
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ram_cache, 1ull << 30);
  EXPECT_EQ(parsed->ssd_cache_bytes, 512ull << 10);

  // --memory (issue 19): -o memory=, overridden by the long option.
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
  EXPECT_NE(bad.status().message().find("'lots'"), std::string::npos) << bad.status().message();
  bad = ParseMountOptions(WithOptions({"ssd_cache=3Q"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'3Q'"), std::string::npos) << bad.status().message();
}

TEST(MountOptionsTest, ThreadsAndReadAhead) {
  auto parsed = ParseMountOptions(WithOptions({"threads=4,read_ahead_kb=0"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.max_threads, 4u);
  EXPECT_EQ(parsed->mount.read_ahead_kb, 0u);
  MountArgs args = WithOptions({"threads=4"});
  args.threads = 9;
  parsed = ParseMountOptions(args);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->mount.max_threads, 9u);
  auto bad = ParseMountOptions(WithOptions({"threads=0"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "threads must be >= 1");
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
  EXPECT_EQ(bad.status().message(), "readdirplus must be off, auto or always");
}

TEST(MountOptionsTest, ClusterServersAcrossCommaItems) {
  // -o cluster_cache=a:11211,b:11211 arrives as two items; the second is still a server.
  auto parsed = ParseMountOptions(WithOptions({"cluster_cache=a:11211,b:11211,allow_other"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->cluster_servers, (std::vector<std::string>{"a:11211", "b:11211"}));
  EXPECT_EQ(parsed->mount.fuse_options, (std::vector<std::string>{"allow_other"}));
  auto bad = ParseMountOptions(WithOptions({"cluster_cache=nohostport"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nohostport"), std::string::npos);
}

TEST(MountOptionsTest, UnknownWordsGoToLibfuseAndFstabWordsAreIgnored) {
  auto parsed = ParseMountOptions(
      WithOptions({"ro,defaults,noauto,_netdev,nofail,user,users,allow_other,auto_unmount"}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mount.fuse_options,
            (std::vector<std::string>{"allow_other", "auto_unmount"}));
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
