// The origin over local files (fs/origin/local_file_origin.h): each tree's shards checked when
// the tree is added (size, LMDB magic; all or nothing), direct and buffered reads of the same
// bytes, the bounds of a read, and the delayed origin around it (fs/origin/delayed_origin.h).
#include "fs/origin/local_file_origin.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "fs/format/dataset.h"
#include "fs/origin/delayed_origin.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

using testing::TempDir;
using testing::WriteFile;

class LocalFileOriginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "src/b/2.txt", "two");
    WriteFile(tmp_ / "src/b/1.txt", "one");
    // Enough bytes for ranges across several blocks.
    WriteFile(tmp_ / "src/big.bin", std::string(12000, 'x'));
    auto packed = testing::PackFolder(tmp_ / "src", dst());
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    auto ds = format::Dataset::Open(dst());
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(ds).value();
  }
  std::string dst() const { return tmp_ / "ds"; }
  std::string shard() const { return dst() + "/shard-00000.mdb"; }

  TempDir tmp_;
  std::unique_ptr<format::Dataset> dataset_;
};

TEST_F(LocalFileOriginTest, DirectAndBufferedSpansReadTheSameBytesUpToTheShardsEnd) {
  LocalFileOrigin buffered(dst()), direct(dst());
  ASSERT_TRUE(buffered.AddTree(kDatasetTree, dataset_->ShardTree()).ok());
  ASSERT_TRUE(direct.AddTree(kDatasetTree, dataset_->ShardTree()).ok());
  OriginAdvice advice;
  advice.direct_io = true;
  direct.Advise(advice);
  EXPECT_FALSE(buffered.direct_reads(kDatasetTree));
  // /tmp here is ext4, which takes O_DIRECT; where it is not, both read buffered.
  std::cerr << "direct reads: "
            << (direct.direct_reads(kDatasetTree) ? "on" : "off (filesystem refused)") << "\n";
  if (direct.direct_reads(kDatasetTree)) {
    const uint32_t align = direct.direct_alignment(kDatasetTree);
    EXPECT_TRUE(align >= 512 && align <= 4096 && (align & (align - 1)) == 0) << align;
  }
  const std::string bytes = testing::ReadFile(shard());
  ASSERT_GT(bytes.size(), 9000u);
  // Unaligned starts and ends, a range across a block boundary, one byte, and the shard's last
  // bytes (its size need not be a multiple of the block size: a short direct read).
  const std::pair<uint64_t, size_t> ranges[] = {
      {0, 1}, {1, 4095}, {4090, 20}, {4096, 4096}, {5000, 3000}, {bytes.size() - 7, 7},
      {0, bytes.size()}};
  for (const auto& [offset, len] : ranges) {
    for (LocalFileOrigin* o : {&buffered, &direct}) {
      auto got = o->ReadSpan({kDatasetTree, 0}, offset, len);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(std::string(got->data(), got->size()), bytes.substr(offset, len))
          << offset << "+" << len;
    }
  }
  auto past = direct.ReadSpan({kDatasetTree, 0}, bytes.size() - 7, 8);
  ASSERT_FALSE(past.ok()) << "past the end";
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(past.status().message().find("shard-00000.mdb: read outside the shard"),
            std::string::npos)
      << past.status().message();
  EXPECT_FALSE(direct.ReadSpan({kDatasetTree, 9}, 0, 1).ok()) << "no such shard";
  EXPECT_FALSE(direct.ReadSpan({4, 0}, 0, 1).ok()) << "no such tree";
}

TEST_F(LocalFileOriginTest, TruncatedShardIsRefusedWhenAddedAndNothingOfTheTreeIsKept) {
  const std::string whole = testing::ReadFile(shard());
  ASSERT_EQ(::truncate(shard().c_str(), 4096), 0);
  LocalFileOrigin o(dst());
  Status added = o.AddTree(kDatasetTree, dataset_->ShardTree());
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.code(), StatusCode::kCorruption);
  EXPECT_EQ(added.message(), shard() + ": size 4096 bytes, the manifest says " +
                                 std::to_string(whole.size()) + " (truncated or replaced?)");
  EXPECT_EQ(o.ShardSize({kDatasetTree, 0}).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(o.ReadSpan({kDatasetTree, 0}, 0, 1).ok());
  // Mended, the same tree is added.
  WriteFile(shard(), whole);
  ASSERT_TRUE(o.AddTree(kDatasetTree, dataset_->ShardTree()).ok());
  EXPECT_EQ(*o.ShardSize({kDatasetTree, 0}), whole.size());
}

TEST_F(LocalFileOriginTest, WrongLmdbMagicIsRefusedWhenAdded) {
  std::string bytes = testing::ReadFile(shard());
  bytes.replace(16, 4, "XXXX");
  WriteFile(shard(), bytes);
  LocalFileOrigin o(dst());
  Status added = o.AddTree(kDatasetTree, dataset_->ShardTree());
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.code(), StatusCode::kCorruption);
  EXPECT_EQ(added.message(), shard() + ": not an LMDB environment (bad magic)");
}

TEST_F(LocalFileOriginTest, AMissingShardSaysTheManifestListsIt) {
  ASSERT_EQ(::unlink(shard().c_str()), 0);
  LocalFileOrigin o(dst());
  Status added = o.AddTree(kDatasetTree, dataset_->ShardTree());
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.message().rfind("shard listed in manifest.json cannot be opened: ", 0), 0u)
      << added.message();
  EXPECT_NE(added.message().find(shard()), std::string::npos) << added.message();
}

// A second tree (as a view's shards are, under views/<side>/): named by its place, read apart
// from tree 0, added once; advice is for the trees there when it is given.
TEST_F(LocalFileOriginTest, TreesAreNamedByTheirPlaceAndAddedOnce) {
  std::filesystem::create_directories(dst() + "/copy");
  std::filesystem::copy_file(shard(), dst() + "/copy/shard-00000.mdb");
  LocalFileOrigin o(dst());
  ASSERT_TRUE(o.AddTree(kDatasetTree, dataset_->ShardTree()).ok());
  OriginAdvice advice;
  advice.direct_io = true;
  advice.random_access = true;
  advice.drop_behind = true;
  o.Advise(advice);
  TreeSpec copy = dataset_->ShardTree();
  copy.place = "copy";
  ASSERT_TRUE(o.AddTree(1, copy).ok());
  EXPECT_FALSE(o.direct_reads(1)) << "added after the advice";
  o.Advise(advice);
  EXPECT_EQ(o.direct_reads(1), o.direct_reads(kDatasetTree));
  EXPECT_EQ(o.AddTree(1, copy).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(o.ShardName({kDatasetTree, 0}), "shard-00000.mdb");
  EXPECT_EQ(o.ShardName({1, 0}), "copy/shard-00000.mdb");
  EXPECT_EQ(o.ShardName({2, 0}), "tree 2 shard 0");
  EXPECT_EQ(*o.ShardSize({1, 0}), dataset_->manifest().shards[0].size);
  auto a = o.ReadSpan({kDatasetTree, 0}, 100, 5000);
  auto b = o.ReadSpan({1, 0}, 100, 5000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(std::string(a->data(), a->size()), std::string(b->data(), b->size()));
  const OriginCapabilities caps = o.Capabilities();
  EXPECT_TRUE(caps.direct_io && caps.drop_behind && caps.random_access);
}

TEST_F(LocalFileOriginTest, DelayedOriginTakesLongerAndPassesEverythingElseOn) {
  auto inner = std::make_unique<LocalFileOrigin>(dst());
  ASSERT_TRUE(inner->AddTree(kDatasetTree, dataset_->ShardTree()).ok());
  const std::string bytes = testing::ReadFile(shard());
  std::unique_ptr<Origin> slow = NewDelayedOrigin(std::move(inner), 20000);
  const auto start = std::chrono::steady_clock::now();
  auto got = slow->ReadSpan({kDatasetTree, 0}, 10, 100);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->data(), got->size()), bytes.substr(10, 100));
  EXPECT_GE(took, std::chrono::microseconds(20000));
  EXPECT_EQ(slow->ShardName({kDatasetTree, 0}), "shard-00000.mdb");
  EXPECT_EQ(*slow->ShardSize({kDatasetTree, 0}), bytes.size());
  EXPECT_TRUE(slow->Capabilities().direct_io);
  // Trees are added to the origin inside.
  std::filesystem::create_directories(dst() + "/copy");
  std::filesystem::copy_file(shard(), dst() + "/copy/shard-00000.mdb");
  TreeSpec copy = dataset_->ShardTree();
  copy.place = "copy";
  ASSERT_TRUE(slow->AddTree(1, copy).ok());
  EXPECT_EQ(slow->ShardName({1, 0}), "copy/shard-00000.mdb");
}

TEST(OriginBytesTest, AlignedBuffersAndStringsHoldWhatWasKept) {
  OriginBytes aligned = OriginBytes::Allocate(100, 4096);
  ASSERT_NE(aligned.buffer(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned.buffer()) % 4096, 0u);
  std::memcpy(aligned.buffer(), "0123456789", 10);
  aligned.Keep(3, 4);
  EXPECT_EQ(std::string(aligned.data(), aligned.size()), "3456");
  OriginBytes moved = std::move(aligned);
  EXPECT_EQ(std::string(moved.data(), moved.size()), "3456");
  // A short string (kept inline by std::string) survives a move too.
  OriginBytes text(std::string("abc"));
  OriginBytes text_moved = std::move(text);
  EXPECT_EQ(std::string(text_moved.data(), text_moved.size()), "abc");
}

}  // namespace
}  // namespace mmfs::origin
