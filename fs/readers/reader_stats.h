// The readers' stat types, a typed value of the stats snapshot (fs/stats/stats.h): the rows of
// the mount's reader processes over a window and the totals by command (ReadersStats,
// ReaderAccounting::Snapshot), and the verdict on them (reader_verdict.h).
//
// Here, in fs/readers, so that the rooms that fill them include nothing above their folder, and
// apart from the accounting so that the snapshot need not include it.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mmfs::fs {

// Readers of the mount (reader_accounting.h): who waits on mmfs, who computes, over a window.
enum class ReaderVerdict { kNone, kIoBound, kComputeBound, kIdle };

struct ReaderRow {
  enum class Kind { kProcess, kOthers, kFinished };
  Kind kind = Kind::kProcess;
  uint64_t pid = 0;        // kProcess: the process (Tgid)
  std::string comm;        // kProcess: its command name at first sight
  uint32_t threads = 0;    // threads of it that sent requests and are alive
  uint32_t processes = 0;  // readers summed into the row (1 for kProcess)
  // Over the window: time the reader was observed, time some request of one of its threads was
  // in mmfs (per thread, overlapping requests counted once; summed over threads), CPU time
  // (utime + stime), requests and READ bytes mmfs served it, and `rchar` (every byte the
  // process read from anything: /proc/PID/io has no per-mount count).
  double wall_seconds = 0, stall_seconds = 0, cpu_seconds = 0;
  // Runnable but waiting for a CPU (schedstat): CPU the reader wanted and did not get.
  double runq_seconds = 0;
  uint64_t requests = 0, served_bytes = 0;
  bool has_rchar = false;
  uint64_t rchar_bytes = 0;
  ReaderVerdict verdict = ReaderVerdict::kNone;

  double stall_share() const { return wall_seconds > 0 ? stall_seconds / wall_seconds : 0; }
  double cpu_share() const { return wall_seconds > 0 ? cpu_seconds / wall_seconds : 0; }
  double runq_share() const { return wall_seconds > 0 ? runq_seconds / wall_seconds : 0; }
  // What the process read without asking mmfs (rchar less the bytes mmfs served it), as a share
  // of rchar: the page cache's share if the process reads mostly from the mount; 0 without rchar.
  double page_cache_share_estimate() const {
    return has_rchar && rchar_bytes > served_bytes
               ? static_cast<double>(rchar_bytes - served_bytes) / static_cast<double>(rchar_bytes)
               : 0;
  }
};

// Since the mount, by command name (bounded: the Prometheus labels).
struct ReaderCommandTotals {
  std::string comm;
  double stall_seconds = 0, cpu_seconds = 0;
  uint64_t requests = 0, served_bytes = 0;
};

struct ReadersStats {
  bool enabled = false;
  double window_seconds = 0;
  // The top processes by stall, then "others" (the rest), then "finished" (readers that exited
  // in the window), the last two only when not empty. Only readers active in the window.
  std::vector<ReaderRow> rows;
  ReaderRow total;  // the sum of the rows
  ReaderVerdict verdict = ReaderVerdict::kNone;
  std::string advice;  // one line for the verdict
  uint64_t tracked_threads = 0, tracked_processes = 0;
  uint64_t untracked_requests = 0;  // requests of threads beyond the table's bound
  std::vector<ReaderCommandTotals> by_command;
};

}  // namespace mmfs::fs
