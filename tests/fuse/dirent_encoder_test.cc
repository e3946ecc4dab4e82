// EncodeDirent (fs/fuse/dirent_encoder.h) writes the bytes libfuse's fuse_add_direntry writes,
// from a name that is not NUL-terminated, and keeps its contract when the reply is full.
#include "fs/fuse/dirent_encoder.h"

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace mmfs::fs {
namespace {

// What libfuse writes for the entry (it ignores `req` for plain dirents).
std::string Libfuse(const std::string& name, uint64_t ino, uint32_t mode, uint64_t next) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = mode;
  const size_t need = fuse_add_direntry(nullptr, nullptr, 0, name.c_str(), &st,
                                        static_cast<off_t>(next));
  std::string out(need, '\x55');
  fuse_add_direntry(nullptr, out.data(), out.size(), name.c_str(), &st, static_cast<off_t>(next));
  return out;
}

TEST(DirentEncoderTest, WritesWhatLibfuseWrites) {
  const struct {
    std::string name;
    uint64_t ino;
    uint32_t mode;
  } cases[] = {{"a", 2, S_IFREG | 0444},
               {"0001.jpg", 1ull << 40, S_IFREG | 0444},
               {"cats", 77, S_IFDIR | 0555},
               {"link", 5, S_IFLNK | 0777},
               {"exactly8", 9, S_IFREG | 0444},
               {std::string(255, 'n'), 3, S_IFREG | 0444}};
  for (const auto& c : cases) {
    const std::string want = Libfuse(c.name, c.ino, c.mode, 42);
    std::string got(want.size() + 16, '\x55');
    // A view into a longer buffer: the byte after the name is not a NUL.
    const std::string backing = c.name + "XYZ";
    const size_t n = EncodeDirent(got.data(), got.size(),
                                  std::string_view(backing).substr(0, c.name.size()), c.ino,
                                  c.mode, 42);
    ASSERT_EQ(n, want.size()) << c.name;
    EXPECT_EQ(got.substr(0, n), want) << c.name;
    EXPECT_EQ(n % 8, 0u);
    EXPECT_EQ(got.substr(n), std::string(16, '\x55')) << "wrote past the entry";
  }
}

TEST(DirentEncoderTest, AFullReplyIsLeftAsItIsAndTheNeedIsReturned) {
  std::vector<char> buf(24, '\x55');
  const size_t need = EncodeDirent(buf.data(), buf.size(), "0001.jpg", 9, S_IFREG, 1);
  EXPECT_EQ(need, 32u);  // 24 bytes of header and 8 of name
  EXPECT_EQ(std::string(buf.begin(), buf.end()), std::string(24, '\x55'));
  EXPECT_EQ(EncodeDirent(buf.data(), 0, "x", 9, S_IFREG, 1), 32u);  // 25, padded
}

}  // namespace
}  // namespace mmfs::fs
