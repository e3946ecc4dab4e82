// The progress of one pack as the reporter sees it. The counts are advanced by whoever reads
// the input (folder files when committed, tar members as the archive is read); Report clamps
// them so the reporter never sees more than the totals, which the counts can pass (a compressed
// tar is read ahead of the members handed out; a source file grew), and sees `finished` exactly
// once, after the last shard.
//
// Ownership: keeps a reference to the reporter, which must outlive it.
// Thread-safety: used by the packing thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

#include "tools/pack/reporter.h"

namespace mmfs::pack {

class PackProgressTracker {
 public:
  explicit PackProgressTracker(PackReporter& reporter)
      : reporter_(reporter), start_(std::chrono::steady_clock::now()) {}

  PackProgress& counts() { return progress_; }
  // Where bytes_uploaded is read at each report (a bucket destination's uploader); not owned.
  void set_bytes_uploaded(std::function<uint64_t()> read) { bytes_uploaded_ = std::move(read); }

  void Report(bool finished) {
    PackProgress p = progress_;
    if (bytes_uploaded_) p.bytes_uploaded = bytes_uploaded_();
    p.elapsed_seconds = Elapsed();
    p.finished = finished;
    if (finished) {
      p.bytes_done = p.bytes_total;
    } else if (p.bytes_total > 0) {
      p.bytes_done = std::min(p.bytes_done, p.bytes_total - 1);
    } else {
      p.bytes_done = 0;
    }
    reporter_.Progress(p);
  }

  // Seconds since the tracker was made (the start of the pack).
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  PackReporter& reporter_;
  PackProgress progress_;
  std::function<uint64_t()> bytes_uploaded_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mmfs::pack
