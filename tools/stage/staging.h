// Staging and publishing a build (a packed dataset, a view of one): the build is written in a
// hidden sibling of the place it is for, PARENT/.NAME.partial-PID, and appears as PARENT/NAME in
// one rename only once it is complete and synced, so no reader ever sees part of one. Both
// writers use it: `mmfs pack` (PARENT/NAME is DST) and `mmfs view add` (DST/views/N).
//
// The PID in the staging directory's name says whose build it is. One whose process is gone was
// interrupted (Ctrl-C, kill -9, a power cut): the next build of NAME either takes it over
// (--resume: the most recent one that left a checkpoint, tools/stage/checkpoint_file.h, renamed
// to the new process's name) or removes it. A running build's directory is never touched.
//
// Publishing is rename(staged, PARENT/NAME), then fsync of PARENT, so the rename is durable
// before the command says it is done. Replacing (mmfs pack --force) renames the existing
// PARENT/NAME aside to PARENT/.NAME.old-PID first, renames it back if the second rename fails,
// and removes it only once the new one is in place: a reader sees the old or the new, whole.
//
// Ownership: a Staging holds names only; the directory on disk is removed by Discard or moved by
// Publish, never by the destructor (an interrupted build keeps it to be resumed).
// Thread-safety: the methods are const and reentrant; two builds of one NAME in one process at
// once are not supported (they would share the staging directory).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::stage {

class Staging {
 public:
  // A build to be published as PARENT/NAME. PARENT must exist when Begin runs.
  Staging(std::string parent, std::string name);

  const std::string& parent() const { return parent_; }
  // PARENT/.NAME.partial-<this process's PID>: where this build is written.
  const std::string& dir() const { return dir_; }
  // PARENT/NAME.
  const std::string& final_path() const { return final_path_; }

  // What Begin tells its caller as it goes, in this order; either may be empty.
  struct Notes {
    std::function<void()> nothing_to_resume;                       // resume asked, none found
    std::function<void(const std::string& stale_dir)> removing;   // before removing one
  };

  // Prepares dir(). With `resume`, the most recent resumable build (FindResumable) is taken over:
  // renamed to dir() (Status "take over DIR" when that fails). Then every other staging directory
  // of NAME whose process is gone is removed. Then dir() is made with `mode`, or, when a build
  // was taken over, its mode is narrowed to `mode`. True when a build was taken over.
  Result<bool> Begin(bool resume, mode_t mode, const Notes& notes) const;

  // The staging directory of an interrupted build of NAME (its process gone) holding a
  // checkpoint, the one whose checkpoint was written last; "" when there is none.
  std::string FindResumable() const;

  // Removes dir() with everything in it: a build that failed, or was interrupted before it
  // finished anything worth resuming.
  void Discard() const;

  // Publishes dir() as final_path() (see the top). `replace`: final_path() exists and is to be
  // replaced (Status "rename FINAL" when it cannot be moved aside); without it, the rename fails
  // if final_path() has appeared meanwhile as a directory that is not empty.
  // `failure` is the context of the error when the rename of dir() fails ("rename DIR to
  // FINAL", "publish DIR as FINAL": each command's own words). dir() is removed on failure.
  Status Publish(bool replace, std::string_view failure) const;

 private:
  // Calls `fn` for each staging directory of NAME in PARENT whose process is gone.
  void ForEachStale(const std::function<void(const std::string& dir)>& fn) const;

  std::string parent_;
  std::string name_;
  std::string dir_;
  std::string final_path_;
};

// Splits a staging directory's file name ".NAME.partial-PID" into NAME and PID. False for any
// other name, including an empty NAME and a PID that is not a positive decimal number.
bool ParseStagingName(std::string_view file_name, std::string* name, long* pid);

// Whether the build of `pid` is over: no process has that PID, or it is this process (a build
// this process ran before and gave up).
bool ProcessGone(long pid);

}  // namespace mmfs::stage
