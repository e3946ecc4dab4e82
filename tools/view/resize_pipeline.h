// The parallel half of a view build: the candidates' original bytes read from the base (checked
// against their checksums) and resized (tools/view/image_resizer.h) on `jobs` threads, at most
// 8 per thread ahead of the commit, and handed back in candidate order on the calling thread,
// so the view's bytes do not depend on the number of threads.
//
// Ownership: keeps references to the dataset, the origin of its shards and the candidates; they
// must outlive Run.
// Thread-safety: Run is called from one thread (the committing thread, where `commit` runs); it
// starts its workers and joins them before it returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/origin/origin.h"
#include "tools/view/image_resizer.h"
#include "tools/view/view_candidates.h"

namespace mmfs::view {

// What a worker made of one candidate.
struct ResizeOutcome {
  bool ready = false;
  Status read_error;  // the base's own bytes are damaged: the build stops
  // The resize's result (see ResizeImage); nullopt when the candidate was small by the index
  // and never read.
  std::optional<Result<std::optional<ResizedImage>>> image;
};

class ResizePipeline {
 public:
  ResizePipeline(const format::Dataset& dataset, origin::Origin& origin, uint32_t side,
                 int quality, int jobs, const std::atomic<bool>* cancel)
      : dataset_(dataset),
        origin_(origin),
        side_(side),
        quality_(quality),
        jobs_(jobs),
        cancel_(cancel) {}

  // Called on Run's thread with each candidate's index and outcome, in candidate order.
  using CommitFn = std::function<Status(size_t index, ResizeOutcome& outcome)>;

  // Resizes candidates[first..] and commits each in order. Stops at the first error `commit`
  // returns, or with Cancelled("interrupted") once `cancel` is set (checked before every
  // commit, and while waiting for a worker).
  Status Run(const std::vector<Candidate>& candidates, size_t first, const CommitFn& commit);

 private:
  // A worker's job: one candidate's original, read and resized.
  void Work(const Candidate& c, ResizeOutcome* out) const;
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(); }

  const format::Dataset& dataset_;
  origin::Origin& origin_;  // the dataset's shards (kDatasetTree)
  const uint32_t side_;
  const int quality_;
  const int jobs_;
  const std::atomic<bool>* cancel_;  // not owned; may be null
};

}  // namespace mmfs::view
