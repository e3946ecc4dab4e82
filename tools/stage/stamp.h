// What a manifest records about its own making, the same for every writer (manifest.json of a
// dataset, of a view): when, in UTC, and by which mmfs.
//
// Thread-safety: pure functions (gmtime_r).
#pragma once

#include <string>

namespace mmfs::stage {

// Now, UTC, ISO 8601 to the second: "2024-05-01T12:00:00Z" (the manifests' `created`).
std::string UtcNow();

// "mmfs 0.1.0": this program and its version (the manifests' `tool`).
std::string ToolName();

}  // namespace mmfs::stage
