// Serving derived image views (fs/core/view_namespace.h) through Filesystem, without a mount: the
// @N tree, its inode numbers, its bytes against the view shard's and the original's, the root
// view of `mmfs mount --view N`, and the cache keeping the two apart.
#include "fs/core/view_namespace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <set>

#include "fs/core/filesystem.h"
#include "fs/format/view_set.h"
#include "tests/fs/core/filesystem_helper.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::fs {
namespace {

using testing::TempDir;
using testing::WriteFile;

class ViewNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "src/train/cat/wide.jpg", testing::MakeJpeg(300, 200, 2));
    WriteFile(tmp_ / "src/train/cat/wide.txt", "a wide cat");
    WriteFile(tmp_ / "src/train/cat/small.jpg", testing::MakeJpeg(40, 30, 3));
    WriteFile(tmp_ / "src/train/dog/tall.jpg", testing::MakeJpeg(200, 260, 4));
    WriteFile(tmp_ / "src/README.txt", "readme");
    ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
    view::ViewOptions o;
    o.dataset = tmp_ / "ds";
    o.side = 64;
    testing::CollectingReporter reporter;
    auto built = view::BuildView(o, reporter);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    ASSERT_EQ(built->resized, 2u);
    Make(FilesystemOptions{});
  }
  void Make(FilesystemOptions options) {
    fs_.reset();
    auto ds = format::Dataset::Open(tmp_ / "ds");
    ASSERT_TRUE(ds.ok());
    fs_ = testing::NewFilesystem(std::move(ds).value(), options);
  }
  Result<Attr> Walk(const std::string& path) {
    Attr a;
    a.ino = kRootIno;
    size_t start = 0;
    while (start < path.size()) {
      size_t slash = std::min(path.find('/', start), path.size());
      auto r = fs_->Lookup(a.ino, path.substr(start, slash - start));
      if (!r.ok()) return r.status();
      a = *r;
      start = slash + 1;
    }
    return a;
  }
  std::string ReadAll(uint64_t ino, size_t chunk = 1000) {
    std::string out;
    for (;;) {
      auto d = fs_->Read(ino, out.size(), chunk);
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      if (!d.ok() || d->size == 0) break;
      out.append(d->data, d->size);
    }
    return out;
  }
  std::string ReadPath(const std::string& path) {
    auto a = Walk(path);
    EXPECT_TRUE(a.ok()) << path << ": " << a.status().ToString();
    return a.ok() ? ReadAll(a->ino) : std::string();
  }
  std::vector<std::string> List(uint64_t ino) {
    std::vector<std::string> names;
    Status s = fs_->ReadDir(ino, 0, [&](std::string_view name, const Attr&, uint64_t) {
      names.emplace_back(name);
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return names;
  }
  // The resized bytes as the view shard holds them, read through an origin of the test's own.
  std::string ViewShardBytes(const std::string& path) {
    auto ds = format::Dataset::Open(tmp_ / "ds");
    EXPECT_TRUE(ds.ok());
    origin::LocalFileOrigin shards((*ds)->dir());
    format::ViewSet set = format::ViewSet::Open(**ds, shards);
    const format::View* v = set.Find(64);
    EXPECT_NE(v, nullptr);
    auto e = (*ds)->GetEntry(0);
    size_t start = 0;
    while (e.ok() && start < path.size()) {
      size_t slash = std::min(path.find('/', start), path.size());
      e = (*ds)->LookupChild(*e, path.substr(start, slash - start));
      start = slash + 1;
    }
    EXPECT_TRUE(e.ok());
    auto f = v->Lookup(*e);
    EXPECT_TRUE(f.ok());
    EXPECT_EQ(f->source, format::ViewFile::Source::kView);
    return testing::ReadChecked(shards, *v, *f);
  }

  TempDir tmp_;
  std::unique_ptr<Filesystem> fs_;
};

TEST_F(ViewNamespaceTest, AtNIsFoundByNameButNotListed) {
  auto at = fs_->Lookup(kRootIno, "@64");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_TRUE(S_ISDIR(at->mode));
  EXPECT_NE(at->ino, kRootIno);
  EXPECT_EQ(fs_->Lookup(kRootIno, "@128").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Lookup(kRootIno, "@064").status().code(), StatusCode::kNotFound);
  auto root = List(kRootIno);
  EXPECT_EQ(std::count(root.begin(), root.end(), "@64"), 0);
  // The same names, recursively, as the original tree.
  EXPECT_EQ(List(at->ino), root);
  for (const char* dir : {"train", "train/cat", "train/dog"}) {
    auto orig = Walk(dir);
    auto view = Walk(std::string("@64/") + dir);
    ASSERT_TRUE(orig.ok() && view.ok()) << dir;
    EXPECT_NE(orig->ino, view->ino);
    EXPECT_EQ(List(view->ino), List(orig->ino)) << dir;
  }
  // `..` of @64 is the root.
  uint64_t dotdot = 0;
  ASSERT_TRUE(fs_->ReadDir(at->ino, 0, [&](std::string_view name, const Attr& a, uint64_t) {
                   if (name == "..") dotdot = a.ino;
                   return true;
                 }).ok());
  EXPECT_EQ(dotdot, kRootIno);
}

TEST_F(ViewNamespaceTest, ResizedFileServesTheViewShardsBytesCaptionsTheOriginals) {
  const std::string original = ReadPath("train/cat/wide.jpg");
  const std::string shard = ViewShardBytes("train/cat/wide.jpg");
  auto attr = Walk("@64/train/cat/wide.jpg");
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->size, shard.size());  // known at lookup
  auto again = fs_->GetAttr(attr->ino);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size, shard.size());
  EXPECT_EQ(ReadAll(attr->ino, 100), shard);  // several READs: read buffer path too
  EXPECT_NE(shard, original);
  EXPECT_LT(shard.size(), original.size());
  // Read again (now from the RAM tier), and the original still gives its own bytes.
  EXPECT_EQ(ReadAll(attr->ino), shard);
  EXPECT_EQ(ReadPath("train/cat/wide.jpg"), original);
  EXPECT_EQ(ReadPath("@64/train/dog/tall.jpg"), ViewShardBytes("train/dog/tall.jpg"));
  // Files the view does not resize: the original bytes.
  EXPECT_EQ(ReadPath("@64/train/cat/wide.txt"), "a wide cat");
  EXPECT_EQ(ReadPath("@64/train/cat/small.jpg"), ReadPath("train/cat/small.jpg"));
  EXPECT_EQ(ReadPath("@64/README.txt"), "readme");
  // No xattrs describing the original's bytes on a view file.
  auto xattrs = fs_->ListXattr(attr->ino);
  ASSERT_TRUE(xattrs.ok());
  EXPECT_TRUE(xattrs->empty());
  StatsSnapshot s = fs_->Stats();
  ASSERT_EQ(s.views.size(), 1u);
  EXPECT_EQ(s.views[0].side, 64u);
  EXPECT_EQ(s.views[0].resized_loads, 2u);  // wide.jpg once (then cached), tall.jpg
  EXPECT_GE(s.views[0].files_served, 6u);
  auto j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["views"]["64"]["resized_loads"], 2);
}

// A resized file's bytes come through the mount's origin like every other shard byte: an
// origin that fails the view's shard fails the read (EIO, counted), and once it reads, the read
// is the origin's, counted as a demand read.
TEST_F(ViewNamespaceTest, AResizedFileIsReadThroughTheOrigin) {
  class ViewFaults final : public origin::OriginWrapper {
   public:
    using OriginWrapper::OriginWrapper;
    Result<origin::OriginBytes> ReadSpan(origin::ShardRef ref, uint64_t offset,
                                         size_t len) override {
      const bool view = ref.tree != origin::kDatasetTree;
      if (view && fail.load()) return Status::IoError("a view shard that cannot be read");
      ++(view ? view_reads : base_reads);
      return OriginWrapper::ReadSpan(ref, offset, len);
    }
    std::atomic<bool> fail{true};
    std::atomic<int> view_reads{0}, base_reads{0};
  };
  fs_.reset();
  auto ds = format::Dataset::Open(tmp_ / "ds");
  ASSERT_TRUE(ds.ok());
  auto shards = std::make_unique<ViewFaults>(testing::LocalOrigin(**ds));
  ViewFaults* faults = shards.get();
  FilesystemOptions options;
  options.readahead = false;  // the file alone, no sample members
  fs_ = testing::NewFilesystem(std::move(ds).value(), options, nullptr, std::move(shards));
  auto wide = Walk("@64/train/cat/wide.jpg");
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  auto r = fs_->Read(wide->ino, 0, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  auto j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["errors"]["io"], 1) << j.dump(2);
  faults->fail = false;
  const std::string resized = ReadPath("@64/train/cat/wide.jpg");
  EXPECT_EQ(resized, ViewShardBytes("train/cat/wide.jpg"));
  EXPECT_EQ(faults->view_reads.load(), 1);
  EXPECT_EQ(faults->base_reads.load(), 0);
  j = nlohmann::json::parse(fs_->StatsJson());
  EXPECT_EQ(j["origin"]["reads"], 1) << j.dump(2);
  EXPECT_EQ(j["origin"]["bytes"], resized.size());
  EXPECT_EQ(j["views"]["64"]["resized_loads"], 1);
}

TEST_F(ViewNamespaceTest, TheViewReadFirstNeverServesTheOriginalAndViceVersa) {
  const std::string shard = ViewShardBytes("train/cat/wide.jpg");
  EXPECT_EQ(ReadPath("@64/train/cat/wide.jpg"), shard);
  const std::string original = ReadPath("train/cat/wide.jpg");
  EXPECT_NE(original, shard);
  EXPECT_EQ(original.size(), Walk("train/cat/wide.jpg")->size);
  EXPECT_EQ(ReadPath("@64/train/cat/wide.jpg"), shard);
}

TEST_F(ViewNamespaceTest, InodesAreComputedAndStableAcrossRemounts) {
  std::set<uint64_t> inos;
  std::vector<uint64_t> first;
  for (const char* p : {"@64", "@64/train/cat/wide.jpg", "@64/train/cat/wide.txt",
                        "@64/README.txt", "train/cat/wide.jpg", ".mmfs"}) {
    auto a = Walk(p);
    ASSERT_TRUE(a.ok()) << p;
    inos.insert(a->ino);
    first.push_back(a->ino);
  }
  EXPECT_EQ(inos.size(), first.size());  // no two names share an inode
  Make(FilesystemOptions{});
  std::vector<uint64_t> second;
  for (const char* p : {"@64", "@64/train/cat/wide.jpg", "@64/train/cat/wide.txt",
                        "@64/README.txt", "train/cat/wide.jpg", ".mmfs"}) {
    second.push_back(Walk(p)->ino);
  }
  EXPECT_EQ(first, second);
}

TEST_F(ViewNamespaceTest, RootViewServesTheViewAsTheWholeTree) {
  FilesystemOptions o;
  o.root_view = 64;
  Make(o);
  auto attr = Walk("train/cat/wide.jpg");
  ASSERT_TRUE(attr.ok());
  const std::string shard = ViewShardBytes("train/cat/wide.jpg");
  EXPECT_EQ(attr->size, shard.size());
  EXPECT_EQ(ReadAll(attr->ino), shard);
  EXPECT_EQ(ReadPath("train/cat/wide.txt"), "a wide cat");
  auto root = fs_->GetAttr(kRootIno);
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(S_ISDIR(root->mode));
  EXPECT_EQ(List(kRootIno), (std::vector<std::string>{".", "..", "README.txt", "train"}));
  EXPECT_EQ(fs_->Lookup(kRootIno, "@64").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Walk(".mmfs").ok());  // the control directory stays
  // Nothing to push: the file was read, not prefetched (its original's bytes are never offered
  // for it either: the buffer is keyed by the resized file's own key, view_read_path_test.cc).
  auto claimed = fs_->ClaimPrefetched(attr->ino, 1 << 20, false);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->owner, nullptr);
}

}  // namespace
}  // namespace mmfs::fs
