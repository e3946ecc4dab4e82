#include "tools/view/resize_pipeline.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "fs/format/shard_reads.h"

namespace mmfs::view {

void ResizePipeline::Work(const Candidate& c, ResizeOutcome* out) const {
  if (c.small) return;  // nothing to read: the original serves
  auto e = dataset_.GetEntry(c.entry);
  if (!e.ok()) {
    out->read_error = e.status();
    return;
  }
  auto bytes = format::ReadVerified(origin_, dataset_, *e);
  if (!bytes.ok()) {
    out->read_error = bytes.status().WithContext("reading the original (run mmfs verify)");
    return;
  }
  ResizeRequest req;
  req.kind = c.kind;
  req.side = side_;
  req.quality = quality_;
  out->image = ResizeImage(std::string_view(bytes->data(), bytes->size()), req);
}

// Workers take candidates in order, at most `window` ahead of the commit; this thread commits
// them in order (shard writes and checkpoint lines are single-threaded).
Status ResizePipeline::Run(const std::vector<Candidate>& candidates, size_t first,
                           const CommitFn& commit) {
  const size_t n = candidates.size();
  const int jobs = std::max(1, jobs_);
  const size_t window = static_cast<size_t>(jobs) * 8;
  std::vector<ResizeOutcome> slots(window);
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  size_t next_claim = first;  // guarded by mu
  size_t committed = first;   // guarded by mu
  bool stop = false;          // guarded by mu
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || (next_claim < n && next_claim < committed + window); });
        if (stop) return;
        i = next_claim++;
      }
      ResizeOutcome out;
      Work(candidates[i], &out);
      out.ready = true;
      {
        std::lock_guard<std::mutex> lock(mu);
        slots[i % window] = std::move(out);
      }
      done_cv.notify_one();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  auto stop_all = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    work_cv.notify_all();
    for (auto& t : threads) t.join();
    threads.clear();
  };
  Status status;
  for (size_t i = first; i < n && status.ok(); ++i) {
    // Checked on every image, not only while waiting: workers may be ahead of the commit.
    if (Cancelled()) {
      status = Status::Cancelled("interrupted");
      break;
    }
    ResizeOutcome out;
    {
      std::unique_lock<std::mutex> lock(mu);
      while (!slots[i % window].ready) {
        if (Cancelled()) break;
        done_cv.wait_for(lock, std::chrono::milliseconds(100));
      }
      if (!slots[i % window].ready) {
        status = Status::Cancelled("interrupted");
        break;
      }
      out = std::move(slots[i % window]);
      slots[i % window] = ResizeOutcome{};
      committed = i + 1;
    }
    work_cv.notify_all();
    status = commit(i, out);
  }
  stop_all();
  return status;
}

}  // namespace mmfs::view
