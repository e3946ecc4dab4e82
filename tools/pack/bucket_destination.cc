#include "tools/pack/bucket_destination.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "base/file_util.h"

namespace mmfs::pack {

Result<std::string> DefaultStagingDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mmfs/pack-staging";
  std::string home;
  if (const char* env = std::getenv("HOME"); env != nullptr && env[0] == '/') {
    home = env;
  } else {
    struct passwd pw;
    struct passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwuid_r(::getuid(), &pw, buffer.data(), buffer.size(), &found) == 0 &&
        found != nullptr && pw.pw_dir != nullptr && pw.pw_dir[0] == '/') {
      home = pw.pw_dir;
    }
  }
  if (home.empty() || home == "/") {
    return Status::InvalidArgument("no home directory to stage shards in; give --staging-dir");
  }
  return home + "/.cache/mmfs/pack-staging";
}

origin::ObjectMetadata ShardMetadata(const format::ShardInfo& info) {
  // The size is the object's own (Content-Length): only the checksum needs saying.
  return {{"mmfs-xxh3", HexU64(info.checksum)}};
}

Result<bool> ShardIsInBucket(origin::S3Uploader& uploader, const format::ShardInfo& info) {
  MMFS_ASSIGN_OR_RETURN(std::optional<origin::RemoteObject> object, uploader.Head(info.file));
  if (!object) return false;
  const origin::RemoteObject& o = *object;
  return o.size == info.size && o.Metadata("mmfs-xxh3") == HexU64(info.checksum);
}

ShardUploader::ShardUploader(origin::S3Uploader& uploader, std::string staging_dir,
                             const std::atomic<bool>* cancel)
    : uploader_(uploader),
      staging_dir_(std::move(staging_dir)),
      cancel_(cancel),
      thread_([this] { Run(); }) {}

bool ShardUploader::WaitUnlessCancelled(std::unique_lock<std::mutex>& lock,
                                        const std::function<bool()>& done) {
  // The interrupt flag has no way to wake this wait: it is looked at every 100 ms.
  while (!done()) {
    if (cancel_ != nullptr && cancel_->load()) return false;
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return true;
}

void ShardUploader::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (!thread_.joinable()) return;
  uploader_.set_cancelled(true);
  thread_.join();
  uploader_.set_cancelled(false);  // the pack may still remove what it uploaded
}

Status ShardUploader::Add(const format::ShardInfo& info) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool waited = WaitUnlessCancelled(lock, [&] {
    return stopping_ || !error_.ok() || queue_.size() < static_cast<size_t>(kMaxStagedShards - 1);
  });
  if (!waited) return Status::Cancelled("interrupted while shards were uploaded");
  if (!error_.ok()) return error_;
  if (stopping_) return Status::Cancelled("the uploads were stopped");
  queue_.push_back(info);
  changed_.notify_all();
  return Status::Ok();
}

Status ShardUploader::Finish() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!WaitUnlessCancelled(lock, [&] { return stopping_ || !error_.ok() || queue_.empty(); })) {
    return Status::Cancelled("interrupted while the last shards were uploaded");
  }
  if (error_.ok() && !queue_.empty()) return Status::Cancelled("the uploads were stopped");
  return error_;
}

std::vector<std::string> ShardUploader::uploaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return uploaded_;
}

void ShardUploader::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || (!queue_.empty() && error_.ok()); });
    if (stopping_) return;
    const format::ShardInfo info = queue_.front();
    lock.unlock();
    const std::string path = staging_dir_ + "/" + info.file;
    Status status = uploader_.PutFile(info.file, path, ShardMetadata(info));
    const bool put = status.ok();
    // Uploaded: the local copy is not needed again (a resume checks the bucket's).
    if (put && ::unlink(path.c_str()) != 0) {
      status = Status::FromErrno(errno, "removing the uploaded " + path);
    }
    lock.lock();
    if (put) uploaded_.push_back(info.file);
    if (status.ok()) {
      queue_.pop_front();
    } else {
      error_ = status;
    }
    changed_.notify_all();
  }
}

}  // namespace mmfs::pack
