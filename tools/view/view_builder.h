// Building, listing and removing the derived image views of a packed dataset
// (fs/format/view_format.h): `mmfs view add/rm/ls` and `mmfs pack --view`.
//
// BuildView reads every JPEG, PNG and WebP of the base dataset in shard order (a sequential read
// of the base shards, tools/view/view_candidates.h), resizes those whose shorter side exceeds N
// on `jobs` threads (tools/view/resize_pipeline.h), and writes the results in that order, the
// order the committing thread sees them (tools/view/view_output.h), so the output does not depend
// on the thread count. It builds in DST/views/.N.partial-PID/ and renames that to DST/views/N/
// only when every file is written and synced (tools/stage/staging.h): a view being built,
// interrupted (Ctrl-C) or killed never shows in a mount. After each finished view shard a
// checkpoint line is synced (tools/view/view_checkpoint.h), so --resume continues an interrupted
// build from its last finished shard. The dataset's own files are only read.
//
// Thread-safety: BuildView may run on any thread; two builds of the same view at once are
// refused at publication (the second rename finds the view there). RemoveView and ListPartials
// are reentrant.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/pack/packer.h"
#include "tools/pack/reporter.h"

namespace mmfs::view {

inline constexpr int kDefaultViewQuality = 90;
// Smaller than the base's default (1 GiB): a killed build loses at most one unfinished shard,
// about 15,000 images at 256 px.
inline constexpr uint64_t kDefaultViewShardSize = 256ull << 20;

struct ViewOptions {
  std::string dataset;  // DST, a packed dataset
  uint32_t side = 256;  // N
  int quality = kDefaultViewQuality;  // JPEG and lossy WebP, 1..100
  int jobs = 1;         // threads decoding, resizing and encoding
  // A source image that does not decode: stop (kFail), leave it out of the view (kSkip: a
  // loader over the view does not see it), or serve the original in the view (kKeep). Unset:
  // what the dataset was packed with.
  std::optional<pack::OnBadImage> on_bad;
  uint64_t shard_size = kDefaultViewShardSize;
  bool resume = false;  // continue an interrupted build of the same view with the same options
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by SIGINT) to stop; not owned
};

struct ViewSummary {
  uint32_t side = 0;
  uint64_t images = 0;            // JPEG/PNG/WebP files of the dataset
  uint64_t resized = 0;
  uint64_t unchanged_images = 0;  // not larger than N (or animated): the original serves
  uint64_t bad_images = 0;
  uint64_t omitted = 0;           // bad images left out (--on-bad skip)
  uint64_t resumed = 0;           // images taken over from the interrupted build (--resume)
  uint64_t source_bytes = 0;      // bytes of the originals that were resized
  uint64_t view_bytes = 0;        // bytes of their resized images
  uint64_t view_bytes_on_disk = 0;     // the view folder: index + shards
  uint64_t dataset_bytes_on_disk = 0;  // the base: index + shards
  uint64_t shards = 0;
  double seconds = 0;
};

Result<ViewSummary> BuildView(const ViewOptions& options, pack::PackReporter& reporter);

// Removes the published view DST/views/N/ (renamed away first, so a mount that opens views at
// that moment sees it whole or not at all). NotFound if there is none.
Status RemoveView(const std::string& dataset, uint32_t side);

// Builds of views that are not published: interrupted ones (their process is gone; --resume
// continues one) and running ones.
struct PartialView {
  uint32_t side = 0;
  std::string dir;
  bool running = false;       // its process is alive
  uint64_t finished_shards = 0;
};
std::vector<PartialView> ListPartials(const std::string& dataset);

}  // namespace mmfs::view
