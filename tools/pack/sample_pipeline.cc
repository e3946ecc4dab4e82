#include "tools/pack/sample_pipeline.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdint>

#include "fs/base/file_util.h"

namespace mmfs::pack {

void CheckAndHash(PreparedSample& p) {
  thread_local JpegChecker jpeg;
  for (size_t j = 0; j < p.members.size(); ++j) {
    const std::string& bytes = p.contents[j];
    const std::string& name = p.members[j]->name;
    p.images.push_back(HasJpegExtension(name)   ? jpeg.Check(bytes)
                       : HasPngExtension(name)  ? CheckPng(bytes)
                       : HasWebpExtension(name) ? CheckWebp(bytes)
                                                : Result<ImageInfo>(ImageInfo{}));
    p.sums.push_back(XXH3_64bits(bytes.data(), bytes.size()));
  }
}

PreparedSample PrepareFromFiles(std::vector<SourceNode*> members) {
  PreparedSample p;
  p.members = std::move(members);
  for (SourceNode* f : p.members) {
    if (f->has_inline_data) {
      p.contents.push_back(f->inline_data);
      continue;
    }
    auto bytes = ReadWholeFile(f->source_path, UINT64_MAX);
    if (!bytes.ok()) {
      p.error = bytes.status();
      return p;
    }
    if (bytes->size() != f->size) {
      p.error = Status::InvalidArgument(f->source_path + ": changed size while packing (" +
                                        std::to_string(f->size) + " -> " +
                                        std::to_string(bytes->size()) + " bytes)");
      return p;
    }
    p.contents.push_back(std::move(bytes).value());
  }
  CheckAndHash(p);
  return p;
}

SamplePipeline::SamplePipeline(int jobs, Commit commit) : commit_(std::move(commit)) {
  for (int i = 1; i < jobs; ++i) threads_.emplace_back([this] { Loop(); });
  window_ = static_cast<size_t>(std::max(1, jobs)) * 4;
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

Status SamplePipeline::Submit(std::function<PreparedSample()> prepare) {
  if (threads_.empty()) {
    PreparedSample p = prepare();
    return commit_(p);
  }
  std::packaged_task<PreparedSample()> task(std::move(prepare));
  pending_.push_back(task.get_future());
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
