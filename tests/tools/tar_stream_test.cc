// A tar read from a source of blocks (an object read from a bucket) gives the members a tar read
// from a file gives, whatever the block sizes, and a source that fails is reported as its own
// error, not as a damaged archive.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/tar_source.h"

namespace mmfs::pack {
namespace {

class TarStreamReporter : public PackReporter {
 public:
  void Warning(const std::string& message) override { warnings.push_back(message); }
  void Phase(const std::string&) override {}
  void Progress(const PackProgress&) override {}
  std::vector<std::string> warnings;
};

std::string TarStreamFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Hands out `bytes` in blocks of `block` bytes; after `fail_after` blocks, an IoError.
TarReader::BlockSource TarStreamBlocks(const std::string& bytes, size_t block,
                                       size_t fail_after = SIZE_MAX) {
  auto at = std::make_shared<size_t>(0);
  auto handed = std::make_shared<size_t>(0);
  return [&bytes, block, fail_after, at, handed]() -> Result<std::string_view> {
    if ((*handed)++ == fail_after) return Status::IoError("s3://b/x.tar: connection reset at block");
    size_t n = std::min(block, bytes.size() - *at);
    std::string_view v(bytes.data() + *at, n);
    *at += n;
    return v;
  };
}

std::vector<TarMember> TarStreamMembers(TarReader& r) {
  std::vector<TarMember> out;
  TarMember m;
  for (;;) {
    auto more = r.Next(&m);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    out.push_back(m);
  }
  return out;
}

std::vector<Member> TarStreamSampleMembers() {
  std::vector<Member> m;
  for (int i = 0; i < 40; ++i) {
    std::string data(static_cast<size_t>(100 + i * 997), static_cast<char>('a' + i % 26));
    m.push_back({"s/" + std::to_string(1000 + i) + ".jpg", data});
    m.push_back({"s/" + std::to_string(1000 + i) + ".txt", "caption " + std::to_string(i)});
  }
  return m;
}

TEST(TarStreamTest, BlocksOfAnySizeGiveTheMembersOfTheFile) {
  testing::TempDir tmp;
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "tar.gz" : "tar");
    const std::string path = tmp / (gzip ? "a.tar.gz" : "a.tar");
    WriteTar(path, TarStreamSampleMembers(), gzip);
    TarStreamReporter rep;
    auto file = TarReader::Open(path, rep);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    std::vector<TarMember> want = TarStreamMembers(**file);
    ASSERT_EQ(want.size(), 80u);
    const std::string bytes = TarStreamFileBytes(path);
    for (size_t block : {size_t{1}, size_t{511}, size_t{512}, size_t{4096}, bytes.size()}) {
      SCOPED_TRACE("blocks of " + std::to_string(block));
      auto stream = TarReader::OpenStream("s3://b/a.tar", TarStreamBlocks(bytes, block), rep);
      ASSERT_TRUE(stream.ok()) << stream.status().ToString();
      std::vector<TarMember> got = TarStreamMembers(**stream);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].path, want[i].path);
        EXPECT_EQ(got[i].data, want[i].data) << got[i].path;
        EXPECT_EQ(got[i].mode, want[i].mode);
      }
      EXPECT_EQ((*stream)->bytes_consumed(), (*file)->bytes_consumed());
    }
    EXPECT_TRUE(rep.warnings.empty()) << rep.warnings.front();
  }
}

TEST(TarStreamTest, ASourceThatFailsIsItsOwnErrorNotDamage) {
  testing::TempDir tmp;
  const std::string path = tmp / "a.tar";
  WriteTar(path, TarStreamSampleMembers());
  const std::string bytes = TarStreamFileBytes(path);
  TarStreamReporter rep;
  auto r = TarReader::OpenStream("s3://b/x.tar", TarStreamBlocks(bytes, 4096, /*fail_after=*/5),
                                 rep);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  TarMember m;
  size_t members = 0;
  Status error;
  for (;;) {
    auto more = (*r)->Next(&m);
    if (!more.ok()) {
      error = more.status();
      break;
    }
    ASSERT_TRUE(*more) << "the archive ended without the source's error";
    ++members;
  }
  EXPECT_GT(members, 0u);             // what came before the failure was read
  EXPECT_LT(members, 80u);
  EXPECT_EQ(error.code(), StatusCode::kIoError) << error.ToString();
  EXPECT_NE(error.message().find("connection reset"), std::string::npos) << error.ToString();
  // And again: the same error, not a member more nor a clean end.
  auto again = (*r)->Next(&m);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), error.message());
}

TEST(TarStreamTest, BytesThatAreNoTarAreRefusedNamingTheObject) {
  const std::string bytes(10000, 'x');
  TarStreamReporter rep;
  auto r = TarReader::OpenStream("s3://b/not.tar", TarStreamBlocks(bytes, 1000), rep);
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("s3://b/not.tar"), std::string::npos);
    return;
  }
  TarMember m;
  auto more = (*r)->Next(&m);
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.status().message().find("s3://b/not.tar"), std::string::npos)
      << more.status().ToString();
}

}  // namespace
}  // namespace mmfs::pack
