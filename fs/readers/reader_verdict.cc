#include "fs/readers/reader_verdict.h"

namespace mmfs::fs {

ReaderVerdict ClassifyReader(double wall_seconds, double stall_seconds, double cpu_seconds,
                             double runq_seconds) {
  if (wall_seconds < kMinWallSeconds) return ReaderVerdict::kNone;
  if (stall_seconds / wall_seconds >= kIoBoundStallShare) return ReaderVerdict::kIoBound;
  if ((cpu_seconds + runq_seconds) / wall_seconds >= kComputeBoundCpuShare) {
    return ReaderVerdict::kComputeBound;
  }
  return ReaderVerdict::kIdle;
}

std::string_view ReaderVerdictName(ReaderVerdict v) {
  switch (v) {
    case ReaderVerdict::kIoBound:
      return "io-bound";
    case ReaderVerdict::kComputeBound:
      return "compute-bound";
    case ReaderVerdict::kIdle:
      return "idle";
    case ReaderVerdict::kNone:
      break;
  }
  return "none";
}

std::string ReaderAdvice(ReaderVerdict v, const AdviceContext& ctx) {
  std::string view;
  if (!ctx.view_sides.empty()) {
    view = "@";
    view += std::to_string(ctx.view_sides.front());
  }
  std::string s;
  switch (v) {
    case ReaderVerdict::kIoBound:
      if (ctx.warm) {
        s = "readers wait on mmfs round trips with a warm cache: mount with --overlay (Python "
            "opens then cost no request), or add DataLoader workers to overlap the waits";
      } else {
        s = "readers wait on mmfs: warm the cache first (mmfs warmup MNT), give it room "
            "(--ram-cache, --cache-dir)";
        s += ctx.hint_in_use ? ", and add DataLoader workers"
                             : ", and send the read order ahead (HintedSampler)";
      }
      if (!view.empty()) {
        s += "; reading the smaller images under ";
        s += view;
        s += "/ moves fewer bytes";
      }
      return s;
    case ReaderVerdict::kComputeBound:
      s = "readers are busy computing (decoding, augmenting) or waiting for a core, not "
          "waiting on mmfs: add DataLoader workers if cores are free";
      if (!view.empty()) {
        s += ", or decode the smaller images under ";
        s += view;
        s += "/";
      }
      return s;
    case ReaderVerdict::kIdle:
      return "readers are neither waiting on mmfs nor busy: the consumer (the training step) "
             "is the bottleneck, not data loading";
    case ReaderVerdict::kNone:
      break;
  }
  return "no reader read through the mount in the window";
}

}  // namespace mmfs::fs
