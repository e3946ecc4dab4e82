// ProcReader: what the reader accounting (reader_accounting.h) learns about a reader from /proc,
// behind a seam so that tests can hand it a fake /proc.
//
// A FUSE request names the calling *thread* (its TID in the daemon's pid namespace), so a reader
// is found in two steps: ReadTask(tid) gives the thread's process (Tgid) and its start time (which
// tells a reused TID from the thread first seen), ReadProcess(tgid) the whole process's CPU time
// (utime + stime of all its threads) and `rchar` from /proc/PID/io. `rchar` counts every byte
// the process read with read(2) and friends from any file, pipe or socket: the kernel keeps no
// per-mount count, so it is reported as the process total and labelled so (docs/guide.md, the
// Readers section).
//
// Thread-safety: implementations need not be thread-safe (the accounting calls them under its
// sampler lock). The parse functions are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::fs {

struct TaskInfo {
  uint64_t tgid = 0;
  uint64_t start_ticks = 0;  // field 22 of /proc/TID/stat: identity of the thread
};

struct ProcessSample {
  std::string comm;          // the command name (prctl PR_SET_NAME), e.g. "pt_data_worker"
  uint64_t start_ticks = 0;  // identity of the process
  uint64_t cpu_ns = 0;       // utime + stime of the whole process
  // Time its threads were runnable but waiting for a CPU (field 2 of each
  // /proc/PID/task/TID/schedstat, summed): on a host with fewer free cores than busy readers,
  // the time a compute-bound reader does not get to spend on a CPU.
  uint64_t runq_ns = 0;
  bool has_io = false;  // /proc/PID/io was readable (same user, or ptrace rights)
  uint64_t rchar = 0;   // bytes read by the process, from anything (not only the mount)
};

class ProcReader {
 public:
  virtual ~ProcReader() = default;
  // NotFound when the thread is gone.
  virtual Result<TaskInfo> ReadTask(uint64_t tid) = 0;
  // NotFound when the process is gone.
  virtual Result<ProcessSample> ReadProcess(uint64_t tgid) = 0;
};

// Reads `root`/TID/{status,stat} and `root`/PID/{stat,io}.
std::unique_ptr<ProcReader> NewProcfsReader(std::string root = "/proc");

// The parts of /proc/PID/stat used here. The command name is between the first '(' and the
// last ')' (it may hold spaces and parentheses); times are in clock ticks.
struct ProcStat {
  std::string comm;
  uint64_t utime_ticks = 0, stime_ticks = 0, start_ticks = 0;
};
Result<ProcStat> ParseProcStat(std::string_view text);
// The Tgid line of /proc/TID/status.
Result<uint64_t> ParseStatusTgid(std::string_view text);
// The rchar line of /proc/PID/io.
Result<uint64_t> ParseIoRchar(std::string_view text);
// The run-queue wait (second field, ns) of /proc/TID/schedstat.
Result<uint64_t> ParseSchedstatRunDelay(std::string_view text);

}  // namespace mmfs::fs
