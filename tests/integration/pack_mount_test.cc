// Mount tests of what `mmfs pack` makes of messy real-world inputs, through the real
// CLI: a corpus of odd-but-valid and damaged images under each --on-bad mode, checked by pack,
// verify and the mount in one place; one bad JPEG before many good ones; tars whose members are
// not grouped by sample, written by GNU tar and Python's tarfile.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

// A JPEG that PIL cannot write: arithmetic-coded and/or with restart markers every row of MCUs.
std::string MakeLibjpegJpeg(int width, int height, bool arithmetic, bool restarts) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &out, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  cinfo.arith_code = arithmetic ? TRUE : FALSE;
  if (restarts) cinfo.restart_in_rows = 1;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<unsigned char> row(static_cast<size_t>(width) * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width * 3; ++x) row[static_cast<size_t>(x)] = static_cast<unsigned char>(x * 7 + y * 3);
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string jpeg(reinterpret_cast<char*>(out), size);
  std::free(out);
  return jpeg;
}

// A baseline JPEG whose frame header claims `width` x `height`.
std::string JpegClaiming(int width, int height) {
  std::string jpeg = MakeJpeg(16, 16);
  size_t sof = jpeg.find("\xFF\xC0");
  jpeg[sof + 5] = static_cast<char>(height >> 8);
  jpeg[sof + 6] = static_cast<char>(height & 0xFF);
  jpeg[sof + 7] = static_cast<char>(width >> 8);
  jpeg[sof + 8] = static_cast<char>(width & 0xFF);
  return jpeg;
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class PackMountTest : public ::testing::Test {
 protected:
  // `mmfs pack ARGS...` under the C locale (as in a container), all output kept.
  CommandResult Pack(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "LC_ALL=C", "LANG=C", MmfsBinary(), "pack"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, 300);
  }
  TempDir tmp_;
};

TEST_F(PackMountTest, ImageCorpusThroughPackVerifyAndMount) {
  std::string src = tmp_ / "corpus";
  std::filesystem::create_directories(src);
  auto made = RunCommand(
      {"/usr/bin/python3", SourceDir() + "/tests/integration/make_image_corpus.py", src}, 120);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // PIL writes neither arithmetic coding nor restart markers; libjpeg-turbo does.
  WriteFile(src + "/ok_arithmetic.jpg", MakeLibjpegJpeg(40, 24, true, false));
  WriteFile(src + "/ok_arithmetic.txt", "arithmetic");
  WriteFile(src + "/ok_restart.jpg", MakeLibjpegJpeg(48, 40, false, true));
  WriteFile(src + "/ok_restart.txt", "restart markers");
  std::vector<std::string> bad;
  std::istringstream names(made.output);
  for (std::string n; names >> n;) bad.push_back(n);
  ASSERT_EQ(bad.size(), 8u) << made.output;

  // fail: stops at the first bad image in path order, naming it; nothing is left.
  auto fail = Pack({"--on-bad", "fail", src, tmp_ / "fail.mmfs"});
  EXPECT_EQ(fail.exit_code, 1) << fail.output;
  EXPECT_NE(fail.output.find("bad_absurd.jpg"), std::string::npos) << fail.output;
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "fail.mmfs"));

  // skip: every bad image named, its sample (the caption) left out with it, the rest packed.
  auto skip = Pack({"--on-bad", "skip", "-j", "2", src, tmp_ / "skip.mmfs"});
  ASSERT_EQ(skip.exit_code, 0) << skip.output;
  for (const std::string& b : bad) {
    EXPECT_EQ(CountOf(skip.output, "skipping " + src + "/" + b + ": "), 1u) << b << skip.output;
  }
  EXPECT_NE(skip.output.find("8 samples left out whole for a bad image"), std::string::npos)
      << skip.output;
  // keep: every bad image named and kept.
  auto keep = Pack({"--on-bad", "keep", src, tmp_ / "keep.mmfs"});
  ASSERT_EQ(keep.exit_code, 0) << keep.output;
  for (const std::string& b : bad) {
    EXPECT_EQ(CountOf(keep.output, "keeping " + src + "/" + b + ": "), 1u) << b << keep.output;
  }
  for (const char* d : {"skip.mmfs", "keep.mmfs"}) {
    auto verify = RunCommand({MmfsBinary(), "verify", tmp_ / d}, 120);
    EXPECT_EQ(verify.exit_code, 0) << d << ": " << verify.output;
  }

  std::filesystem::create_directories(tmp_ / "mnt_skip");
  std::filesystem::create_directories(tmp_ / "mnt_keep");
  {
    ForegroundMount skip_mount(tmp_ / "skip.mmfs", tmp_ / "mnt_skip");
    ForegroundMount keep_mount(tmp_ / "keep.mmfs", tmp_ / "mnt_keep");
    ASSERT_TRUE(skip_mount.mounted());
    ASSERT_TRUE(keep_mount.mounted());
    // keep: the whole corpus, byte for byte.
    auto diff_keep = RunCommand({"diff", "-r", src, tmp_ / "mnt_keep"}, 120);
    EXPECT_EQ(diff_keep.exit_code, 0) << diff_keep.output;
    // skip: the good samples byte for byte, nothing of the bad ones.
    auto diff_skip = RunCommand({"diff", "-r", "-x", "bad_*", src, tmp_ / "mnt_skip"}, 120);
    EXPECT_EQ(diff_skip.exit_code, 0) << diff_skip.output;
    size_t ok_files = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp_ / "mnt_skip")) {
      std::string name = e.path().filename();
      EXPECT_EQ(name.rfind("bad_", 0), std::string::npos) << name;
      ok_files += name.rfind("ok_", 0) == 0;
    }
    EXPECT_EQ(ok_files, 28u);  // 14 images and their captions
    // Every good image decodes from the mount to the source's pixels.
    auto pixels = RunCommand(
        {"/usr/bin/python3", "-c",
         "import os, sys\n"
         "from PIL import Image\n"
         "n = icc = 0\n"
         "for f in sorted(os.listdir(sys.argv[1])):\n"
         "    if not f.startswith('ok_') or f.endswith('.txt'): continue\n"
         "    a, b = Image.open(os.path.join(sys.argv[1], f)), Image.open(os.path.join(sys.argv[2], f))\n"
         "    assert a.tobytes() == b.tobytes() and a.info.get('exif') == b.info.get('exif'), f\n"
         "    assert a.info.get('icc_profile') == b.info.get('icc_profile'), f\n"
         "    icc += a.info.get('icc_profile') is not None\n"
         "    n += 1\n"
         "assert icc >= 1, 'no image with an ICC profile was compared'\n"
         "print('decoded', n)\n",
         src, tmp_ / "mnt_skip"},
        300);
    EXPECT_EQ(pixels.exit_code, 0) << pixels.output;
    EXPECT_NE(pixels.output.find("decoded 14"), std::string::npos) << pixels.output;
    // The mount's root has the source root's mtime (find -newer, rsync).
    struct stat s, m;
    ASSERT_EQ(::stat(src.c_str(), &s), 0);
    ASSERT_EQ(::stat((tmp_ / "mnt_skip").c_str(), &m), 0);
    EXPECT_EQ(s.st_mtim.tv_sec, m.st_mtim.tv_sec);
    EXPECT_EQ(s.st_mtim.tv_nsec, m.st_mtim.tv_nsec);
    EXPECT_EQ(skip_mount.StopWith(SIGTERM), 0);
    EXPECT_EQ(keep_mount.StopWith(SIGTERM), 0);
  }
  EXPECT_FALSE(IsMountPoint(tmp_ / "mnt_skip"));
  EXPECT_FALSE(IsMountPoint(tmp_ / "mnt_keep"));
}

// One JPEG with an impossible header used to make --on-bad skip drop all the
// JPEGs after it ("two SOI markers").
TEST_F(PackMountTest, OneBadJpegDoesNotCostTheGoodOnesAfterIt) {
  std::string src = tmp_ / "src";
  WriteFile(src + "/0000.jpg", JpegClaiming(65535, 65535));
  WriteFile(src + "/0001.jpg", JpegClaiming(0, 16));
  for (int i = 0; i < 100; ++i) {
    WriteFile(src + "/" + std::to_string(1000 + i) + ".jpg",
              MakeJpeg(16 + i % 7, 12, static_cast<unsigned>(i)));
  }
  for (const char* jobs : {"1", "2"}) {
    std::string dst = tmp_ / (std::string("j") + jobs + ".mmfs");
    std::string mnt = tmp_ / (std::string("mnt") + jobs);
    auto pack = Pack({"--on-bad", "skip", "-j", jobs, src, dst});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    EXPECT_EQ(CountOf(pack.output, "warning: "), 2u) << pack.output;
    EXPECT_NE(pack.output.find("packed 100 samples"), std::string::npos) << pack.output;
    std::filesystem::create_directories(mnt);
    ForegroundMount mount(dst, mnt);
    ASSERT_TRUE(mount.mounted());
    auto diff = RunCommand({"diff", "-r", "-x", "000[01].jpg", src, mnt}, 120);
    EXPECT_EQ(diff.exit_code, 0) << diff.output;
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(mnt)) files += e.is_regular_file();
    EXPECT_EQ(files, 100u) << "-j " << jobs;
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);
  }
}

// Tars as `tar -C dir -cf x.tar .` writes them (members of a sample
// apart) lose no sample; UTF-8 names need no locale; a .tar.gz prints 100% once.
TEST_F(PackMountTest, UngroupedTarsKeepEveryMember) {
  std::string dir = tmp_ / "dir";
  std::vector<std::string> txts, rest;
  for (int i = 0; i < 30; ++i) {
    std::string k = "good" + std::to_string(i);
    WriteFile(dir + "/" + k + ".jpg", MakeJpeg(24, 16, static_cast<unsigned>(i)));
    WriteFile(dir + "/" + k + ".txt", "caption " + std::to_string(i));
    WriteFile(dir + "/" + k + ".json", "{\"i\": " + std::to_string(i) + "}");
    txts.push_back("./" + k + ".txt");
    rest.push_back("./" + k + ".jpg");
    rest.push_back("./" + k + ".json");
  }
  WriteFile(dir + "/ünïcødé 日本.jpg", MakeJpeg(8, 8));
  WriteFile(dir + "/ünïcødé 日本.txt", "non-ASCII name");
  // GNU tar in directory order, and in an order that surely splits every sample: all captions
  // first, then the images.
  auto gnu = Shell("tar -C '" + dir + "' -cf '" + (tmp_ / "gnu.tar") + "' . && tar -C '" + dir +
                   "' -czf '" + (tmp_ / "gz.tar.gz") + "' .");
  ASSERT_EQ(gnu.exit_code, 0) << gnu.output;
  std::vector<std::string> split = {"tar", "-C", dir, "-cf", tmp_ / "split.tar"};
  split.insert(split.end(), txts.begin(), txts.end());
  split.insert(split.end(), rest.begin(), rest.end());
  split.push_back("./ünïcødé 日本.txt");
  split.push_back("./ünïcødé 日本.jpg");
  ASSERT_EQ(RunCommand(split).exit_code, 0);
  auto py = RunCommand({"/usr/bin/python3", "-c",
                        "import sys, tarfile\n"
                        "with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as t:\n"
                        "    t.add(sys.argv[2], arcname='.')\n",
                        tmp_ / "py.tar", dir});
  ASSERT_EQ(py.exit_code, 0) << py.output;

  std::string dst = tmp_ / "tars.mmfs";
  auto pack = Pack({tmp_ / "gnu.tar", tmp_ / "gz.tar.gz", tmp_ / "split.tar", tmp_ / "py.tar", dst});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  EXPECT_EQ(pack.output.find("warning"), std::string::npos) << pack.output;
  EXPECT_EQ(pack.output.find("can't be converted"), std::string::npos) << pack.output;
  EXPECT_EQ(CountOf(pack.output, "100%"), 1u) << pack.output;
  for (size_t at = pack.output.find('%'); at != std::string::npos; at = pack.output.find('%', at + 1)) {
    size_t start = pack.output.rfind('\n', at);
    int percent = std::atoi(pack.output.c_str() + (start == std::string::npos ? 0 : start + 1));
    EXPECT_LE(percent, 100) << pack.output;
  }
  std::string mnt = tmp_ / "mnt";
  std::filesystem::create_directories(mnt);
  ForegroundMount mount(dst, mnt);
  ASSERT_TRUE(mount.mounted());
  for (const char* t : {"gnu", "gz", "split", "py"}) {
    auto diff = RunCommand({"diff", "-r", dir, mnt + "/" + t}, 120);
    EXPECT_EQ(diff.exit_code, 0) << t << ": " << diff.output;
  }
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
