// The Filesystem's readahead: access patterns, the hinted order, sample members and the push,
// over the fixture's dataset.
#include "fs/core/filesystem.h"

#include "tests/fs/core/filesystem_fixture.h"

namespace mmfs::fs {
namespace {

using FilesystemReadaheadTest = FilesystemTest;

TEST_F(FilesystemReadaheadTest, InOrderReadsArePrefetched) {
  std::vector<uint64_t> inos;
  for (int i = 0; i < 300; ++i) inos.push_back(Walk("many/" + std::to_string(1000 + i) + ".txt").ino);
  int wrong = 0;
  for (size_t i = 0; i < inos.size(); ++i) {
    auto d = fs_->Read(inos[i], 0, 64, /*stream=*/42);
    if (!d.ok() || std::string(d->data, d->size) != std::to_string(i)) ++wrong;
    if (i % 16 == 0) fs_->DrainPrefetch();  // let the workers keep ahead, deterministically
  }
  EXPECT_EQ(wrong, 0);
  auto j = nlohmann::json::parse(fs_->StatsJson());
  const auto& seq = j["readahead"]["patterns"]["sequential"];
  EXPECT_GE(j["readahead"]["runs_detected"].get<int>(), 1);
  EXPECT_GT(seq["used"].get<int>(), 250) << j.dump(2);
  EXPECT_LT(j["origin"]["reads"].get<int>(), 50) << j.dump(2);
  EXPECT_GT(j["readahead"]["reads"].get<int>(), 0);
  // Fewer, larger reads: neighbours were coalesced.
  EXPECT_LT(j["readahead"]["reads"].get<int>(), seq["issued"].get<int>());
}

TEST_F(FilesystemReadaheadTest, ShuffledReadsPrefetchNothing) {
  Make(SampleReads());
  std::vector<uint64_t> inos;
  for (int i = 0; i < 300; ++i) inos.push_back(Walk("many/" + std::to_string(1000 + i) + ".txt").ino);
  std::vector<size_t> order(inos.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = (i * 7919) % order.size();  // a permutation
  for (size_t i : order) ASSERT_TRUE(fs_->Read(inos[i], 0, 64, 42).ok());
  fs_->DrainPrefetch();
  auto j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["readahead"]["patterns"]["sequential"]["issued"], 0) << j.dump(2);
  EXPECT_EQ(j["origin"]["reads"], 300);
}

TEST_F(FilesystemReadaheadTest, HintedShuffledOrderIsPrefetchedAheadOfTheReader) {
  FilesystemOptions o;
  o.mountpoint = "/mnt/data";
  o.hint_target = "/run/mmfs/x/hint";
  Make(o);
  auto control = *fs_->Lookup(kRootIno, kControlDirName);
  auto link = fs_->Lookup(control.ino, kHintFileName);
  ASSERT_TRUE(link.ok());
  EXPECT_TRUE(S_ISLNK(link->mode));
  EXPECT_EQ(*fs_->ReadLink(link->ino), "/run/mmfs/x/hint");
  EXPECT_EQ(List(control.ino, 10),
            (std::vector<std::string>{".", "..", "stats", "metrics", "hint"}));

  std::vector<int> order(300);
  for (int i = 0; i < 300; ++i) order[i] = (i * 7919) % 300;  // a permutation
  std::vector<std::string> lines;
  for (int i : order) lines.push_back("many/" + std::to_string(1000 + i) + ".txt");
  lines[1] = "/mnt/data/" + lines[1];  // absolute under the mount point works too
  lines.push_back("many/nonexistent.txt");
  lines.push_back("train");  // a directory names no file
  fs_->BeginHint();
  // The order arrives in pieces, as it does through the pipe.
  fs_->AddHintLines(std::vector<std::string>(lines.begin(), lines.begin() + 100));
  fs_->AddHintLines(std::vector<std::string>(lines.begin() + 100, lines.end()));
  fs_->EndHint();
  int wrong = 0;
  for (size_t n = 0; n < order.size(); ++n) {
    if (n % 16 == 0) fs_->DrainPrefetch();  // let the workers keep ahead, deterministically
    auto d = fs_->Read(Walk("many/" + std::to_string(1000 + order[n]) + ".txt").ino, 0, 64, 42);
    if (!d.ok() || std::string(d->data, d->size) != std::to_string(order[n])) ++wrong;
  }
  EXPECT_EQ(wrong, 0);
  auto j = nlohmann::json::parse(fs_->StatsJson());
  const auto& hint = j["readahead"]["hint"];
  EXPECT_EQ(hint["positions"], 300) << j.dump(2);
  EXPECT_EQ(hint["unknown_lines"], 2);
  EXPECT_EQ(hint["cursor"], 300);
  EXPECT_EQ(hint["off_order_reads"], 0);
  const auto& p = j["readahead"]["patterns"]["hint"];
  EXPECT_EQ(p["used"], 300) << j.dump(2);
  EXPECT_EQ(p["wasted"], 0);
  EXPECT_EQ(j["origin"]["reads"], 0);
  EXPECT_EQ(j["readahead"]["patterns"]["sequential"]["issued"], 0);
}

// With other users allowed to write hints, a hint for a file they could not read counts as a
// line that names no file, exactly like a name that does not exist: the hint's counters and the
// prefetch tell nobody what a closed folder holds. The mounting user alone keeps every hint.
TEST_F(FilesystemReadaheadTest, SharedHintsCountOnlyFilesEveryUserMayRead) {
  WriteFile(tmp_ / "src2/closed/secret.txt", "s");
  WriteFile(tmp_ / "src2/open/a.txt", "a");
  WriteFile(tmp_ / "src2/open/private.txt", "p");
  WriteFile(tmp_ / "src2/open/b.txt", "b");
  ASSERT_EQ(::chmod((tmp_ / "src2/closed").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((tmp_ / "src2/open/private.txt").c_str(), 0600), 0);
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src2", tmp_ / "ds2").ok());
  const std::vector<std::string> lines = {"closed/secret.txt", "closed/none.txt",
                                          "open/private.txt", "open/a.txt", "open/b.txt"};
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared ? "shared hint" : "owner's hint");
    fs_.reset();
    auto ds = format::Dataset::Open(tmp_ / "ds2");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    FilesystemOptions options;
    options.hint_open_to_all_only = shared;
    fs_ = testing::NewFilesystem(std::move(ds).value(), options);
    fs_->BeginHint();
    fs_->AddHintLines(lines);
    fs_->EndHint();
    fs_->DrainPrefetch();
    auto j = nlohmann::json::parse(fs_->StatsJson());
    EXPECT_EQ(j["readahead"]["hint"]["positions"], shared ? 2 : 4) << j.dump(2);
    EXPECT_EQ(j["readahead"]["hint"]["unknown_lines"], shared ? 3 : 1);
    EXPECT_EQ(j["readahead"]["patterns"]["hint"]["bytes_issued"], shared ? 2 : 4) << j.dump(2);
  }
}

TEST_F(FilesystemReadaheadTest, PrefetchedFilesAreClaimedForAPushAndCountedOnceStored) {
  fs_->BeginHint();
  fs_->AddHintLines({"many/1000.txt", "many/1001.txt", "many/1002.txt"});
  fs_->EndHint();
  fs_->DrainPrefetch();
  const uint64_t a = Walk("many/1000.txt").ino, b = Walk("many/1001.txt").ino;
  EXPECT_EQ(fs_->ClaimPrefetched(Walk("many/1003.txt").ino, 1 << 20, false)->size, 0u)
      << "not prefetched: nothing to push";
  EXPECT_EQ(fs_->ClaimPrefetched(a, 0, false)->size, 0u) << "larger than the push limit";
  EXPECT_EQ(fs_->ClaimPrefetched(Walk("many").ino, 1 << 20, false)->size, 0u);
  auto claimed = fs_->ClaimPrefetched(a, 1 << 20, false);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(std::string(claimed->data, claimed->size), "0");
  EXPECT_EQ(fs_->ClaimPrefetched(a, 1 << 20, false)->size, 0u) << "one push at a time";
  fs_->EndPush(a, 42, claimed->owner, /*stored=*/true);
  // b's push fails (the kernel did not know the inode yet): b waits for its reader.
  auto failed = fs_->ClaimPrefetched(b, 1 << 20, false);
  ASSERT_EQ(failed->size, 1u);
  fs_->EndPush(b, 42, failed->owner, /*stored=*/false);
  EXPECT_EQ(std::string(fs_->Read(b, 0, 64, 42)->data, 1), "1");
  auto j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["readahead"]["pushed"]["files"], 1) << j.dump(2);
  EXPECT_EQ(j["readahead"]["pushed"]["bytes"], 1);
  EXPECT_EQ(j["readahead"]["patterns"]["hint"]["used"], 2);
  EXPECT_EQ(j["readahead"]["hint"]["cursor"], 2) << "the pushed file moved the hint on";
  EXPECT_EQ(j["origin"]["reads"], 0);
  EXPECT_EQ(j["requests"]["read"]["count"], 1) << "a push is not a READ";
  EXPECT_EQ(j["bytes_served"], 1);
  // The pushed file is in the RAM tier now, as if read.
  EXPECT_EQ(TierOf(fs_->Stats(), "ram")->inserts, 2u);
}

// Under memory pressure the governor shrinks the RAM tier and the buffers
// (memory released at once) and stops pushing into the page cache, whose pages the daemon pays.
TEST_F(FilesystemReadaheadTest, MemoryTargetsShrinkTheTiersAndGateThePush) {
  for (int i = 0; i < 300; ++i) ReadAll(Walk("many/" + std::to_string(1000 + i) + ".txt").ino);
  ReadAll(Walk("big.bin").ino);
  ASSERT_GT(TierOf(fs_->Stats(), "ram")->bytes_used, 3u << 20);
  fs_->SetMemoryTargets({/*ram=*/64 << 10, /*prefetch=*/1 << 20, /*read_buffer=*/1 << 20,
                         /*push=*/false});
  const StatsSnapshot s = fs_->Stats();
  const cache::TierCounters& ram = *TierOf(s, "ram");
  EXPECT_EQ(ram.bytes_budget, 64u << 10);
  EXPECT_LE(ram.bytes_used, 64u << 10);
  EXPECT_EQ(s.readahead.buffer_budget, 1u << 20);
  EXPECT_EQ(s.read_buffer.budget, 1u << 20);
  EXPECT_EQ(fs_->RamBytesUsed(), ram.bytes_used);
  // Bytes stay right through the smaller tier.
  EXPECT_EQ(ReadAll(Walk("big.bin").ino), big_);
  // A prefetched file is not pushed while memory is tight; it waits for its READ.
  fs_->HandleControlLines({"evict many/1000.txt"});  // so that the hint loads it
  fs_->BeginHint();
  fs_->AddHintLines({"many/1000.txt"});
  fs_->EndHint();
  fs_->DrainPrefetch();
  const uint64_t ino = Walk("many/1000.txt").ino;
  EXPECT_EQ(fs_->ClaimPrefetched(ino, 1 << 20, false)->size, 0u);
  EXPECT_EQ(nlohmann::json::parse(fs_->StatsJson())["readahead"]["pushed"]["skipped"], 1);
  fs_->SetMemoryTargets({64 << 10, 1 << 20, 1 << 20, /*push=*/true});
  auto claimed = fs_->ClaimPrefetched(ino, 1 << 20, false);
  ASSERT_EQ(claimed->size, 1u);
  fs_->EndPush(ino, 42, claimed->owner, /*stored=*/false);
}

TEST_F(FilesystemReadaheadTest, NoHintFileWithoutAChannelOrWithReadaheadOff) {
  auto control = *fs_->Lookup(kRootIno, kControlDirName);
  EXPECT_EQ(fs_->Lookup(control.ino, kHintFileName).status().code(), StatusCode::kNotFound);
  FilesystemOptions off;
  off.readahead = false;
  off.hint_target = "/run/mmfs/x/hint";
  Make(off);
  fs_->BeginHint();
  fs_->AddHintLines({"many/1000.txt", "many/1001.txt"});
  fs_->DrainPrefetch();
  ASSERT_TRUE(fs_->Read(Walk("many/1000.txt").ino, 0, 64, 42).ok());
  auto j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["readahead"]["patterns"]["hint"]["issued"], 0) << j.dump(2);
  EXPECT_EQ(j["origin"]["reads"], 1);
}

TEST_F(FilesystemReadaheadTest, DamagedNeighbourIsNotPrefetchedAndReportsItself) {
  auto ds = format::Dataset::Open(tmp_ / "ds");
  auto cat = (*ds)->LookupChild(*(*ds)->LookupChild(*(*ds)->GetEntry(0), "train"), "cat");
  auto txt = (*ds)->LookupChild(*cat, "1.txt");
  int fd = ::open((tmp_ / "ds/shard-00000.mdb").c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "Z", 1, static_cast<off_t>(txt->record.data_offset)), 1);
  ::close(fd);
  Make(FilesystemOptions{});
  EXPECT_EQ(ReadAll(Walk("train/cat/1.jpg").ino), testing::MakeJpeg(20, 10));
  auto r = fs_->Read(Walk("train/cat/1.txt").ino, 0, 100);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace mmfs::fs
