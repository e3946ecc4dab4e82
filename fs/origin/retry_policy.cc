#include "fs/origin/retry_policy.h"

#include <algorithm>
#include <random>
#include <thread>

namespace mmfs::origin {

std::chrono::milliseconds RetryPolicy::Delay(uint32_t attempt, uint64_t random) const {
  const int64_t initial = std::max<int64_t>(initial_delay.count(), 0);
  const int64_t cap = std::max<int64_t>(max_delay.count(), 0);
  int64_t ceiling = initial;
  for (uint32_t i = 0; i < attempt && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, cap);
  if (ceiling <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(
      static_cast<int64_t>(random % (static_cast<uint64_t>(ceiling) + 1)));
}

bool IsRetryable(const HttpResponse& response) {
  switch (response.failure) {
    case TransportFailure::kTransient:
      return true;
    case TransportFailure::kPermanent:
      return false;
    case TransportFailure::kNone:
      break;
  }
  return response.status == 429 || (response.status >= 500 && response.status <= 599);
}

HttpResponse SendWithRetries(HttpTransport& transport, const HttpRequest& asked,
                             const RetryPolicy& policy) {
  using Clock = std::chrono::steady_clock;
  // Each thread draws its own jitter: many clients behind one failing store must not retry in
  // step.
  thread_local std::mt19937_64 rng(std::random_device{}());
  const Clock::time_point deadline = Clock::now() + policy.total;
  HttpRequest request = asked;
  for (uint32_t attempt = 0;; ++attempt) {
    const Clock::time_point start = Clock::now();
    request.timeout = std::max(
        policy.min_try, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start));
    if (asked.timeout.count() > 0) request.timeout = std::min(request.timeout, asked.timeout);
    HttpResponse response = transport.Send(request);
    if (!IsRetryable(response)) return response;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return response;
    auto wait = std::chrono::duration_cast<Clock::duration>(policy.Delay(attempt, rng()));
    if (wait > deadline - now) wait = deadline - now;
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace mmfs::origin
