#include "tools/pack/packer.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/pack/image_check.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {
namespace {

using testing::CollectingReporter;
using testing::MakeJpeg;
using testing::PackFolder;
using testing::TempDir;
using testing::WriteFile;

bool Contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(SampleKeyTest, FirstDotRule) {
  EXPECT_EQ(SampleKeyOf("000123.jpg"), "000123");
  EXPECT_EQ(SampleKeyOf("a.b.c"), "a");
  EXPECT_EQ(SampleKeyOf(".hidden"), ".hidden");
  EXPECT_EQ(SampleKeyOf("README"), "README");
}

TEST(JpegCheckerTest, AcceptsRealJpegsAndRejectsDamage) {
  JpegChecker checker;
  std::string jpeg = MakeJpeg(64, 48);
  auto info = checker.Check(jpeg);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->width, 64u);
  EXPECT_EQ(info->height, 48u);
  EXPECT_FALSE(checker.Check(jpeg.substr(0, jpeg.size() / 2)).ok());  // truncated
  auto html = checker.Check("<html>not found</html>");
  ASSERT_FALSE(html.ok());
  EXPECT_NE(html.status().message().find("<htm"), std::string::npos);
  EXPECT_FALSE(checker.Check("").ok());
  std::string bad_header = jpeg;
  for (size_t i = 2; i < 200 && i < bad_header.size(); ++i) bad_header[i] = 0;
  EXPECT_FALSE(checker.Check(bad_header).ok());
  EXPECT_TRUE(HasJpegExtension("x.JPG"));
  EXPECT_TRUE(HasJpegExtension("x.jpeg"));
  EXPECT_FALSE(HasJpegExtension("x.png"));
}

class PackerTest : public ::testing::Test {
 protected:
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "out.mmfs"; }
  TempDir tmp_;
};

TEST_F(PackerTest, PacksTreeWithImageSizes) {
  WriteFile(src() + "/train/cat/1.jpg", MakeJpeg(32, 16));
  WriteFile(src() + "/train/cat/1.txt", "a cat");
  WriteFile(src() + "/train/dog/2.jpg", MakeJpeg(8, 8));
  auto s = PackFolder(src(), dst());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 3u);
  EXPECT_EQ(s->samples, 2u);
  EXPECT_EQ(s->directories, 4u);  // root, train, cat, dog
  auto ds = format::Dataset::Open(dst());
  ASSERT_TRUE(ds.ok());
  auto root = *(*ds)->GetEntry(0);
  auto cat = *(*ds)->LookupChild(*(*ds)->LookupChild(root, "train"), "cat");
  auto jpg = *(*ds)->LookupChild(cat, "1.jpg");
  EXPECT_EQ(jpg.record.width, 32);
  EXPECT_EQ(jpg.record.height, 16);
  // No leftovers next to DST.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2);  // src and out.mmfs
}

TEST_F(PackerTest, BadJpegFailsByDefaultNamingTheFile) {
  WriteFile(src() + "/a/good.jpg", MakeJpeg(8, 8));
  WriteFile(src() + "/a/broken.jpg", "GIF89a");
  auto s = PackFolder(src(), dst());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("broken.jpg"), std::string::npos);
  EXPECT_NE(s.status().message().find("--on-bad"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dst()));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp_.path()),
                          std::filesystem::directory_iterator()),
            1);  // the partial directory is gone
}

TEST_F(PackerTest, BadJpegSkipOrKeep) {
  WriteFile(src() + "/a/good.jpg", MakeJpeg(8, 8));
  WriteFile(src() + "/a/broken.jpg", MakeJpeg(8, 8).substr(0, 100));
  CollectingReporter skip_reporter;
  auto skipped = PackFolder(src(), dst(), &skip_reporter, OnBadImage::kSkip);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(skipped->files, 1u);
  EXPECT_EQ(skipped->bad_images, 1u);
  EXPECT_TRUE(Contains(skip_reporter.warnings, "broken.jpg"));
  CollectingReporter keep_reporter;
  auto kept = PackFolder(src(), tmp_ / "kept", &keep_reporter, OnBadImage::kKeep);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->files, 2u);
  EXPECT_TRUE(Contains(keep_reporter.warnings, "broken.jpg"));
}

TEST_F(PackerTest, ExistingDestinationNeedsForce) {
  WriteFile(src() + "/x.txt", "1");
  ASSERT_TRUE(PackFolder(src(), dst()).ok());
  auto again = PackFolder(src(), dst());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  WriteFile(src() + "/y.txt", "2");
  auto forced = PackFolder(src(), dst(), nullptr, OnBadImage::kFail, 1 << 30, /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ(forced->files, 2u);
  // --force never replaces something that is not a dataset.
  WriteFile(tmp_ / "precious/file", "keep me");
  auto refused =
      PackFolder(src(), tmp_ / "precious", nullptr, OnBadImage::kFail, 1 << 30, /*force=*/true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(testing::ReadFile(tmp_ / "precious/file"), "keep me");
}

TEST_F(PackerTest, DestinationInsideSourceRefused) {
  WriteFile(src() + "/x.txt", "1");
  auto s = PackFolder(src(), src() + "/packed");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("inside the source"), std::string::npos);
}

TEST_F(PackerTest, SymlinksInsideKeptOutsideSkippedSocketsSkipped) {
  WriteFile(src() + "/d/real.txt", "real");
  WriteFile(tmp_ / "outside.txt", "secret");
  ASSERT_EQ(::symlink("real.txt", (src() + "/d/rel_link").c_str()), 0);
  ASSERT_EQ(::symlink((src() + "/d/real.txt").c_str(), (src() + "/d/abs_link").c_str()), 0);
  ASSERT_EQ(::symlink((tmp_ / "outside.txt").c_str(), (src() + "/d/escape").c_str()), 0);
  ASSERT_EQ(::symlink("nowhere", (src() + "/d/dangling").c_str()), 0);
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  std::string sock_path = src() + "/d/sock";
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  CollectingReporter reporter;
  auto s = PackFolder(src(), dst(), &reporter);
  ::close(sock);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->symlinks, 2u);
  EXPECT_EQ(s->skipped, 3u);
  EXPECT_TRUE(Contains(reporter.warnings, "outside the source"));
  EXPECT_TRUE(Contains(reporter.warnings, "socket"));
  auto ds = format::Dataset::Open(dst());
  auto d = *(*ds)->LookupChild(*(*ds)->GetEntry(0), "d");
  EXPECT_EQ(*(*ds)->LinkTarget(*(*ds)->LookupChild(d, "rel_link")), "real.txt");
  EXPECT_EQ(*(*ds)->LinkTarget(*(*ds)->LookupChild(d, "abs_link")), "real.txt");
  EXPECT_FALSE((*ds)->LookupChild(d, "escape").ok());
}

TEST_F(PackerTest, SmallShardSizeMakesManyShards) {
  for (int i = 0; i < 20; ++i) {
    WriteFile(src() + "/f" + std::to_string(100 + i) + ".bin", std::string(300000, 'a' + i % 26));
  }
  auto s = PackFolder(src(), dst(), nullptr, OnBadImage::kFail, 1 << 20);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GE(s->shards, 5u);
  auto ds = format::OpenLocalDataset(dst());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto root = *ds->dataset->GetEntry(0);
  for (int i = 0; i < 20; ++i) {
    std::string name = "f";
    name += std::to_string(100 + i) + ".bin";
    auto e = ds->dataset->LookupChild(root, name);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(testing::ReadChecked(*ds->origin, *ds->dataset, *e),
              std::string(300000, 'a' + i % 26));
  }
}

TEST_F(PackerTest, CancelLeavesNothing) {
  for (int i = 0; i < 10; ++i) WriteFile(src() + "/" + std::to_string(i) + ".txt", "x");
  std::atomic<bool> cancel{true};
  PackOptions options;
  options.sources = {src()};
  options.destination = dst();
  options.cancel = &cancel;
  CollectingReporter reporter;
  auto s = Pack(options, reporter);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp_.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(PackerTest, LeftoversOfACrashedPackAreRemoved) {
  WriteFile(src() + "/x.txt", "1");
  // A partial directory of a pack whose process is gone (PID 999999999 cannot exist).
  WriteFile(tmp_ / ".out.mmfs.partial-999999999/shard-00000.mdb", "half");
  CollectingReporter reporter;
  ASSERT_TRUE(PackFolder(src(), dst(), &reporter).ok());
  EXPECT_FALSE(std::filesystem::exists(tmp_ / ".out.mmfs.partial-999999999"));
  EXPECT_TRUE(Contains(reporter.warnings, "interrupted pack"));
}

TEST_F(PackerTest, WarnsAboutATopLevelDotMmfs) {
  WriteFile(src() + "/.mmfs/notes.txt", "mine");
  CollectingReporter reporter;
  ASSERT_TRUE(PackFolder(src(), dst(), &reporter).ok());
  EXPECT_TRUE(Contains(reporter.warnings, "control directory"));
}

TEST_F(PackerTest, SamePackTwiceSameBytes) {
  WriteFile(src() + "/a/1.jpg", MakeJpeg(16, 16));
  WriteFile(src() + "/a/1.txt", "caption");
  WriteFile(src() + "/b/2.txt", "caption 2");
  ASSERT_TRUE(PackFolder(src(), tmp_ / "one").ok());
  ASSERT_TRUE(PackFolder(src(), tmp_ / "two").ok());
  EXPECT_EQ(testing::ReadFile(tmp_ / "one/index.mmfs"), testing::ReadFile(tmp_ / "two/index.mmfs"));
  EXPECT_EQ(testing::ReadFile(tmp_ / "one/shard-00000.mdb"),
            testing::ReadFile(tmp_ / "two/shard-00000.mdb"));
}

TEST_F(PackerTest, RootHasTheSourceRootsMtime) {
  WriteFile(src() + "/a/1.txt", "1");
  struct timespec times[2] = {{1600000000, 123456789}, {1600000000, 123456789}};
  ASSERT_EQ(::utimensat(AT_FDCWD, src().c_str(), times, 0), 0);
  ASSERT_TRUE(PackFolder(src(), dst()).ok());
  auto ds = format::Dataset::Open(dst());
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->GetEntry(0)->record.mtime_ns, 1600000000123456789);
}

// --on-bad skip leaves out the whole sample of a bad image: no caption without its image.
TEST_F(PackerTest, SkipLeavesOutTheBadImagesWholeSample) {
  WriteFile(src() + "/a/1.jpg", MakeJpeg(8, 8));
  WriteFile(src() + "/a/1.txt", "kept caption");
  WriteFile(src() + "/a/2.jpg", MakeJpeg(8, 8).substr(0, 100));
  WriteFile(src() + "/a/2.txt", "caption of a truncated image");
  WriteFile(src() + "/a/2.json", "{}");
  CollectingReporter reporter;
  auto s = PackFolder(src(), dst(), &reporter, OnBadImage::kSkip);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 2u);
  EXPECT_EQ(s->bad_images, 1u);
  EXPECT_EQ(s->samples_with_bad_image, 1u);
  EXPECT_EQ(s->skipped, 3u);
  EXPECT_TRUE(Contains(reporter.warnings, "left out with it: 2.json, 2.txt"));
  auto ds = format::Dataset::Open(dst());
  ASSERT_TRUE(ds.ok());
  auto a = *(*ds)->LookupChild(*(*ds)->GetEntry(0), "a");
  EXPECT_FALSE((*ds)->LookupChild(a, "2.txt").ok());
  EXPECT_FALSE((*ds)->LookupChild(a, "2.json").ok());
  EXPECT_TRUE((*ds)->LookupChild(a, "1.txt").ok());
  // --on-bad keep keeps the sample whole, the bad image with it.
  auto kept = PackFolder(src(), tmp_ / "kept", &reporter, OnBadImage::kKeep);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->files, 5u);
  EXPECT_EQ(kept->samples_with_bad_image, 0u);
}

}  // namespace
}  // namespace mmfs::pack
