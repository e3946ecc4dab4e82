// Transport: how FUSE requests reach the daemon, chosen once at mount.
//
//   classic  the kernel queues requests on /dev/fuse; libfuse's worker threads read them (one
//            read, one wake-up and one write per request).
//   io_uring FUSE over io_uring (Linux 6.14+, libfuse 3.18+): one ring per CPU; requests and
//            replies pass through shared buffers, and a ring thread takes a request and commits
//            the previous reply in one system call. A handler runs on its CPU's ring thread and
//            replies there: libfuse 3.18.3 accepts replies from other threads but submits them
//            to the ring without its ring thread's lock, and under 64 readers the ring's
//            bookkeeping broke and a lock was left held (a permanent hang). So a READ that
//            waits on the origin holds up that CPU's requests.
//
// `-o transport=auto` (the default) takes the ring when both this build's libfuse and the
// kernel offer it (the kernel does once root writes Y to its enable_uring parameter) and the
// dataset is local, else classic: from a URL a READ may wait on the network for tens of ms, or
// for a failing store's whole retry budget, and on the ring that would stall every reader on
// its CPU, cache hits included; over /dev/fuse such READs are answered from miss threads and
// hits never wait behind them. So `uring` is refused for a URL, as it is when the library or
// the kernel lacks the ring; `classic` never uses the ring.
//
// Thread-safety: pure functions, except ReadKernelRingOffer, which reads one sysfs file.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::fs {

enum class Transport { kAuto, kUring, kClassic };

// "auto", "uring" or "classic"; InvalidArgument naming the accepted words otherwise.
Result<Transport> ParseTransport(std::string_view word);

// The libfuse this binary was linked with can serve over io_uring.
constexpr bool kLibraryHasRing = FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18);

// Whether the kernel offers FUSE over io_uring to new mounts.
struct KernelRingOffer {
  bool offered = false;
  std::string why_not;  // when not offered: what the parameter says, or that it is missing
};
inline constexpr const char* kEnableUringPath = "/sys/module/fuse/parameters/enable_uring";
KernelRingOffer ReadKernelRingOffer(const std::string& path = kEnableUringPath);

struct TransportChoice {
  bool ring = false;
  std::string why;  // one line for the log and `mmfs stats`
};

// What a mount asked for `asked` gets, given the library, the kernel and whether the dataset is
// served from a URL; InvalidArgument with the reason when `uring` was asked and cannot be had.
Result<TransportChoice> ChooseTransport(Transport asked, bool library_has_ring,
                                        const KernelRingOffer& kernel, bool remote_origin = false);

}  // namespace mmfs::fs
