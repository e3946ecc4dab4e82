#include "tools/view/view_verify.h"

#include "base/file_util.h"
#include "fs/format/shard_reads.h"
#include "fs/format/view_format.h"

namespace mmfs::view {

ViewVerifyResult VerifyViews(const format::Dataset& dataset, const format::ViewSet& views,
                             origin::Origin& origin) {
  ViewVerifyResult out;
  for (const Status& s : views.problems()) out.problems.push_back(s.message());
  for (const auto& view : views.views()) {
    const format::ViewManifest& m = view->manifest();
    const std::string rel = std::string(format::kViewsDirName) + "/" + std::to_string(m.side) + "/";
    auto index_sum = HashFile(view->dir() + "/" + m.index_file);
    if (!index_sum.ok() || *index_sum != m.index_checksum) {
      out.problems.push_back(rel + m.index_file + ": checksum does not match the view's manifest");
    }
    for (size_t k = 0; k < m.shards.size(); ++k) {
      const format::ShardInfo& shard = m.shards[k];
      auto sum = format::HashShard(origin, {view->tree(), static_cast<uint32_t>(k)});
      if (!sum.ok()) {
        out.problems.push_back(rel + shard.file + ": " + sum.status().message());
      } else if (*sum != shard.checksum) {
        out.problems.push_back(rel + shard.file +
                               ": checksum does not match the view's manifest (damaged)");
      }
    }
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
      auto read = format::ReadVerified(origin, *view, *f,
                                       format::ViewPath(m.side, dataset.PathOf(r->entry)));
      ++out.files_checked;
      out.bytes_checked += f->size;
      if (!read.ok()) {
        out.problems.push_back(read.status().message());
        ++out.damaged_files;
      }
    }
  }
  return out;
}

}  // namespace mmfs::view
