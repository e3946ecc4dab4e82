#include "tools/pack/sample_pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "base/file_util.h"
#include "base/units.h"

namespace mmfs::pack {

namespace {

// Files up to this size are read whole before their signature is checked.
constexpr uint64_t kReadWholeFirstBelow = 4ull << 20;
static_assert(kReadWholeFirstBelow >= kImageStartBytes);

Result<ImageInfo> CheckImage(const std::string& name, std::string_view bytes) {
  thread_local JpegChecker jpeg;
  return HasJpegExtension(name)   ? jpeg.Check(bytes)
         : HasPngExtension(name)  ? CheckPng(bytes)
         : HasWebpExtension(name) ? CheckWebp(bytes)
                                  : Result<ImageInfo>(ImageInfo{});
}

// Reads `f` from disk, or decides from its first bytes that it is a bad image (*bad set, the
// contents left empty). The file is opened without following a link (it was a file at the scan)
// and its size is checked against the scan and `limits` before anything is read.
Status ReadMember(const SourceNode& f, const ReadLimits& limits, std::string* contents,
                  Status* bad) {
  const std::string& path = f.source_path;
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": no longer a regular file (it changed while packing)");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size != f.size) {
    return Status::InvalidArgument(path + ": changed size while packing (" +
                                   std::to_string(f.size) + " -> " + std::to_string(size) +
                                   " bytes)");
  }
  // The header first: a large file that is not the image its name says is refused unread. A
  // small one is read whole at once (one read, not two); the whole file's check starts with the
  // same signature test and gives the same error.
  if (size > kReadWholeFirstBelow) {
    char head[kImageStartBytes];
    MMFS_RETURN_IF_ERROR(PreadFull(fd.get(), head, sizeof head, 0, path));
    Status start = CheckImageStart(f.name, std::string_view(head, sizeof head));
    if (!start.ok() && !limits.keep_bad_images) {
      *bad = start;
      return Status::Ok();
    }
  }
  if (size > limits.max_file_bytes) {
    return Status::InvalidArgument(
        path + ": " + FormatBytes(size) + ", over the limit of " +
        FormatBytes(limits.max_file_bytes) + " for one file (mmfs pack holds a file in memory to " +
        "check and checksum it, and mmfs serves a file from memory); leave it out of the source");
  }
  contents->resize(static_cast<size_t>(size));
  MMFS_RETURN_IF_ERROR(PreadFull(fd.get(), contents->data(), contents->size(), 0, path));
  char extra;
  ssize_t more = ::pread(fd.get(), &extra, 1, static_cast<off_t>(size));
  if (more > 0) {
    return Status::InvalidArgument(path + ": grew while packing (past " + std::to_string(size) +
                                   " bytes)");
  }
  return Status::Ok();
}

}  // namespace

void CheckAndHash(PreparedSample& p) {
  for (size_t j = 0; j < p.members.size(); ++j) {
    const std::string& bytes = p.contents[j];
    p.images.push_back(CheckImage(p.members[j]->name, bytes));
    p.sums.push_back(XXH3_64bits(bytes.data(), bytes.size()));
  }
}

PreparedSample PrepareFromFiles(std::vector<SourceNode*> members, const ReadLimits& limits) {
  PreparedSample p;
  p.members = std::move(members);
  for (SourceNode* f : p.members) {
    std::string bytes;
    Status bad;
    if (f->has_inline_data) {
      bytes = f->inline_data;
    } else {
      Status read = ReadMember(*f, limits, &bytes, &bad);
      if (!read.ok()) {
        p.error = read;
        return p;
      }
    }
    if (!bad.ok()) {
      p.images.push_back(bad);  // refused from its first bytes; its contents are never used
      p.sums.push_back(0);
    } else {
      p.images.push_back(CheckImage(f->name, bytes));
      p.sums.push_back(XXH3_64bits(bytes.data(), bytes.size()));
    }
    p.contents.push_back(std::move(bytes));
  }
  return p;
}

SamplePipeline::SamplePipeline(int jobs, Commit commit) : commit_(std::move(commit)) {
  for (int i = 1; i < jobs; ++i) threads_.emplace_back([this] { Loop(); });
  window_ = static_cast<size_t>(std::max(1, jobs)) * 4;
  window_bytes_ = static_cast<uint64_t>(std::max(1, jobs)) * kBytesInFlightPerJob;
}

void SamplePipeline::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

Status SamplePipeline::Submit(std::function<PreparedSample()> prepare, uint64_t bytes) {
  if (threads_.empty()) {
    PreparedSample p = prepare();
    return commit_(p);
  }
  // Room for this sample's bytes first (one sample alone may be larger than the window).
  while (!pending_.empty() && pending_bytes_ + bytes > window_bytes_) {
    MMFS_RETURN_IF_ERROR(CommitFront());
  }
  std::packaged_task<PreparedSample()> task(std::move(prepare));
  pending_.push_back(task.get_future());
  pending_sizes_.push_back(bytes);
  pending_bytes_ += bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  while (pending_.size() >= window_) MMFS_RETURN_IF_ERROR(CommitFront());
  return Status::Ok();
}

Status SamplePipeline::Finish() {
  while (!pending_.empty()) MMFS_RETURN_IF_ERROR(CommitFront());
  return Status::Ok();
}

Status SamplePipeline::CommitFront() {
  PreparedSample p = pending_.front().get();
  pending_.pop_front();
  pending_bytes_ -= pending_sizes_.front();
  pending_sizes_.pop_front();
  return commit_(p);
}

void SamplePipeline::Loop() {
  for (;;) {
    std::packaged_task<PreparedSample()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace mmfs::pack
