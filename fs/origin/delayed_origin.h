// A slow origin: any origin, each read taking at least a fixed time longer. For tests and
// demonstrations of a remote disk (mmfs mount reads MMFS_TEST_ORIGIN_DELAY_US,
// tools/mmfs/cmd_mount.cc).
//
// Ownership: owns the origin it wraps.
// Thread-safety: as the wrapped origin (origin.h).
#pragma once

#include <cstdint>
#include <memory>

#include "fs/origin/origin.h"

namespace mmfs::origin {

// `inner`, each ReadSpan waiting `delay_us` microseconds first; every other call unchanged.
std::unique_ptr<Origin> NewDelayedOrigin(std::unique_ptr<Origin> inner, uint64_t delay_us);

}  // namespace mmfs::origin
