#include "tools/stage/interrupt.h"

#include <signal.h>

namespace mmfs::stage {

namespace {

// Lock-free, so setting it is safe in a signal handler.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnInterrupt(int) { g_interrupted.store(true); }

}  // namespace

const std::atomic<bool>* CatchInterrupts() {
  g_interrupted.store(false);
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &g_interrupted;
}

}  // namespace mmfs::stage
