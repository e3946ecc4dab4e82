// The images a view build looks at: every JPEG, PNG and WebP of the base dataset (by name, as the
// packer tells them apart), in the base's shard order, so the build reads the base shards front
// to back and writes the view's shards in the same order (a walk of the view then reads its
// shards front to back too). A candidate's position in that order is what the view's checkpoint
// counts ("next": candidates committed).
//
// Thread-safety: a pure function over a const dataset.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/format/dataset.h"
#include "tools/view/image_resizer.h"

namespace mmfs::view {

// One base image.
struct Candidate {
  uint32_t entry = 0;
  uint32_t shard = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  ImageKind kind = ImageKind::kOther;
  bool small = false;  // the index already says it is not larger than N: never read
};

// The candidates of a view of side `side`, in shard order. A damaged entry is left out (mmfs
// verify names it).
std::vector<Candidate> CollectCandidates(const format::Dataset& dataset, uint32_t side);

}  // namespace mmfs::view
