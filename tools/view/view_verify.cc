#include "tools/view/view_verify.h"

#include "fs/base/file_util.h"
#include "fs/format/view_format.h"

namespace mmfs::view {

ViewVerifyResult VerifyViews(const format::Dataset& dataset, const format::ViewSet& views) {
  ViewVerifyResult out;
  for (const Status& s : views.problems()) out.problems.push_back(s.message());
  for (const auto& view : views.views()) {
    const format::ViewManifest& m = view->manifest();
    const std::string rel = std::string(format::kViewsDirName) + "/" + std::to_string(m.side) + "/";
    auto index_sum = HashFile(view->dir() + "/" + m.index_file);
    if (!index_sum.ok() || *index_sum != m.index_checksum) {
      out.problems.push_back(rel + m.index_file + ": checksum does not match the view's manifest");
    }
    for (const format::ShardInfo& shard : m.shards) {
      auto sum = HashFile(view->dir() + "/" + shard.file);
      if (!sum.ok()) {
        out.problems.push_back(rel + shard.file + ": " + sum.status().message());
      } else if (*sum != shard.checksum) {
        out.problems.push_back(rel + shard.file +
                               ": checksum does not match the view's manifest (damaged)");
      }
    }
    std::string buf;
    for (uint64_t i = 0; i < view->record_count(); ++i) {
      auto r = view->GetRecord(i);
      if (!r.ok()) {
        out.problems.push_back(r.status().message());
        ++out.damaged_files;
        continue;
      }
      if (r->kind != static_cast<uint16_t>(format::ViewRecordKind::kResized)) continue;
      auto e = dataset.GetEntry(r->entry);
      if (!e.ok()) {
        out.problems.push_back(e.status().message());
        ++out.damaged_files;
        continue;
      }
      auto f = view->Lookup(*e);
      if (!f.ok() || f->source != format::ViewFile::Source::kView) {
        out.problems.push_back(rel + m.index_file + ": record " + std::to_string(i) +
                               " is not found by lookup (records out of order)");
        ++out.damaged_files;
        continue;
      }
      buf.resize(f->size);
      Status st = view->ReadVerified(*f, format::ViewPath(m.side, dataset.PathOf(r->entry)),
                                     buf.data());
      ++out.files_checked;
      out.bytes_checked += f->size;
      if (!st.ok()) {
        out.problems.push_back(st.message());
        ++out.damaged_files;
      }
    }
  }
  return out;
}

}  // namespace mmfs::view
