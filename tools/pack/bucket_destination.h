// A bucket as the destination: `mmfs pack SRC s3://BUCKET/PREFIX/ds.mmfs`.
//
// The dataset is built as for a local DST, in a staging directory on this machine (--staging-dir;
// by default under the user's cache directory), and each shard leaves it as soon as it is
// finished: a ShardUploader uploads it (fs/origin/s3_upload.h, on a thread of its own while the
// next shard is packed) and removes the local file, so the staging directory holds at most
// kMaxStagedShards shards at a time. The index follows the last shard, and the manifest comes
// last of all: `mmfs mount`/`info`/`verify` of the URL finds a manifest only once everything it
// names is in the bucket.
//
// Each shard object carries its XXH3 checksum as user metadata (x-amz-meta-mmfs-xxh3), so
// that `--resume` after a kill trusts a shard in the bucket, without reading it, only when it is
// the one this pack uploaded (ShardIsInBucket); any other is packed and uploaded again.
//
// Ownership: a ShardUploader borrows its S3Uploader, which must outlive it.
// Thread-safety: a ShardUploader is driven by one thread (the pack's); its own thread only
// uploads and removes files.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "fs/format/manifest.h"
#include "fs/origin/s3_upload.h"

namespace mmfs::pack {

// The shards a bucket pack keeps on local disk at most: the one being written and two finished
// ones waiting for (or in) their upload.
inline constexpr int kMaxStagedShards = 3;

// Where a bucket pack stages its shards when --staging-dir is not given:
// $XDG_CACHE_HOME/mmfs/pack-staging, else ~/.cache/mmfs/pack-staging (the home directory from
// $HOME, else the user database). InvalidArgument when the user has no home directory: never a
// shared place such as /tmp, where another user could prepare the path.
Result<std::string> DefaultStagingDir();

// The user metadata a shard object is uploaded with.
origin::ObjectMetadata ShardMetadata(const format::ShardInfo& info);
// Whether the bucket holds `info`'s shard as a pack uploaded it (its size, and its checksum's
// metadata): false when it is missing or differs; the error when it cannot be looked at (a
// resume must not pack again, for a passing fault, what the bucket holds).
Result<bool> ShardIsInBucket(origin::S3Uploader& uploader, const format::ShardInfo& info);

class ShardUploader {
 public:
  // `cancel` (not owned; may be null): while it is set, Add and Finish return Cancelled
  // instead of waiting for uploads (Ctrl-C is not held up by a slow link).
  ShardUploader(origin::S3Uploader& uploader, std::string staging_dir,
                const std::atomic<bool>* cancel = nullptr);
  ~ShardUploader() { Stop(); }
  ShardUploader(const ShardUploader&) = delete;
  ShardUploader& operator=(const ShardUploader&) = delete;

  // Queues the finished shard `info` (its file in the staging directory) and returns, once
  // fewer than kMaxStagedShards - 1 shards wait. The first upload's error, once one failed.
  Status Add(const format::ShardInfo& info);
  // Waits until every queued shard is uploaded; the first error.
  Status Finish();
  // Stops the upload under way between two parts (aborting it) and drops the queued ones (a
  // pack that failed or was interrupted).
  void Stop();
  // The objects this uploader put in the bucket, in order.
  std::vector<std::string> uploaded() const;

 private:
  void Run();

  // Waits on changed_ until `done` holds or the pack is cancelled; false when cancelled.
  bool WaitUnlessCancelled(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done);

  origin::S3Uploader& uploader_;
  const std::string staging_dir_;
  const std::atomic<bool>* const cancel_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<format::ShardInfo> queue_;  // guarded by mu_; the front one is being uploaded
  std::vector<std::string> uploaded_;    // guarded by mu_
  Status error_;                         // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  std::thread thread_;
};

}  // namespace mmfs::pack
