// Serving a derived image view through the real CLI (issue 18): `mmfs pack --view 64`, then
// `MNT/@64/` as torchvision and PIL see it, and `mmfs mount --view 64` serving the same tree at
// its root.

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

// Shorter sides 80..200: every image is larger than 64 and so is resized by the view.
TEST(ViewMountTest, AtNServesTheViewToUnmodifiedLoaders) {
  TempDir tmp;
  const std::string src = tmp / "src", dst = tmp / "ds.mmfs";
  auto gen = RunCommand({GenDatasetBinary(), src, "-n", "60", "-c", "4", "--min-side", "80",
                         "--max-side", "200", "--seed", "5"},
                        300);
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

}  // namespace
}  // namespace mmfs::testing
