// format::IndexBuilder: the numbering rule of format.h, checked on the bytes it writes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fs/format/dataset_writer.h"
#include "fs/format/format.h"
#include "tests/test_util.h"

namespace mmfs::format {
namespace {

constexpr uint32_t kDir = kModeDirectory | 0755;
constexpr uint32_t kFile = kModeRegular | 0644;
constexpr uint32_t kLink = kModeSymlink | 0777;

struct IndexFile {
  IndexHeader header;
  std::vector<EntryRecord> entries;
  std::string strings;
  std::string Name(const EntryRecord& e) const { return strings.substr(e.name_offset, e.name_len); }
};

IndexFile ReadIndex(const std::string& path) {
  std::string bytes = testing::ReadFile(path);
  IndexFile f;
  EXPECT_GE(bytes.size(), sizeof(IndexHeader));
  std::memcpy(&f.header, bytes.data(), sizeof f.header);
  f.entries.resize(f.header.entry_count);
  std::memcpy(f.entries.data(), bytes.data() + f.header.entries_offset,
              f.entries.size() * sizeof(EntryRecord));
  f.strings = bytes.substr(f.header.strings_offset, f.header.strings_size);
  return f;
}

class IndexBuilderTest : public ::testing::Test {
 protected:
  std::string path() const { return tmp_ / kIndexFileName; }
  testing::TempDir tmp_;
};

// root/{a.txt, b/, c -> b, d/}, b/{x/, y.jpg}, d/{z.txt}, b/x/{w}: breadth-first, so d's children
// come before x's, although x is deeper in path order.
TEST_F(IndexBuilderTest, NumbersBreadthFirstWithEachDirectorysChildrenInOneRun) {
  IndexBuilder index(kDir, 111);
  FileLocation a{.shard = 2, .sample = 7, .data_offset = 4096, .size = 3, .checksum = 99,
                 .width = 0, .height = 0};
  FileLocation y{.shard = 0, .sample = 1, .data_offset = 8192, .size = 5, .checksum = 5,
                 .width = 640, .height = 480};
  FileLocation z{}, w{};
  ASSERT_TRUE(index.NextDirectory());  // root
  ASSERT_TRUE(index.AddFile("a.txt", kFile, 1, a).ok());
  ASSERT_TRUE(index.AddDirectory("b", kDir, 2).ok());
  ASSERT_TRUE(index.AddSymlink("c", kLink, 3, "b").ok());
  ASSERT_TRUE(index.AddDirectory("d", kDir, 4).ok());
  ASSERT_TRUE(index.NextDirectory());  // b
  ASSERT_TRUE(index.AddDirectory("x", kDir, 5).ok());
  ASSERT_TRUE(index.AddFile("y.jpg", kFile, 6, y).ok());
  ASSERT_TRUE(index.NextDirectory());  // d
  ASSERT_TRUE(index.AddFile("z.txt", kFile, 7, z).ok());
  ASSERT_TRUE(index.NextDirectory());  // b/x
  ASSERT_TRUE(index.AddFile("w", kFile, 8, w).ok());
  EXPECT_FALSE(index.NextDirectory());
  EXPECT_EQ(index.entry_count(), 9u);
  auto info = index.Write(path());
  ASSERT_TRUE(info.ok()) << info.status().ToString();

  IndexFile f = ReadIndex(path());
  EXPECT_EQ(info->size, testing::ReadFile(path()).size());
  ASSERT_EQ(f.entries.size(), 9u);
  std::vector<std::string> names;
  for (const EntryRecord& e : f.entries) names.push_back(f.Name(e));
  EXPECT_EQ(names, (std::vector<std::string>{"", "a.txt", "b", "c", "d", "x", "y.jpg", "z.txt",
                                             "w"}));
  auto run = [&](size_t dir) {
    return std::make_pair(f.entries[dir].data_offset, f.entries[dir].size);
  };
  EXPECT_EQ(f.entries[0].mtime_ns, 111);
  EXPECT_EQ(run(0), std::make_pair(uint64_t{1}, uint64_t{4}));  // root: a.txt b c d
  EXPECT_EQ(run(2), std::make_pair(uint64_t{5}, uint64_t{2}));  // b: x y.jpg
  EXPECT_EQ(run(4), std::make_pair(uint64_t{7}, uint64_t{1}));  // d: z.txt
  EXPECT_EQ(run(5), std::make_pair(uint64_t{8}, uint64_t{1}));  // b/x: w
  std::vector<uint32_t> parents;
  for (const EntryRecord& e : f.entries) parents.push_back(e.parent);
  EXPECT_EQ(parents, (std::vector<uint32_t>{0, 0, 0, 0, 0, 2, 2, 4, 5}));
  // What the caller said of each file, where the format wants it.
  EXPECT_EQ(f.entries[1].shard, 2u);
  EXPECT_EQ(f.entries[1].sample, 7u);
  EXPECT_EQ(f.entries[1].data_offset, 4096u);
  EXPECT_EQ(f.entries[1].checksum, 99u);
  EXPECT_EQ(f.entries[6].width, 640u);
  EXPECT_EQ(f.entries[6].height, 480u);
  EXPECT_EQ(f.entries[6].size, 5u);
  // A symlink's target is in the name table.
  EXPECT_EQ(f.strings.substr(f.entries[3].data_offset, f.entries[3].size), "b");
  EXPECT_EQ(f.entries[3].mode, kLink);
}

TEST_F(IndexBuilderTest, AnEmptyDirectoryPointsAtAnEmptyRun) {
  IndexBuilder index(kDir, 0);
  ASSERT_TRUE(index.NextDirectory());
  ASSERT_TRUE(index.AddDirectory("empty", kDir, 0).ok());
  ASSERT_TRUE(index.AddFile("f", kFile, 0, FileLocation{}).ok());
  ASSERT_TRUE(index.NextDirectory());
  EXPECT_FALSE(index.NextDirectory());
  ASSERT_TRUE(index.Write(path()).ok());
  IndexFile f = ReadIndex(path());
  ASSERT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.entries[1].data_offset, 3u);
  EXPECT_EQ(f.entries[1].size, 0u);
}

TEST_F(IndexBuilderTest, NamesOutOfOrderDuplicatedEmptyOrTooLongAreRefused) {
  IndexBuilder early(kDir, 0);
  EXPECT_FALSE(early.AddFile("a", kFile, 0, FileLocation{}).ok());  // before NextDirectory

  IndexBuilder index(kDir, 0);
  ASSERT_TRUE(index.NextDirectory());
  ASSERT_TRUE(index.AddFile("b", kFile, 0, FileLocation{}).ok());
  EXPECT_EQ(index.AddFile("a", kFile, 0, FileLocation{}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index.AddDirectory("b", kDir, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index.AddFile("", kFile, 0, FileLocation{}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index.AddFile(std::string(kMaxNameLength + 1, 'z'), kFile, 0, FileLocation{}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(index.AddFile(std::string(kMaxNameLength, 'z'), kFile, 0, FileLocation{}).ok());
  // Refused entries leave nothing behind.
  EXPECT_EQ(index.entry_count(), 3u);

  // Bytewise, as the reader compares (memcmp, then shorter first): "b" < "ba" < "b\xff".
  IndexBuilder bytes(kDir, 0);
  ASSERT_TRUE(bytes.NextDirectory());
  ASSERT_TRUE(bytes.AddFile("b", kFile, 0, FileLocation{}).ok());
  ASSERT_TRUE(bytes.AddFile("ba", kFile, 0, FileLocation{}).ok());
  EXPECT_TRUE(bytes.AddFile("b\xff", kFile, 0, FileLocation{}).ok());
  EXPECT_FALSE(bytes.AddFile("ba", kFile, 0, FileLocation{}).ok());
}

}  // namespace
}  // namespace mmfs::format
