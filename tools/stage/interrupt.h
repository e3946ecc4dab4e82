// Ctrl-C and SIGTERM during a build (`mmfs pack`, `mmfs view add`): the handler only sets a flag,
// which the build polls between pieces of work (PackOptions::cancel, ViewOptions::cancel). The
// build then stops where its checkpoint says what is finished, and the command reports whether
// the staged build was kept for --resume (tools/stage/staging.h). A second signal does the same
// as the first.
//
// Ownership: the flag is process-wide and lives as long as the process.
// Thread-safety: CatchInterrupts is called from the command's thread before the build starts;
// the flag may be read from any thread.
#pragma once

#include <atomic>

namespace mmfs::stage {

// Installs the handler for SIGINT and SIGTERM and returns the flag it sets, cleared: each build
// starts uninterrupted (the views `mmfs pack --view N` builds after the pack as well).
const std::atomic<bool>* CatchInterrupts();

}  // namespace mmfs::stage
