// The verdict on the mount's readers: is data loading the bottleneck, and what to do about it.
//
// Shares are of the wall time a reader was observed in the window (reader_accounting.h):
//   io-bound       stall share >= kIoBoundStallShare: the readers spent that much of their time
//                  waiting for mmfs requests, time a faster mount gives straight back.
//   compute-bound  otherwise, CPU share + run-queue share >= kComputeBoundCpuShare: the readers
//                  are busy (decoding, augmenting) or runnable and waiting for a core (a host
//                  with fewer free cores than busy workers), and wait little on mmfs; a faster
//                  mount would not help.
//   idle           neither: the readers are mostly blocked elsewhere (sleeping, or a full queue
//                  to a consumer that takes batches more slowly than they are made): the consumer
//                  is the bottleneck, not loading.
//   none           no reader active in the window (or under kMinWallSeconds observed).
// A process with several reading threads can pass 100% stall (its threads are summed), and CPU
// counts every thread of the process.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/readers/reader_stats.h"

namespace mmfs::fs {

inline constexpr double kIoBoundStallShare = 0.30;
inline constexpr double kComputeBoundCpuShare = 0.60;
inline constexpr double kMinWallSeconds = 0.2;

ReaderVerdict ClassifyReader(double wall_seconds, double stall_seconds, double cpu_seconds,
                             double runq_seconds = 0);
// "io-bound", "compute-bound", "idle", "none".
std::string_view ReaderVerdictName(ReaderVerdict v);

// What the advice may point at.
struct AdviceContext {
  std::vector<uint32_t> view_sides;  // derived image views the dataset has (@N)
  bool hint_in_use = false;          // a HintedSampler order has been received
  bool warm = false;                 // the RAM tier serves most READs: waits are round trips
};
// One line of advice for `v`, naming the tools that exist.
std::string ReaderAdvice(ReaderVerdict v, const AdviceContext& ctx);

}  // namespace mmfs::fs
