// The sample pipeline of `mmfs pack`: samples are read, checked (image headers) and checksummed
// on --jobs threads, and handed back in the order they were submitted, so the output does not
// depend on the number of threads.
//
// Ownership: a PreparedSample points at SourceNodes it does not own; whoever submits must keep
// them alive until the pipeline has committed or dropped the sample (Finish, Stop).
//
// Thread-safety: Submit, Finish and Stop are called from one thread (the committing thread),
// which is also the thread `commit` runs on; preparations run on the worker threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "tools/pack/image_check.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

// A sample on its way to the shards: loaded, checked and checksummed, not yet committed.
struct PreparedSample {
  std::vector<SourceNode*> members;       // not owned
  std::vector<std::string> contents;      // per member
  std::vector<Result<ImageInfo>> images;  // per member; ImageInfo{} when not an image
  std::vector<uint64_t> sums;             // per member, XXH3-64
  Status error;           // a member could not be read
  bool from_tar = false;  // progress was counted while reading the archive
};

// Checks the images among `p.contents` and checksums every member (fills images and sums).
// Thread-safe: each thread has its own JPEG decoder.
void CheckAndHash(PreparedSample& p);

// How much of a file PrepareFromFiles reads.
struct ReadLimits {
  // A larger file fails the pack, naming it, before it is read (PackOptions::max_file_bytes).
  uint64_t max_file_bytes = 1ull << 30;
  // --on-bad keep packs a bad image whole; otherwise an image whose first bytes are not its
  // type's signature is refused from them, unread (a 2 GiB ".jpg" of zeros costs 16 bytes).
  bool keep_bad_images = false;
};

// A prepared sample of files on disk (folder sources and generated captions): reads `members`
// (which must not have changed size since they were scanned) after checking each image's first
// bytes (CheckImageStart), then checks and checksums them as CheckAndHash does.
PreparedSample PrepareFromFiles(std::vector<SourceNode*> members, const ReadLimits& limits);

// Runs preparations on `jobs` threads (inline for 1) and hands the results to `commit` in the
// order they were submitted, keeping at most a few per thread in flight, and at most
// kBytesInFlightPerJob of file bytes per thread.
class SamplePipeline {
 public:
  using Commit = std::function<Status(PreparedSample&)>;
  SamplePipeline(int jobs, Commit commit);
  ~SamplePipeline() { Stop(); }
  SamplePipeline(const SamplePipeline&) = delete;
  SamplePipeline& operator=(const SamplePipeline&) = delete;

  // Queues `prepare`, a sample of `bytes` file bytes (runs it and commits at once with one
  // job); commits the oldest samples while too many, or too many bytes, are in flight, returning
  // the first error of those commits.
  Status Submit(std::function<PreparedSample()> prepare, uint64_t bytes = 0);

  // File bytes a job may have read ahead of the shards (plus one sample larger than that).
  static constexpr uint64_t kBytesInFlightPerJob = 256ull << 20;

  // Commits everything submitted.
  Status Finish();

  // Drops what is queued and waits for the preparations running now. Idempotent. Callers whose
  // preparations point into data they own must stop the pipeline before freeing it: an error
  // returned early leaves work queued behind it.
  void Stop();

 private:
  Status CommitFront();
  void Loop();

  Commit commit_;
  size_t window_ = 4;
  uint64_t window_bytes_ = kBytesInFlightPerJob;
  std::deque<std::future<PreparedSample>> pending_;  // submission order
  std::deque<uint64_t> pending_sizes_;                // bytes of each, same order
  uint64_t pending_bytes_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<PreparedSample()>> queue_;  // guarded by mu_
  bool stop_ = false;                                       // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace mmfs::pack
