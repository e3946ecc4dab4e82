// The fixture of the Filesystem unit tests (filesystem_test.cc, filesystem_readahead_test.cc):
// a small packed dataset (a JPEG and its caption, 300 small files, a 3 MiB file, a link) and a
// Filesystem over it, with helpers to walk paths and list directories.
//
// Ownership: each test owns its temporary folder and Filesystem. Thread-safety: test-only.
#pragma once

#include "fs/core/filesystem.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cache/ram_tier.h"
#include "cache/ssd_tier.h"
#include "fs/format/format.h"
#include "tests/fs/core/filesystem_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {


using testing::TempDir;
using testing::WriteFile;

// The counters of the tier called `name` (null without one): tests find tiers by name, not by
// their place in the stack.
inline const cache::TierCounters* TierOf(const StatsSnapshot& s, const std::string& name) {
  for (const TierStats& t : s.tiers) {
    if (t.name == name) return &t.counters;
  }
  return nullptr;
}

// Options that read sample-sized on every miss: tests that count origin reads per file, or
// need a file the daemon never read, turn extent reads off (they have
// tests/fs/read/extent_reader_test.cc).
inline FilesystemOptions SampleReads() {
  FilesystemOptions o;
  o.extents.mode = ExtentMode::kOff;
  return o;
}

class FilesystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "src/train/cat/1.jpg", testing::MakeJpeg(20, 10));
    WriteFile(tmp_ / "src/train/cat/1.txt", "a cat");
    for (int i = 0; i < 300; ++i) {
      WriteFile(tmp_ / ("src/many/" + std::to_string(1000 + i) + ".txt"), std::to_string(i));
    }
    big_ = std::string(3 << 20, '\0');
    for (size_t i = 0; i < big_.size(); ++i) big_[i] = static_cast<char>(i * 7 + i / 4096);
    WriteFile(tmp_ / "src/big.bin", big_);
    ASSERT_TRUE(::symlink("train/cat/1.txt", (tmp_ / "src/link").c_str()) == 0);
    ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
    Make(FilesystemOptions{});
  }
  void Make(FilesystemOptions options, bool with_ssd = false) {
    fs_.reset();  // flushes and closes the previous SSD tier first
    auto ds = format::Dataset::Open(tmp_ / "ds");
    ASSERT_TRUE(ds.ok());
    std::unique_ptr<cache::CacheTier> ssd;
    if (with_ssd) {
      cache::SsdTierOptions o;
      o.dir = tmp_ / "ssd";
      o.name_space = (*ds)->Identity();
      o.budget_bytes = 64 << 20;
      o.min_free_fraction = 0;
      auto tier = cache::SsdTier::Open(o);
      ASSERT_TRUE(tier.ok()) << tier.status().ToString();
      ssd = std::move(tier).value();
    }
    fs_ = testing::NewFilesystem(std::move(ds).value(), options, std::move(ssd));
  }
  Attr Walk(const std::string& path) {
    uint64_t ino = kRootIno;
    Attr a;
    size_t start = 0;
    while (start < path.size()) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) slash = path.size();
      auto r = fs_->Lookup(ino, path.substr(start, slash - start));
      EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString();
      if (!r.ok()) return a;
      a = *r;
      ino = a.ino;
      start = slash + 1;
    }
    return a;
  }
  std::string ReadAll(uint64_t ino, size_t chunk = 128 << 10) {
    std::string out;
    for (;;) {
      auto d = fs_->Read(ino, out.size(), chunk);
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      if (!d.ok() || d->size == 0) break;
      out.append(d->data, d->size);
    }
    return out;
  }
  std::vector<std::string> List(uint64_t ino, size_t batch) {
    std::vector<std::string> names;
    uint64_t offset = 0;
    for (;;) {
      size_t n = 0;
      Status s = fs_->ReadDir(ino, offset, [&](std::string_view name, const Attr&, uint64_t next) {
        if (n == batch) return false;
        names.emplace_back(name);
        offset = next;
        ++n;
        return true;
      });
      EXPECT_TRUE(s.ok());
      if (n == 0) break;
    }
    return names;
  }
  TempDir tmp_;
  std::string big_;
  std::unique_ptr<Filesystem> fs_;
};

}  // namespace
}  // namespace mmfs::fs
