// The retry policy of tests that exercise remote requests' retries: another try within
// milliseconds, given up after two seconds, so that a test of a failing server takes no longer
// than it must.
//
// Thread-safety: a pure function.
#pragma once

#include <chrono>

#include "fs/origin/retry_policy.h"

namespace mmfs::testing {

inline origin::RetryPolicy QuickRetries() {
  using namespace std::chrono_literals;
  origin::RetryPolicy p;
  p.initial_delay = 1ms;
  p.max_delay = 4ms;
  p.total = 2000ms;
  return p;
}

}  // namespace mmfs::testing
