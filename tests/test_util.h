// Helpers shared by the tests: temporary directories, files, tiny JPEGs and running commands.
//
// Thread-safety: test-only; not thread-safe.
#pragma once

// Tests that build view images with libvips (tools/view) are skipped under TSan: there libvips
// runs tens of times slower (in system time) and its threads are suppressed anyway
// (tests/tsan.supp), so they would check nothing in minutes; the other builds run them.
#if defined(__SANITIZE_THREAD__)
#define MMFS_SKIP_UNDER_TSAN() \
  GTEST_SKIP() << "builds view images with libvips: run in the non-TSan builds"
#else
#define MMFS_SKIP_UNDER_TSAN() (void)0
#endif

#include <string>
#include <string_view>
#include <vector>

namespace mmfs::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
};

// Writes `data` to `path`, creating parent directories.
void WriteFile(const std::string& path, std::string_view data);
std::string ReadFile(const std::string& path);

// A valid baseline JPEG of the given size (deterministic content from `seed`).
std::string MakeJpeg(int width, int height, unsigned seed = 1);

struct CommandResult {
  int exit_code = -1;  // -1 if killed by a signal
  std::string output;  // stdout and stderr together
};
// Runs `argv` (no shell), waiting at most `timeout_seconds`; kills it on timeout.
CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_seconds = 120);
// Runs a shell command line through /bin/sh -c.
CommandResult Shell(const std::string& command, double timeout_seconds = 120);

// Polls `predicate` every 10 ms until it is true or `timeout_seconds` pass.
template <typename Pred>
bool WaitFor(Pred predicate, double timeout_seconds);

// The calling thread's kernel id, for WaitUntilBlocked.
int CurrentThreadId();
// Polls until the thread `tid` of this process is asleep in the kernel (state S: waiting on a
// futex, i.e. a condition variable or a contended lock), or `timeout_seconds` pass. Tests use it
// to know that another thread has reached a wait, instead of sleeping and hoping it has.
bool WaitUntilBlocked(int tid, double timeout_seconds);

// A size field of /proc/PID/status ("VmRSS", "VmHWM", "RssAnon") in bytes; 0 if unreadable.
uint64_t ProcStatusBytes(int pid, const std::string& field);

// True if `path` is the root of a mount (its device differs from its parent's).
bool IsMountPoint(const std::string& path);

// Paths of the binaries under test (set by CMake).
std::string MmfsBinary();
std::string GenDatasetBinary();

// `mmfs-gen-dataset DIR ARGS...`, which is deterministic for given arguments: the first call with
// ARGS in this process generates into a directory of its own (removed at exit), every call copies
// that tree to DIR. A suite whose cases each set up the same dataset generates it once (under a
// sanitizer generating is most of a mount test's setup). DIR must not exist yet.
CommandResult GenDataset(const std::string& dir, const std::vector<std::string>& args,
                         double timeout_seconds = 300);
std::string SourceDir();

}  // namespace mmfs::testing

#include "tests/test_util_inl.h"
