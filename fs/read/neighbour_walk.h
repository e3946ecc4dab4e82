// The walk over a file's neighbours in the index: the one loop behind the members of a sample
// (MissLoader::SampleMembers), the files of an extent (the miss loader's extent walk) and the
// samples an access pattern predicts (Prefetcher).
//
// Why the index: within a directory, index order is name order and the packer writes samples in
// path order, so a file's index neighbours are its sample's other members and the samples beside
// it in the shard; sibling directories' runs follow each other in the same order. Each caller
// says what a neighbour means to it (its visitor) and the walk only steps: down from `from` to
// index 0 or up to the index's end, one entry at a time, until the visitor says stop, an entry
// cannot be read (damage ends a walk, it is never an error of the caller's) or `max_steps`
// entries were passed.
//
// `index` is anything with `uint64_t entry_count() const` and
// `Result<format::Entry> GetEntry(uint64_t) const`: the dataset in the daemon, a list in tests.
// A template so that the walk costs what the loops it replaced cost (no call per entry).
//
// Thread-safety: a pure function of the index and the visitor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fs/format/dataset.h"

namespace mmfs::fs {

enum class WalkDirection {
  kDown,  // from - 1, from - 2, ..., 0
  kUp,    // from + 1, from + 2, ..., the last entry
};

// A visitor's answer for one entry.
enum class WalkStep {
  kOn,    // passed: go on to the next entry
  kStop,  // the walk ends here (this entry is not counted as passed)
};

// Visits the entries next to `from` (not `from` itself) in `direction`, each once, with
// `visit(const format::Entry&) -> WalkStep`, at most `max_steps` of them passed. Returns how many
// entries the visitor passed (kOn), so that two walks can share one budget of steps.
template <typename Index, typename Visit>
size_t WalkNeighbours(const Index& index, uint64_t from, WalkDirection direction, size_t max_steps,
                      Visit&& visit) {
  size_t steps = 0;
  if (direction == WalkDirection::kDown) {
    for (uint64_t i = from; i > 0 && steps < max_steps; --i) {
      auto e = index.GetEntry(i - 1);
      if (!e.ok() || visit(*e) == WalkStep::kStop) break;
      ++steps;
    }
  } else {
    for (uint64_t i = from + 1; i < index.entry_count() && steps < max_steps; ++i) {
      auto e = index.GetEntry(i);
      if (!e.ok() || visit(*e) == WalkStep::kStop) break;
      ++steps;
    }
  }
  return steps;
}

}  // namespace mmfs::fs
