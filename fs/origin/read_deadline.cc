#include "fs/origin/read_deadline.h"

#include <algorithm>

namespace mmfs::origin {
namespace {

struct ThreadReadContext {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* stop = nullptr;
};

thread_local ThreadReadContext t_context;

}  // namespace

ScopedReadDeadline::ScopedReadDeadline(std::chrono::steady_clock::time_point deadline,
                                       const std::atomic<bool>* stop)
    : saved_{t_context.deadline, t_context.stop} {
  t_context.deadline = t_context.deadline ? std::min(*t_context.deadline, deadline) : deadline;
  if (stop != nullptr) t_context.stop = stop;
}

ScopedReadDeadline::~ScopedReadDeadline() {
  t_context.deadline = saved_.deadline;
  t_context.stop = saved_.stop;
}

ScopedNoReadDeadline::ScopedNoReadDeadline() : saved_(t_context.deadline) {
  t_context.deadline.reset();
}

ScopedNoReadDeadline::~ScopedNoReadDeadline() { t_context.deadline = saved_; }

ScopedReadStop::ScopedReadStop(const std::atomic<bool>* stop) : saved_(t_context.stop) {
  t_context.stop = stop;
}

ScopedReadStop::~ScopedReadStop() { t_context.stop = saved_; }

std::optional<std::chrono::steady_clock::time_point> CurrentReadDeadline() {
  return t_context.deadline;
}

bool ReadsStopping() {
  return t_context.stop != nullptr && t_context.stop->load(std::memory_order_relaxed);
}

}  // namespace mmfs::origin
