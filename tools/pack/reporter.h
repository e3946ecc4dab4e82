// How the packer tells its caller what it is doing: warnings about skipped inputs and progress.
// The CLI renders these as a progress bar on a TTY and as plain lines otherwise; tests collect
// them.
//
// Thread-safety: implementations are called from the packing thread only.
#pragma once

#include <cstdint>
#include <string>

namespace mmfs::pack {

struct PackProgress {
  uint64_t files_done = 0;
  uint64_t files_total = 0;
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  uint64_t bytes_uploaded = 0;  // a bucket destination's bytes out; 0 for a local one
  double elapsed_seconds = 0;
  // Set on the one last call, when everything is written (bytes_done == bytes_total then);
  // before it, bytes_done < bytes_total (or both are 0).
  bool finished = false;
};

class PackReporter {
 public:
  virtual ~PackReporter() = default;
  // Something in the source was left out or looks wrong; packing goes on.
  virtual void Warning(const std::string& message) = 0;
  // A phase starts ("scanning /data", "writing index").
  virtual void Phase(const std::string& message) = 0;
  // Called often while writing shards, and once with `finished` at the end; implementations
  // rate-limit their output.
  virtual void Progress(const PackProgress& progress) = 0;
};

}  // namespace mmfs::pack
