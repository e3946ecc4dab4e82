#include "fs/origin/retry_policy.h"

#include <algorithm>

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

}  // namespace mmfs::origin
