// LinePipe: a named pipe the daemon reads lines from, one per writable control file of the
// mount: `hint` behind MNT/.mmfs/hint (the prefetch order) and `control` behind
// MNT/.mmfs/control (mmfs warmup's requests, fs/names/control_protocol.h).
//
// The mount is read-only at the kernel level: the kernel refuses every write before it reaches
// the daemon and, once the daemon declines OPEN, never sends it again (that is what makes warm
// reads free). So these cannot be files the daemon accepts writes for. Instead `.mmfs/NAME` is a
// symlink to a FIFO that this class creates in a private directory (`mmfs-NAME-PID-XXXXXX/NAME`)
// and reads on its own thread; `open(MNT/.mmfs/NAME, "w")` follows the link like any writer would.
//
// Protocol: text, one line at a time. One writer session (open, write, close) is one message:
// the first bytes after the pipe was idle call `begin`, lines are handed over as they arrive (so a
// prefetch order starts before a long one has been written to its end), the writer's close calls
// `end`. Two writers at once interleave; for the hint, the training script's main process is
// expected to be the only writer.
//
// Thread-safety: construction and destruction on one thread; callbacks run on the reader thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::fs {

struct LinePipeCallbacks {
  std::function<void()> begin;                                  // a writer session starts
  std::function<void(const std::vector<std::string>&)> lines;  // its next lines
  std::function<void()> end;                                    // the writer closed
};

class LinePipe {
 public:
  // Creates `parent_dir`/mmfs-`name`-PID-XXXXXX/`name` with permission `fifo_mode` and starts
  // reading. `name` is a plain word ("hint", "control").
  static Result<std::unique_ptr<LinePipe>> Open(const std::string& parent_dir,
                                                const std::string& name, mode_t fifo_mode,
                                                LinePipeCallbacks callbacks);
  // The directory where a daemon should put its pipes: /run/mmfs when writable (root),
  // else $XDG_RUNTIME_DIR, else $TMPDIR or /tmp.
  static std::string DefaultParentDir();
  ~LinePipe();  // stops the reader and removes the FIFO and its directory
  LinePipe(const LinePipe&) = delete;
  LinePipe& operator=(const LinePipe&) = delete;

  const std::string& path() const { return fifo_path_; }

  // Removes the `name` pipe directories of daemons that are gone (killed before they could clean
  // up).
  static void RemoveStale(const std::string& parent_dir, const std::string& name);

 private:
  LinePipe() = default;
  void ReadLoop();

  std::string dir_;
  std::string fifo_path_;
  std::string name_;
  LinePipeCallbacks callbacks_;
  UniqueFd stop_fd_;  // an eventfd; written once to stop the reader
  std::thread reader_;
};

}  // namespace mmfs::fs
