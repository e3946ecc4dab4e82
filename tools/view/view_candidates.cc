#include "tools/view/view_candidates.h"

#include <algorithm>

#include "fs/format/view_format.h"

namespace mmfs::view {

std::vector<Candidate> CollectCandidates(const format::Dataset& dataset, uint32_t side) {
  std::vector<Candidate> candidates;
  for (uint64_t i = 0; i < dataset.entry_count(); ++i) {
    auto e = dataset.GetEntry(i);
    if (!e.ok() || !e->is_regular()) continue;  // a damaged entry: mmfs verify names it
    ImageKind kind = ImageKindOf(e->name);
    if (kind == ImageKind::kOther) continue;
    Candidate c;
    c.entry = static_cast<uint32_t>(i);
    c.shard = e->record.shard;
    c.offset = e->record.data_offset;
    c.size = e->record.size;
    c.kind = kind;
    // The packer records each image's size (clamped to 65535; 0 when it did not decode).
    uint32_t w = e->record.width, h = e->record.height, tw, th;
    c.small = w > 0 && h > 0 && w < 65535 && h < 65535 && !format::ViewSize(w, h, side, &tw, &th);
    candidates.push_back(c);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
  });
  return candidates;
}

}  // namespace mmfs::view
