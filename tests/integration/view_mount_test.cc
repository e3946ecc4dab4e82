// Serving a derived image view through the real CLI: `mmfs pack --view 64`, then
// `MNT/@64/` as torchvision and PIL see it, and `mmfs mount --view 64` serving the same tree at
// its root.

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

// Shorter sides 80..200: every image is larger than 64 and so is resized by the view.
TEST(ViewMountTest, AtNServesTheViewToUnmodifiedLoaders) {
  MMFS_SKIP_UNDER_TSAN();  // libvips builds a view; TSan checks the read path: ViewReadPathTest
  TempDir tmp;
  const std::string src = tmp / "src", dst = tmp / "ds.mmfs";
  auto gen = GenDataset(
      src, {"-n", "60", "-c", "4", "--min-side", "80", "--max-side", "200", "--seed", "5"}, 300);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  auto pack = RunCommand({MmfsBinary(), "pack", "--view", "64", src, dst}, 300);
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  std::filesystem::create_directories(tmp / "mnt");
  std::filesystem::create_directories(tmp / "mntv");
  {
    ForegroundMount mount(dst, tmp / "mnt");
    ASSERT_TRUE(mount.mounted());
    // Not in the root listing; found by name.
    for (const auto& e : std::filesystem::directory_iterator(tmp / "mnt")) {
      EXPECT_NE(e.path().filename().string(), "@64");
    }
    EXPECT_TRUE(std::filesystem::is_directory(tmp / "mnt/@64/train"));
    // `ls MNT/.mmfs/views` lists the view; the hint takes its paths and loads its files ahead
    // (first, while nothing is cached yet).
    auto hinted = RunCommand(
        {"/usr/bin/python3", "-c",
         "import json, os, random, sys, time\n"
         "mnt = sys.argv[1]\n"
         "assert os.listdir(os.path.join(mnt, '.mmfs', 'views')) == ['64']\n"
         "assert os.readlink(os.path.join(mnt, '.mmfs', 'views', '64')) == '../../@64'\n"
         "assert os.path.samefile(os.path.join(mnt, '.mmfs', 'views', '64'),\n"
         "                        os.path.join(mnt, '@64'))\n"
         "root = os.path.join(mnt, '@64', 'train')\n"
         "paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root)\n"
         "               for f in fs if f.endswith('.jpg'))\n"
         "random.Random(3).shuffle(paths)\n"
         "with open(os.path.join(mnt, '.mmfs', 'hint'), 'w') as f:\n"
         "    f.write(''.join(os.path.relpath(p, mnt) + '\\n' for p in paths))\n"
         "stats = lambda: json.load(open(os.path.join(mnt, '.mmfs', 'stats')))\n"
         "deadline = time.monotonic() + 30\n"
         "while stats()['readahead']['hint']['positions'] != len(paths):\n"
         "    assert time.monotonic() < deadline, stats()['readahead']['hint']\n"
         "    time.sleep(0.05)\n"
         "for p in paths:\n"
         "    open(p, 'rb').read(); open(p[:-4] + '.txt', 'rb').read()\n"
         "s = stats()\n"
         "assert s['readahead']['hint']['unknown_lines'] == 0, s['readahead']['hint']\n"
         "assert s['readahead']['hint']['cursor'] == len(paths), s['readahead']['hint']\n"
         "assert s['views']['64']['readahead_loads'] > 0, s['views']\n"
         "print('hinted', len(paths))\n",
         tmp / "mnt"},
        300);
    EXPECT_EQ(hinted.exit_code, 0) << hinted.output;
    EXPECT_NE(hinted.output.find("hinted 60"), std::string::npos) << hinted.output;
    auto check = RunCommand(
        {"/usr/bin/python3", "-c",
         "import os, sys\n"
         "from PIL import Image\n"
         "from torchvision.datasets import ImageFolder\n"
         "mnt = sys.argv[1]\n"
         "a = ImageFolder(os.path.join(mnt, 'train'))\n"
         "b = ImageFolder(os.path.join(mnt, '@64', 'train'))\n"
         "assert a.classes == b.classes, (a.classes, b.classes)\n"
         "rel = lambda ds, root: [(os.path.relpath(p, root), t) for p, t in ds.samples]\n"
         "assert rel(a, os.path.join(mnt, 'train')) == rel(b, os.path.join(mnt, '@64', 'train'))\n"
         "assert len(b.samples) == 60, len(b.samples)\n"
         "for (pa, _), (pb, _) in zip(a.samples, b.samples):\n"
         "    ia, ib = Image.open(pa), Image.open(pb)\n"
         "    assert min(ib.size) == 64, (pb, ib.size)\n"
         "    assert min(ia.size) >= 80, (pa, ia.size)\n"
         "    assert abs(ib.size[0] / ib.size[1] - ia.size[0] / ia.size[1]) < 0.05, (ia.size, ib.size)\n"
         "    ib.convert('RGB')\n"
         "    assert os.path.getsize(pb) == len(open(pb, 'rb').read())\n"
         "n = 0\n"
         "for d, _, files in os.walk(os.path.join(mnt, 'train')):\n"
         "    for f in files:\n"
         "        if not f.endswith('.txt'): continue\n"
         "        p = os.path.join(d, f)\n"
         "        q = os.path.join(mnt, '@64', os.path.relpath(p, mnt))\n"
         "        assert open(p, 'rb').read() == open(q, 'rb').read(), p\n"
         "        n += 1\n"
         "assert n == 60, n\n"
         "print('ok', len(b.samples), n)\n",
         tmp / "mnt"},
        300);
    EXPECT_EQ(check.exit_code, 0) << check.output;
    EXPECT_NE(check.output.find("ok 60 60"), std::string::npos) << check.output;
    // The view's counters in the stats.
    auto stats = RunCommand({MmfsBinary(), "stats", "--json", tmp / "mnt"}, 60);
    EXPECT_EQ(stats.exit_code, 0) << stats.output;
    EXPECT_NE(stats.output.find("\"64\""), std::string::npos) << stats.output;
    auto human = RunCommand({MmfsBinary(), "stats", tmp / "mnt"}, 60);
    EXPECT_EQ(human.exit_code, 0) << human.output;
    EXPECT_NE(human.output.find("view @64"), std::string::npos) << human.output;

    // `mount --view 64`: the same tree at the root, byte for byte.
    ForegroundMount view_mount(dst, tmp / "mntv", {"--view", "64"});
    ASSERT_TRUE(view_mount.mounted());
    auto diff = RunCommand({"diff", "-r", tmp / "mnt/@64", tmp / "mntv"}, 120);
    EXPECT_EQ(diff.exit_code, 0) << diff.output;
    auto differs = RunCommand({"diff", "-rq", tmp / "mnt/train", tmp / "mntv/train"}, 120);
    EXPECT_EQ(differs.exit_code, 1) << differs.output;  // the images differ, the captions not
    EXPECT_EQ(differs.output.find(".txt"), std::string::npos) << differs.output;
    EXPECT_EQ(view_mount.StopWith(SIGTERM), 0);
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);
  }
  EXPECT_FALSE(IsMountPoint(tmp / "mnt"));
  EXPECT_FALSE(IsMountPoint(tmp / "mntv"));
  // A view the dataset does not have is refused, naming the ones it has.
  auto refused = RunCommand({MmfsBinary(), "mount", "--view", "128", dst, tmp / "mntv"}, 60);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("views: 64"), std::string::npos) << refused.output;
  EXPECT_FALSE(IsMountPoint(tmp / "mntv"));
}

// A dataset packed before views existed (tests/fixtures/v1-dataset, packed at 2df7dc4): it still
// verifies and mounts, gets a view added, and then verifies, shows in `mmfs info` and serves it.
TEST(ViewMountTest, ADatasetPackedBeforeViewsMountsVerifiesAndGetsAView) {
  MMFS_SKIP_UNDER_TSAN();  // libvips builds a view; TSan checks the read path: ViewReadPathTest
  TempDir tmp;
  const std::string dst = tmp / "v1.mmfs";
  std::filesystem::copy(SourceDir() + "/tests/fixtures/v1-dataset", dst);
  std::filesystem::create_directories(tmp / "mnt");
  auto verify = RunCommand({MmfsBinary(), "verify", dst}, 120);
  ASSERT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find("14 files"), std::string::npos) << verify.output;
  auto info = RunCommand({MmfsBinary(), "info", dst}, 60);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("views: none"), std::string::npos) << info.output;

  // Every file of the old dataset reads through a mount; the walk finds all 14 and the .json
  // member has its original bytes. With a view, @64 has the same names, every image resized so
  // that its shorter side is 64, every other file byte for byte the original.
  const std::string check =
      "import os, sys\n"
      "from PIL import Image\n"
      "mnt, with_view = sys.argv[1], sys.argv[2] == '1'\n"
      "rel = lambda root: sorted(os.path.relpath(os.path.join(d, f), root)\n"
      "                          for d, _, fs in os.walk(root) for f in fs)\n"
      "names = rel(os.path.join(mnt, 'train'))\n"
      "assert len(names) == 14, names\n"
      "data = {n: open(os.path.join(mnt, 'train', n), 'rb').read() for n in names}\n"
      "assert data['class_000/00000000.json'] == b'{\"note\": \"a json member\"}\\n', data\n"
      "if with_view:\n"
      "    view = os.path.join(mnt, '@64', 'train')\n"
      "    assert rel(view) == names, (rel(view), names)\n"
      "    for n in names:\n"
      "        b = open(os.path.join(view, n), 'rb').read()\n"
      "        if n.endswith(('.jpg', '.png')):\n"
      "            small, orig = Image.open(os.path.join(view, n)), Image.open(os.path.join(mnt, 'train', n))\n"
      "            assert min(small.size) == 64 and small.format == orig.format, (n, small.size, orig.size)\n"
      "        else:\n"
      "            assert b == data[n], n\n"
      "print('read', len(names))\n";
  {
    ForegroundMount mount(dst, tmp / "mnt");
    ASSERT_TRUE(mount.mounted());
    auto read = RunCommand({"/usr/bin/python3", "-c", check, tmp / "mnt", "0"}, 120);
    EXPECT_EQ(read.exit_code, 0) << read.output;
    EXPECT_FALSE(std::filesystem::exists(tmp / "mnt/@64"));
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);
  }
  auto add = RunCommand({MmfsBinary(), "view", "add", dst, "64", "-q"}, 300);
  ASSERT_EQ(add.exit_code, 0) << add.output;
  verify = RunCommand({MmfsBinary(), "verify", dst}, 120);
  ASSERT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find("views: 1 checked (7 resized images"), std::string::npos)
      << verify.output;
  info = RunCommand({MmfsBinary(), "info", dst}, 60);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("view @64: 7 images resized"), std::string::npos) << info.output;
  auto info_json = RunCommand({MmfsBinary(), "info", "--json", dst}, 60);
  ASSERT_EQ(info_json.exit_code, 0) << info_json.output;
  auto j = nlohmann::json::parse(info_json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << info_json.output;
  ASSERT_EQ(j["views"].size(), 1u) << info_json.output;
  EXPECT_EQ(j["views"][0]["side"], 64);
  EXPECT_EQ(j["views"][0]["resized"], 7);
  {
    ForegroundMount mount(dst, tmp / "mnt");
    ASSERT_TRUE(mount.mounted());
    auto read = RunCommand({"/usr/bin/python3", "-c", check, tmp / "mnt", "1"}, 120);
    EXPECT_EQ(read.exit_code, 0) << read.output;
    EXPECT_NE(read.output.find("read 14"), std::string::npos) << read.output;
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);
  }
  EXPECT_FALSE(IsMountPoint(tmp / "mnt"));
}

}  // namespace
}  // namespace mmfs::testing
