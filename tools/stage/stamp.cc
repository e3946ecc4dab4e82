#include "tools/stage/stamp.h"

#include <ctime>

namespace mmfs::stage {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ToolName() { return "mmfs " MMFS_VERSION; }

}  // namespace mmfs::stage
