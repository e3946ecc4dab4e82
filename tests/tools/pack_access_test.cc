// What a packed dataset lets others read, and what the packer refuses to read or write: the
// modes of the outputs against the sources' (source_access.h), setuid/sticky bits and device
// types never packed, large files refused before they are read, and a dataset whose files are
// symbolic links refused.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "fs/format/dataset.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/local_dataset.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/packer.h"
#include "tools/pack/source_access.h"

namespace mmfs::pack {
namespace {

using testing::CollectingReporter;
using testing::MakeJpeg;
using testing::PackFolder;
using testing::TempDir;
using testing::WriteFile;

uint32_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

class PackAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The temporary folder is 0700 (mkdtemp): open it, so that only what a test sets counts.
    ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
    old_umask_ = ::umask(022);
  }
  void TearDown() override { ::umask(old_umask_); }
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "out.mmfs"; }
  // Every file of the dataset and the dataset folder, with their modes.
  void ExpectModes(uint32_t file_mode, uint32_t dir_mode) {
    EXPECT_EQ(Octal(ModeOf(dst())), Octal(dir_mode)) << dst();
    for (const char* f : {"manifest.json", "index.mmfs", "shard-00000.mdb"}) {
      EXPECT_EQ(Octal(ModeOf(dst() + "/" + f)), Octal(file_mode)) << f;
    }
  }
  TempDir tmp_;
  mode_t old_umask_ = 022;
};

TEST_F(PackAccessTest, WorldReadableSourcesGiveAWorldReadableDataset) {
  WriteFile(src() + "/a/1.jpg", MakeJpeg(8, 8));
  WriteFile(src() + "/a/1.txt", "one");
  ASSERT_EQ(::chmod(src().c_str(), 0755), 0);
  CollectingReporter reporter;
  auto s = PackFolder(src(), dst(), &reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectModes(0644, 0755);
  EXPECT_TRUE(reporter.warnings.empty()) << Joined(reporter.warnings);
}

TEST_F(PackAccessTest, APrivateFileMakesTheWholeDatasetPrivateAndWarns) {
  WriteFile(src() + "/a/1.jpg", MakeJpeg(8, 8));
  WriteFile(src() + "/a/1.txt", "public");
  WriteFile(src() + "/b/2.txt", "secret caption");
  ASSERT_EQ(::chmod((src() + "/b/2.txt").c_str(), 0600), 0);
  CollectingReporter reporter;
  auto s = PackFolder(src(), dst(), &reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectModes(0600, 0700);
  // One line: the counts of each access level and an example of the private one.
  ASSERT_EQ(reporter.warnings.size(), 1u) << Joined(reporter.warnings);
  const std::string& w = reporter.warnings[0];
  EXPECT_NE(w.find("2 access levels"), std::string::npos) << w;
  EXPECT_NE(w.find("1 file readable by their owner only, e.g. " + src() + "/b/2.txt (0600)"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("2 files readable by other users"), std::string::npos) << w;
}

TEST_F(PackAccessTest, AFolderWithoutSearchBitsHidesItsFilesAsTheirOwnModeWould) {
  // 0644 files in a 0700 folder, and the same above the source root: nobody else reads them.
  WriteFile(src() + "/private/1.txt", "one");
  ASSERT_EQ(::chmod((src() + "/private").c_str(), 0700), 0);
  auto s = PackFolder(src(), dst());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectModes(0600, 0700);

  std::string home = tmp_ / "home";
  WriteFile(home + "/data/1.txt", "one");
  ASSERT_EQ(::chmod(home.c_str(), 0700), 0);
  std::string out = tmp_ / "from-home.mmfs";
  ASSERT_TRUE(PackFolder(home + "/data", out).ok());
  EXPECT_EQ(Octal(ModeOf(out + "/shard-00000.mdb")), "0600");
  EXPECT_EQ(Octal(ModeOf(out + "/index.mmfs")), "0600");
  EXPECT_EQ(Octal(ModeOf(out)), "0700");
}

TEST_F(PackAccessTest, GroupReadableSourcesOfTheOutputsGroupKeepTheGroupBit) {
  WriteFile(src() + "/a/1.txt", "one");
  ASSERT_EQ(::chmod((src() + "/a/1.txt").c_str(), 0640), 0);
  auto s = PackFolder(src(), dst());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectModes(0640, 0750);
}

TEST_F(PackAccessTest, FilesOfTwoOwnersWarnWithCountsAndAnExample) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  WriteFile(src() + "/a/1.txt", "mine");
  WriteFile(src() + "/a/2.txt", "mine");
  WriteFile(src() + "/b/3.txt", "theirs");
  ASSERT_EQ(::chown((src() + "/b/3.txt").c_str(), 65534, 65534), 0);
  CollectingReporter reporter;
  auto s = PackFolder(src(), dst(), &reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(reporter.warnings.size(), 1u) << Joined(reporter.warnings);
  const std::string& w = reporter.warnings[0];
  EXPECT_NE(w.find("2 owners"), std::string::npos) << w;
  EXPECT_NE(w.find("uid 65534: 1 file, e.g. " + src() + "/b/3.txt"), std::string::npos) << w;
  EXPECT_NE(w.find("uid 0: 2 files"), std::string::npos) << w;
}

TEST_F(PackAccessTest, APrivateTarMakesAPrivateDataset) {
  // A WebDataset shard is one source file: its own mode decides.
  std::string tar = tmp_ / "tars/00000.tar";
  WriteTar(tar, {{"0.jpg", MakeJpeg(8, 8)}, {"0.txt", "caption"}});
  ASSERT_EQ(::chmod(tar.c_str(), 0600), 0);
  PackOptions options;
  options.sources = {tar};
  options.destination = dst();
  CollectingReporter reporter;
  auto s = Pack(options, reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Octal(ModeOf(dst() + "/index.mmfs")), "0600");
  EXPECT_EQ(Octal(ModeOf(dst())), "0700");
}

TEST_F(PackAccessTest, SetuidSetgidAndStickyBitsAreNeverPacked) {
  WriteFile(src() + "/bin/tool", "#!/bin/sh\n");
  WriteFile(src() + "/shared/x.txt", "x");
  ASSERT_EQ(::chmod((src() + "/bin/tool").c_str(), 06755), 0);
  ASSERT_EQ(::chmod((src() + "/shared").c_str(), 01777), 0);
  ASSERT_EQ(::chmod((src() + "/bin").c_str(), 02755), 0);
  auto s = PackFolder(src(), dst());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto ds = format::Dataset::Open(dst());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  for (uint64_t i = 0; i < (*ds)->entry_count(); ++i) {
    auto e = (*ds)->GetEntry(i);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->record.mode & 07000, 0u) << (*ds)->PathOf(i) << " " << Octal(e->record.mode);
  }
  auto root = *(*ds)->GetEntry(0);
  auto tool = (*ds)->LookupChild(*(*ds)->LookupChild(root, "bin"), "tool");
  ASSERT_TRUE(tool.ok());
  EXPECT_EQ(tool->record.mode, format::kModeRegular | 0755);
  EXPECT_EQ((*ds)->LookupChild(root, "shared")->record.mode, format::kModeDirectory | 0777);
}

TEST(IndexBuilderModesTest, RefusesSpecialBitsAndTypesItIsNotAddingAndMasksTheRoot) {
  format::IndexBuilder index(format::kModeDirectory | 01777, 0);
  ASSERT_TRUE(index.NextDirectory());
  format::FileLocation file;
  auto setuid = index.AddFile("a", format::kModeRegular | 04755, 0, file);
  ASSERT_FALSE(setuid.ok());
  EXPECT_NE(setuid.message().find("'a' has mode 104755"), std::string::npos) << setuid.message();
  EXPECT_FALSE(index.AddDirectory("b", format::kModeDirectory | 01777, 0).ok());
  EXPECT_FALSE(index.AddFile("c", 0020644, 0, file).ok());  // a character device
  EXPECT_FALSE(index.AddFile("d", 0010644, 0, file).ok());  // a FIFO
  EXPECT_FALSE(index.AddFile("e", format::kModeDirectory | 0755, 0, file).ok());
  EXPECT_TRUE(index.AddFile("f", format::kModeRegular | 0755, 0, file).ok());
  TempDir tmp;
  ASSERT_TRUE(index.Write(tmp / "index.mmfs").ok());
  std::string bytes = testing::ReadFile(tmp / "index.mmfs");
  format::EntryRecord root;
  std::memcpy(&root, bytes.data() + sizeof(format::IndexHeader), sizeof root);
  EXPECT_EQ(root.mode, format::kModeDirectory | 0777);
}

// Runs `fn` in a child process; returns how far its resident memory rose above what it had at the
// start (the peak, reset by clear_refs, less the RSS inherited from the test process) and what
// it wrote, so that a test can bound the memory a pack takes whatever tests ran before it.
struct ChildRun {
  uint64_t peak_growth_bytes = 0;
  std::string message;
  double seconds = 0;
};
template <typename Fn>
ChildRun RunInChild(Fn fn) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    // "5": the peak (VmHWM) starts again from the RSS now.
    const int clear = ::open("/proc/self/clear_refs", O_WRONLY);
    const bool reset = clear >= 0 && ::write(clear, "5", 1) == 1;
    if (clear >= 0) ::close(clear);
    const uint64_t at_start = testing::ProcStatusBytes(::getpid(), "VmRSS");
    std::string message = fn();
    const uint64_t peak = testing::ProcStatusBytes(::getpid(), "VmHWM");
    // Without the reset the peak would include the parent's: report it whole, failing safe.
    const uint64_t growth = !reset ? peak : peak > at_start ? peak - at_start : 0;
    std::string out = std::to_string(growth) + "\n" + message;
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildRun r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t nl = out.find('\n');
  if (nl != std::string::npos) {
    r.peak_growth_bytes = std::stoull(out.substr(0, nl));
    r.message = out.substr(nl + 1);
  }
  return r;
}

TEST_F(PackAccessTest, ALargeFileThatIsNotItsImageTypeIsRefusedFromItsHeader) {
  WriteFile(src() + "/a/1.jpg", MakeJpeg(8, 8));
  std::string big = src() + "/a/2.jpg";
  WriteFile(big, "");
  ASSERT_EQ(::truncate(big.c_str(), 2ll << 30), 0);  // 2 GiB of zeros, sparse
  ChildRun r = RunInChild([&] {
    auto s = PackFolder(src(), dst());
    return s.ok() ? std::string("packed") : s.status().message();
  });
  EXPECT_NE(r.message.find(big + ": not a JPEG"), std::string::npos) << r.message;
  EXPECT_LT(r.peak_growth_bytes, 256ull << 20) << "peak RSS of the pack";
  EXPECT_LT(r.seconds, 30.0);
  // --on-bad skip leaves it out, unread, too.
  ChildRun skip = RunInChild([&] {
    CollectingReporter reporter;
    auto s = PackFolder(src(), dst(), &reporter, OnBadImage::kSkip);
    return s.ok() ? "packed " + std::to_string(s->files) + " " + Joined(reporter.warnings)
                  : s.status().message();
  });
  EXPECT_NE(skip.message.find("packed 1 "), std::string::npos) << skip.message;
  EXPECT_NE(skip.message.find("2.jpg: not a JPEG"), std::string::npos) << skip.message;
  EXPECT_LT(skip.peak_growth_bytes, 256ull << 20);
}

TEST_F(PackAccessTest, AFileOverTheLimitIsRefusedUnreadNamingItAndTheLimit) {
  WriteFile(src() + "/a/1.txt", "small");
  std::string big = src() + "/a/2.bin";
  WriteFile(big, "");
  ASSERT_EQ(::truncate(big.c_str(), (1ll << 30) + 1), 0);
  ChildRun r = RunInChild([&] {
    auto s = PackFolder(src(), dst());
    return s.ok() ? std::string("packed") : s.status().message();
  });
  EXPECT_NE(r.message.find(big + ": 1.00 GiB, over the limit of 1.00 GiB for one file"),
            std::string::npos)
      << r.message;
  EXPECT_LT(r.peak_growth_bytes, 256ull << 20);
  // --on-bad keep reads a bad image whole: the limit still holds.
  WriteFile(src() + "/a/3.jpg", "");
  ASSERT_EQ(::truncate((src() + "/a/3.jpg").c_str(), 4 << 20), 0);
  PackOptions options;
  options.sources = {src()};
  options.destination = dst();
  options.on_bad = OnBadImage::kKeep;
  options.max_file_bytes = 1 << 20;
  CollectingReporter reporter;
  auto keep = Pack(options, reporter);
  ASSERT_FALSE(keep.ok());
  EXPECT_NE(keep.status().message().find("over the limit of 1.00 MiB"), std::string::npos)
      << keep.status().message();
}

TEST_F(PackAccessTest, ADatasetWhoseFilesAreSymlinksIsRefusedNamingTheFile) {
  WriteFile(src() + "/a/1.txt", "one");
  ASSERT_TRUE(PackFolder(src(), dst()).ok());
  ASSERT_TRUE(format::Dataset::Open(dst()).ok());
  // The shard moved elsewhere and linked back: same bytes, but not the dataset's own file.
  std::string shard = dst() + "/shard-00000.mdb";
  std::string elsewhere = tmp_ / "elsewhere.mdb";
  ASSERT_EQ(::rename(shard.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), shard.c_str()), 0);
  // The index opens; the shard is refused where the shards are opened (the origin).
  EXPECT_TRUE(format::Dataset::Open(dst()).ok());
  auto ds = format::OpenLocalDataset(dst());
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(ds.status().message().find(shard + " is a symbolic link"), std::string::npos)
      << ds.status().message();
  ASSERT_EQ(::unlink(shard.c_str()), 0);
  ASSERT_EQ(::rename(elsewhere.c_str(), shard.c_str()), 0);
  for (const char* name : {"index.mmfs", "manifest.json"}) {
    std::string path = dst() + "/" + name;
    std::string moved = tmp_ / name;
    ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
    ASSERT_EQ(::symlink(moved.c_str(), path.c_str()), 0);
    auto linked = format::Dataset::Open(dst());
    ASSERT_FALSE(linked.ok()) << name;
    EXPECT_NE(linked.status().message().find(path + " is a symbolic link"), std::string::npos)
        << linked.status().message();
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::rename(moved.c_str(), path.c_str()), 0);
  }
  EXPECT_TRUE(format::OpenLocalDataset(dst()).ok());
}

}  // namespace
}  // namespace mmfs::pack
