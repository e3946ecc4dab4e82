// HintChannel: the named pipe behind MNT/.mmfs/hint.
//
// The mount is read-only at the kernel level: the kernel refuses every write before it reaches
// the daemon and, once the daemon declines OPEN, never sends it again (that is what makes warm
// reads free). So the hint cannot be a file the daemon accepts writes for. Instead `.mmfs/hint`
// is a symlink to a FIFO that this class creates in a private directory and reads on its own
// thread; `open(MNT/.mmfs/hint, "w")` follows the link like any writer would.
//
// Protocol: text, one path per line (relative to the mount root, or absolute under it). One
// writer session (open, write, close) is one order: the first bytes after the pipe was idle begin
// a new order, which replaces the previous one. Lines are handed over as they arrive, so prefetch
// starts before a long order has been written to its end. Two writers at once interleave; the
// training script's main process is expected to be the only writer.
//
// Thread-safety: construction and destruction on one thread; callbacks run on the reader thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fs/base/file_util.h"
#include "fs/base/status.h"

namespace mmfs::fs {

struct HintCallbacks {
  std::function<void()> begin;                                  // a new order starts
  std::function<void(const std::vector<std::string>&)> lines;  // the next lines of it
  std::function<void()> end;                                    // the writer closed
};

class HintChannel {
 public:
  // Creates `parent_dir`/mmfs-hint-XXXXXX/hint with permission `fifo_mode` and starts reading.
  static Result<std::unique_ptr<HintChannel>> Open(const std::string& parent_dir,
                                                   mode_t fifo_mode, HintCallbacks callbacks);
  // The directory where a daemon should put its channel: /run/mmfs when writable (root),
  // else $XDG_RUNTIME_DIR, else $TMPDIR or /tmp.
  static std::string DefaultParentDir();
  ~HintChannel();  // stops the reader and removes the FIFO and its directory
  HintChannel(const HintChannel&) = delete;
  HintChannel& operator=(const HintChannel&) = delete;

  const std::string& path() const { return fifo_path_; }

  // Removes the FIFO directories of daemons that are gone (killed before they could clean up).
  static void RemoveStale(const std::string& parent_dir);

 private:
  HintChannel() = default;
  void ReadLoop();

  std::string dir_;
  std::string fifo_path_;
  HintCallbacks callbacks_;
  UniqueFd stop_fd_;  // an eventfd; written once to stop the reader
  std::thread reader_;
};

}  // namespace mmfs::fs
