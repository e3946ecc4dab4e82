#include "fs/format/dataset.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <lmdb.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fs/format/dataset_writer.h"
#include "fs/format/local_dataset.h"
#include "fs/format/shard_reads.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::format {
namespace {

using testing::TempDir;
using testing::WriteFile;

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "src/b/2.txt", "two");
    WriteFile(tmp_ / "src/b/1.txt", "one");
    WriteFile(tmp_ / "src/b/1.json", "{}");
    WriteFile(tmp_ / "src/a.txt", "top");
    WriteFile(tmp_ / "src/empty", "");
    std::filesystem::create_directories(tmp_ / "src/c/d");
    auto s = testing::PackFolder(tmp_ / "src", dst());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  std::string dst() const { return tmp_ / "ds"; }
  std::unique_ptr<Dataset> Open() {
    auto ds = Dataset::Open(dst());
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }
  // `e`'s bytes, read through the dataset's shards and checked against the index.
  std::string ReadAll(const Dataset& ds, const Entry& e) {
    return testing::ReadChecked(*testing::LocalOrigin(ds), ds, e);
  }
  TempDir tmp_;
};

// kB of the mapping of `path` in /proc/self/smaps that are locked; -1: no such mapping.
long LockedKbOf(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  long locked = -1;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') != std::string::npos && line.find(' ') > line.find('-')) {
      in = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(),
                                                      path) == 0;
    } else if (in && line.rfind("Locked:", 0) == 0) {
      locked = std::max(locked, 0L) + std::stol(line.substr(7));
    }
  }
  return locked;
}

TEST_F(DatasetTest, LockedIndexPagesStayLockedOnceRead) {
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  const std::string index = std::filesystem::canonical(dst() + "/" + ds->manifest().index_file);
  EXPECT_FALSE(ds->index_locked());
  EXPECT_EQ(LockedKbOf(index), 0);
  Status locked = ds->LockIndex();
  if (locked.code() == StatusCode::kResourceExhausted) GTEST_SKIP() << locked.message();
  ASSERT_TRUE(locked.ok()) << locked.ToString();
  EXPECT_TRUE(ds->index_locked());
  // Locked on fault: the pages read since are locked (the whole small index here).
  for (uint64_t i = 0; i < ds->entry_count(); ++i) ASSERT_TRUE(ds->GetEntry(i).ok());
  EXPECT_GT(LockedKbOf(index), 0);
  EXPECT_TRUE(ds->LockIndex().ok());  // twice is fine
}

TEST_F(DatasetTest, IndexThatCannotBeLockedSaysWhyAndStillServes) {
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  // In a child: no memlock allowance and no CAP_IPC_LOCK (root has it, and it overrides the
  // limit), as for a user without either.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit none {0, 0};
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[2] = {};
    if (::setrlimit(RLIMIT_MEMLOCK, &none) != 0) ::_exit(10);
    if (::syscall(SYS_capget, &header, caps) != 0) ::_exit(11);
    caps[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
    if (::syscall(SYS_capset, &header, caps) != 0) ::_exit(12);
    Status s = ds->LockIndex();
    if (s.ok() || ds->index_locked()) ::_exit(13);
    if (s.message().find("RLIMIT_MEMLOCK") == std::string::npos ||
        s.message().find(ds->manifest().index_file) == std::string::npos) {
      ::_exit(14);
    }
    ::_exit(ds->GetEntry(0).ok() ? 0 : 15);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10-12: setup failed, 13: locked, 14: message, 15: read";
}

TEST_F(DatasetTest, RootChildrenSortedAndLookup) {
  auto ds = Open();
  ASSERT_TRUE(ds);
  auto root = ds->GetEntry(0);
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(root->is_dir());
  std::vector<std::string> names;
  for (uint64_t i = 0; i < root->child_count(); ++i) {
    names.emplace_back(ds->GetEntry(root->first_child() + i)->name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a.txt", "b", "c", "empty"}));
  auto b = ds->LookupChild(*root, "b");
  ASSERT_TRUE(b.ok());
  auto one = ds->LookupChild(*b, "1.txt");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ReadAll(*ds, *one), "one");
  EXPECT_EQ(ReadAll(*ds, *ds->LookupChild(*b, "1.json")), "{}");
  EXPECT_EQ(ReadAll(*ds, *ds->LookupChild(*root, "a.txt")), "top");
  EXPECT_EQ(ds->LookupChild(*root, "empty")->size(), 0u);
  EXPECT_EQ(ds->LookupChild(*b, "3.txt").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ds->PathOf(one->index), "b/1.txt");
  auto c = ds->LookupChild(*root, "c");
  EXPECT_EQ(ds->LookupChild(*c, "d")->child_count(), 0u);
}

// A listing's spans are advised in (WILLNEED) and unmapped (DONTNEED) around other readers of
// the same pages: the entries read the same before, between and after, on a directory spanning
// many pages, an empty directory and a file (no-ops).
TEST_F(DatasetTest, ListingSpansPrefetchedAndReleasedReadTheSame) {
  for (int i = 0; i < 3000; ++i) {
    WriteFile(tmp_ / ("src2/many/" + std::to_string(100000 + i) + ".txt"), "");
  }
  std::filesystem::create_directories(tmp_ / "src2/empty_dir");
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src2", tmp_ / "ds2").ok());
  auto opened = Dataset::Open(tmp_ / "ds2");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const Dataset& ds = **opened;
  auto root = ds.GetEntry(0);
  ASSERT_TRUE(root.ok());
  auto many = ds.LookupChild(*root, "many");
  auto empty = ds.LookupChild(*root, "empty_dir");
  ASSERT_TRUE(many.ok() && empty.ok());
  auto names = [&] {
    std::vector<std::string> out;
    for (uint64_t i = 0; i < many->child_count(); ++i) {
      auto e = ds.GetEntry(many->first_child() + i);
      EXPECT_TRUE(e.ok());
      if (e.ok()) out.emplace_back(e->name);
    }
    return out;
  };
  ds.PrefetchChildren(*many);
  const std::vector<std::string> first = names();
  ASSERT_EQ(first.size(), 3000u);
  EXPECT_EQ(first.front(), "100000.txt");
  EXPECT_EQ(first.back(), "102999.txt");
  ds.ReleaseChildren(*many);
  EXPECT_EQ(names(), first);
  ds.ReleaseChildren(*root);  // the neighbours' spans too
  ds.PrefetchChildren(*empty);
  ds.ReleaseChildren(*empty);
  auto file = ds.GetEntry(many->first_child());
  ASSERT_TRUE(file.ok());
  ds.PrefetchChildren(*file);
  ds.ReleaseChildren(*file);
  EXPECT_EQ(names(), first);
}

TEST_F(DatasetTest, SampleMembersShareOneRecord) {
  auto ds = Open();
  auto root = *ds->GetEntry(0);
  auto b = *ds->LookupChild(root, "b");
  auto json = *ds->LookupChild(b, "1.json");
  auto txt = *ds->LookupChild(b, "1.txt");
  auto two = *ds->LookupChild(b, "2.txt");
  EXPECT_EQ(json.record.sample, txt.record.sample);
  EXPECT_NE(two.record.sample, txt.record.sample);
  // Adjacent bytes in the shard, in name order.
  EXPECT_EQ(json.record.data_offset + json.size(), txt.record.data_offset);
  // Path order: a.txt's sample precedes b/'s samples.
  EXPECT_LT(ds->LookupChild(root, "a.txt")->record.sample, json.record.sample);
}

TEST_F(DatasetTest, ShardsAreValidLmdbThatLmdbToolsRead) {
  auto ds = Open();
  ASSERT_EQ(ds->manifest().shards.size(), 1u);
  std::string path = dst() + "/" + ds->manifest().shards[0].file;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_open(env, path.c_str(), MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK, 0), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  MDB_dbi dbi;
  ASSERT_EQ(mdb_dbi_open(txn, nullptr, 0, &dbi), 0);
  MDB_stat st;
  ASSERT_EQ(mdb_stat(txn, dbi, &st), 0);
  EXPECT_EQ(st.ms_entries, ds->manifest().samples);
  auto txt = *ds->LookupChild(*ds->LookupChild(*ds->GetEntry(0), "b"), "1.txt");
  std::string key = SampleKey(txt.record.sample);
  MDB_val k{key.size(), key.data()}, v;
  ASSERT_EQ(mdb_get(txn, dbi, &k, &v), 0);
  EXPECT_EQ(std::string(static_cast<char*>(v.mv_data), v.mv_size), "{}one");
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

TEST_F(DatasetTest, ForeignDirectoryIsAClearError) {
  auto r = Dataset::Open(tmp_ / "src");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not an mmfs dataset"), std::string::npos);
  auto missing = Dataset::Open(tmp_ / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// The index alone is the dataset; its shards are checked when they are added to an origin
// (tests/fs/origin/local_file_origin_test.cc): a damaged shard does not stop the index from
// opening, and OpenLocalDataset, which the tools and the mount use, refuses it.
TEST_F(DatasetTest, DamagedShardIsRefusedWhereTheShardsOpen) {
  std::string shard = dst() + "/shard-00000.mdb";
  ASSERT_EQ(::truncate(shard.c_str(), 4096), 0);
  EXPECT_TRUE(Dataset::Open(dst()).ok());
  auto r = OpenLocalDataset(dst());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find(shard + ": size 4096 bytes, the manifest says"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("(truncated or replaced?)"), std::string::npos);
}

TEST_F(DatasetTest, FlippedByteIsCaughtByChecksum) {
  auto ds = Open();
  auto a = *ds->LookupChild(*ds->GetEntry(0), "a.txt");
  std::string shard = dst() + "/shard-00000.mdb";
  int fd = ::open(shard.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "X", 1, static_cast<off_t>(a.record.data_offset)), 1);
  ::close(fd);
  auto s = ReadVerified(*testing::LocalOrigin(*ds), *ds, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_NE(s.status().message().find("a.txt"), std::string::npos);
  EXPECT_NE(s.status().message().find("shard-00000.mdb at offset "), std::string::npos)
      << s.status().message();
}

TEST_F(DatasetTest, DamagedEntryRecordIsCorruptionNotACrash) {
  std::string index = dst() + "/index.mmfs";
  int fd = ::open(index.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  // Entry 2: point its name far outside the name table, and entry 3's children out of range.
  uint64_t huge = 1ull << 60;
  ASSERT_EQ(::pwrite(fd, &huge, 8, sizeof(IndexHeader) + 2 * sizeof(EntryRecord) + 24), 8);
  ASSERT_EQ(::pwrite(fd, &huge, 8, sizeof(IndexHeader) + 3 * sizeof(EntryRecord) + 8), 8);
  ::close(fd);
  auto ds = Open();
  ASSERT_TRUE(ds);  // header and sizes are intact
  EXPECT_EQ(ds->GetEntry(2).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(ds->GetEntry(3).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(ds->GetEntry(1 << 30).status().code(), StatusCode::kNotFound);
}

TEST_F(DatasetTest, ANameWithASlashOrNulIsCorruption) {
  uint32_t name_offset = 0, index_of_a = 0;
  {
    auto ds = Open();
    auto a = ds->LookupChild(*ds->GetEntry(0), "a.txt");
    ASSERT_TRUE(a.ok());
    name_offset = a->record.name_offset;
    index_of_a = a->index;
  }
  std::string index = dst() + "/index.mmfs";
  int fd = ::open(index.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  IndexHeader h;
  ASSERT_EQ(::pread(fd, &h, sizeof h, 0), static_cast<ssize_t>(sizeof h));
  // "a/txt": a listing of it would make the kernel fail the whole READDIR.
  ASSERT_EQ(::pwrite(fd, "/", 1, static_cast<off_t>(h.strings_offset + name_offset + 1)), 1);
  {
    auto ds = Open();
    ASSERT_TRUE(ds);
    auto e = ds->GetEntry(index_of_a);
    EXPECT_EQ(e.status().code(), StatusCode::kCorruption);
    EXPECT_NE(e.status().message().find("'/' or NUL"), std::string::npos) << e.status().ToString();
  }
  ASSERT_EQ(::pwrite(fd, "\0", 1, static_cast<off_t>(h.strings_offset + name_offset + 1)), 1);
  ::close(fd);
  auto ds = Open();
  ASSERT_TRUE(ds);
  EXPECT_EQ(ds->GetEntry(index_of_a).status().code(), StatusCode::kCorruption);
}

TEST_F(DatasetTest, IndexOfWrongSizeRefused) {
  std::string index = dst() + "/index.mmfs";
  ASSERT_EQ(::truncate(index.c_str(), 10), 0);
  auto r = Dataset::Open(dst());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("index.mmfs"), std::string::npos);
}

TEST(ShardWriterTest, OffsetsPointAtTheValues) {
  TempDir tmp;
  std::string path = tmp / "s.mdb";
  auto w = ShardWriter::Create(path);
  ASSERT_TRUE(w.ok());
  std::string big(100000, 'b');
  std::vector<std::string_view> m1 = {"hello", "world"};
  std::vector<std::string_view> m2 = {big};
  ASSERT_TRUE((*w)->Append(1, m1).ok());
  ASSERT_TRUE((*w)->Append(5, m2).ok());
  EXPECT_EQ((*w)->Append(5, m2).code(), StatusCode::kInvalidArgument);  // not increasing
  auto offsets = (*w)->Finish();
  ASSERT_TRUE(offsets.ok()) << offsets.status().ToString();
  ASSERT_EQ(offsets->size(), 2u);
  int fd = ::open(path.c_str(), O_RDONLY);
  std::string got(10, '\0');
  ASSERT_EQ(::pread(fd, got.data(), 10, static_cast<off_t>((*offsets)[0])), 10);
  EXPECT_EQ(got, "helloworld");
  std::string got_big(big.size(), '\0');
  ASSERT_EQ(::pread(fd, got_big.data(), big.size(), static_cast<off_t>((*offsets)[1])),
            static_cast<ssize_t>(big.size()));
  EXPECT_EQ(got_big, big);
  ::close(fd);
  EXPECT_FALSE(ShardWriter::Create(path).ok());  // never overwrites
}

}  // namespace
}  // namespace mmfs::format
