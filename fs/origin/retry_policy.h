// RetryPolicy: when a remote origin tries a request again and how long it waits first.
//
// Timeouts, connection errors, 5xx and 429 are tried again, after an exponential backoff with
// full jitter (a uniform wait in [0, min(max_delay, initial_delay * 2^attempt)]) so that many
// readers behind one failing server do not retry in step; all tries of one request stay within
// `total` (then the request fails), or within the READ's deadline when the thread has one
// (read_deadline.h). A range that failed for good fails again at once for `failure_hold`
// (failed_ranges.h); nothing else is sticky: the next request starts afresh, so a server that
// went away and came back is served again.
//
// SendWithRetries is that loop for a request outside a mount's READs (a bucket's listing);
// HttpOrigin has its own, which also keeps to the READ's deadline, stops with the mount and
// counts what it does.
//
// Thread-safety: a value; Delay is a pure function of its arguments; SendWithRetries as the
// transport's Send.
#pragma once

#include <chrono>
#include <cstdint>

#include "fs/origin/http_transport.h"

namespace mmfs::origin {

struct RetryPolicy {
  std::chrono::milliseconds initial_delay{100};
  std::chrono::milliseconds max_delay{5000};
  // All tries of one request, waits included; the last wait is cut to what is left, and each
  // try may take at most what is left (at least min_try).
  std::chrono::milliseconds total{30000};
  // The least a try is given, even past a READ's deadline (read_deadline.h): a READ that waited
  // long for its turn still has its bytes asked for once.
  std::chrono::milliseconds min_try{1000};
  // How long the bytes of a read that failed for good fail again at once (failed_ranges.h),
  // at most `total`.
  std::chrono::milliseconds failure_hold{5000};

  // The wait before try `attempt` + 1 (attempt 0: the first retry), for a `random` value drawn
  // uniformly from all of uint64_t.
  std::chrono::milliseconds Delay(uint32_t attempt, uint64_t random) const;
};

// Whether `response` is worth another try: a transient transport failure, a 5xx or a 429.
bool IsRetryable(const HttpResponse& response);

// `request` sent through `transport`, and sent again while the answer IsRetryable and
// `policy.total` lasts, after Delay's wait (cut to what is left); each try is given what is left
// of the budget (at least min_try) as its timeout. The answer of the last try, whatever it is.
HttpResponse SendWithRetries(HttpTransport& transport, const HttpRequest& request,
                             const RetryPolicy& policy);

}  // namespace mmfs::origin
