// The fixture of the mount-by-URL tests (remote_mount_test.cc, fill_mount_test.cc): a dataset
// of two shards packed from files made here, a cache directory and a mount point of its own, the
// environment a mount of a URL sees (S3 credentials for s3rver, no AWS files of the machine's),
// and readers that check every byte against the source.
//
// Ownership: each test owns its folders; TearDown fails a test that leaves a mount or a daemon
// behind, and cleans up. Thread-safety: test-only.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/pack_helper.h"
#include "tests/s3rver_helper.h"
#include "tests/test_util.h"

namespace mmfs {

namespace fsys = std::filesystem;

// A file read whole through the mount: its bytes, or the errno that stopped the read.
struct Read {
  int error = 0;
  std::string bytes;
};

inline Read ReadThrough(const std::string& path) {
  Read out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = errno;
      break;
    }
    if (n == 0) break;
    out.bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// A dataset of two shards packed here from files made here (src), and the environment a mount
// of a URL sees: S3 credentials for s3rver and no AWS files of the machine's.
class RemoteMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 8; ++i) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) on "literal" + string.
      std::string stem = src.path();
      stem += "/d";
      stem += std::to_string(i % 2);
      stem += "/img";
      stem += std::to_string(i);
      testing::WriteFile(stem + ".jpg",
                         testing::MakeJpeg(64 + i, 48, static_cast<unsigned>(i + 1)));
      testing::WriteFile(stem + ".txt", std::string("caption ") + std::to_string(i));
    }
    for (int i = 0; i < ExtraFiles(); ++i) {
      testing::WriteFile(src / ("many/f" + std::to_string(100 + i) + ".txt"),
                         std::string(300 + i, static_cast<char>('a' + i % 26)));
    }
    // Two larger files, so that the dataset has two shards.
    std::string a(700 << 10, 'a'), b(700 << 10, 'b');
    for (size_t i = 0; i < a.size(); i += 4093) a[i] = static_cast<char>(i >> 12);
    for (size_t i = 0; i < b.size(); i += 4091) b[i] = static_cast<char>(i >> 12);
    testing::WriteFile(src / "big/a.bin", a);
    testing::WriteFile(src / "big/b.bin", b);
    auto packed =
        testing::PackFolder(src.path(), dataset(), nullptr, pack::OnBadImage::kFail, 1 << 20);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    ASSERT_TRUE(fsys::exists(dataset() + "/shard-00001.mdb"));
    for (const auto& e : fsys::recursive_directory_iterator(src.path())) {
      if (e.is_regular_file()) files.push_back(fsys::relative(e.path(), src.path()).string());
    }
    std::sort(files.begin(), files.end());

    testing::UseS3rverAccount(work.path());
  }
  void TearDown() override {
    ::unsetenv("MMFS_TEST_REMOTE_RETRY_MS");
    if (testing::IsMountPoint(mnt()) || !testing::FindDaemons(mnt()).empty()) {
      ADD_FAILURE() << "a mount or daemon was left behind at " << mnt();
      testing::ForceCleanup(mnt());
    }
  }

  // Small files many/f100.txt, f101.txt, ... besides the samples: for tests that need many.
  virtual int ExtraFiles() const { return 0; }
  std::string dataset() const { return work / "ds.mmfs"; }
  const std::string& mnt() const { return mnt_dir.path(); }
  std::string Source(const std::string& rel) const { return testing::ReadFile(src / rel); }

  // Options every mount here takes: its own cache directory, and each file read on its own
  // (no sample readahead, no extents, no fill), so that a read reaches the server exactly when
  // the test reads that file.
  std::vector<std::string> Options(std::vector<std::string> more = {}) const {
    std::vector<std::string> o = {"--cache-dir", cache.path() + "/c", "--readahead", "off",
                                  "-o",          "extents=off,fill=off"};
    o.insert(o.end(), more.begin(), more.end());
    return o;
  }

  // `diff -r` of the source and the mount: "" when they are the same.
  std::string Diff() const {
    auto d = testing::Shell("diff -r '" + src.path() + "' '" + mnt() + "' 2>&1");
    return d.exit_code == 0 ? "" : "diff -r: " + d.output;
  }

  // Each file through the mount: its error (0: read whole). A file read whole must hold the
  // source's exact bytes (a test failure otherwise); an error must be EIO.
  std::map<std::string, int> ReadAll(const std::vector<std::string>& which) const {
    std::map<std::string, int> out;
    for (const std::string& rel : which) {
      Read r = ReadThrough(mnt() + "/" + rel);
      out[rel] = r.error;
      if (r.error == 0) {
        EXPECT_TRUE(r.bytes == Source(rel)) << rel << ": other bytes than the source's";
      } else {
        EXPECT_EQ(r.error, EIO) << rel << ": " << std::strerror(r.error);
      }
    }
    return out;
  }

  testing::TempDir src, work, cache, mnt_dir;
  std::vector<std::string> files;  // relative to src, sorted
};

}  // namespace mmfs
