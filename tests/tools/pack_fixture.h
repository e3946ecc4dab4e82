// The fixture the packer input tests share: packs sources with the library packer, then reads
// the result back through fs/format (no mount). Also writes tars member by member.
//
// Thread-safety: test-only.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/pack/packer.h"

namespace mmfs::pack {

struct Member {
  std::string name;
  std::string data;
  unsigned type = AE_IFREG;
  std::string link;  // symlink target or hard link name
};

// Writes a tar (gzip-compressed when `gzip`) with libarchive, members in the given order.
inline void WriteTar(const std::string& path, const std::vector<Member>& members, bool gzip = false) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const Member& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_mtime(e, 1700000000, 0);
    archive_entry_set_perm(e, 0644);
    if (!m.link.empty() && m.type == AE_IFREG) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, m.link.c_str());
      archive_entry_set_size(e, 0);
    } else {
      archive_entry_set_filetype(e, m.type);
      if (m.type == AE_IFLNK) archive_entry_set_symlink(e, m.link.c_str());
      archive_entry_set_size(e, m.type == AE_IFREG ? static_cast<la_int64_t>(m.data.size()) : 0);
    }
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    if (m.type == AE_IFREG && m.link.empty()) {
      ASSERT_EQ(archive_write_data(a, m.data.data(), m.data.size()),
                static_cast<la_ssize_t>(m.data.size()));
    }
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

class InputsTest : public ::testing::Test {
 protected:
  Result<PackSummary> Pack(std::vector<std::string> sources, PackOptions options = {}) {
    options.sources = std::move(sources);
    options.destination = tmp_ / "out.mmfs";
    return pack::Pack(options, reporter_);
  }
  // The entry at `path` in the packed dataset (opened on first use).
  Result<format::Entry> Find(const std::string& path) {
    if (ds_ == nullptr) {
      auto ds = format::OpenLocalDataset(tmp_ / "out.mmfs");
      EXPECT_TRUE(ds.ok()) << ds.status().ToString();
      if (!ds.ok()) return ds.status();
      ds_ = std::move(ds->dataset);
      shards_ = std::move(ds->origin);
    }
    auto e = ds_->GetEntry(0);
    size_t start = 0;
    while (e.ok() && start < path.size()) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) slash = path.size();
      e = ds_->LookupChild(*e, path.substr(start, slash - start));
      start = slash + 1;
    }
    return e;
  }
  // The bytes of `path` in the packed dataset, or "<missing>".
  std::string Read(const std::string& path) {
    auto e = Find(path);
    if (!e.ok()) return "<missing>";
    return testing::ReadChecked(*shards_, *ds_, *e);
  }
  uint64_t SampleOf(const std::string& path) {
    auto e = Find(path);
    return e.ok() ? e->record.sample : UINT64_MAX;
  }
  bool Warned(const std::string& needle) const {
    for (const auto& w : reporter_.warnings) {
      if (w.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  testing::TempDir tmp_;
  testing::CollectingReporter reporter_;
  std::unique_ptr<format::Dataset> ds_;
  std::unique_ptr<origin::LocalFileOrigin> shards_;  // ds_'s shards
};

}  // namespace mmfs::pack
