#include "tools/mmfs/stats_client.h"

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "fs/names/fs_types.h"
#include "fs/stats/stats_parse.h"

namespace mmfs::cli {

namespace {
std::string PathOf(const std::string& mnt, const std::string& name) {
  return mnt + "/" + fs::kControlDirName + "/" + name;
}
}  // namespace

Result<std::string> ReadStatsText(const std::string& mnt, const std::string& name) {
  auto text = ReadWholeFile(PathOf(mnt, name), 64ull << 20);
  if (!text.ok()) {
    return Status::NotFound(mnt + " is not an mmfs mount, or its daemon is not answering (" +
                            text.status().message() + ")");
  }
  return text;
}

Result<fs::StatsSnapshot> ReadStatsSnapshot(const std::string& mnt, const std::string& name) {
  MMFS_ASSIGN_OR_RETURN(std::string text, ReadStatsText(mnt, name));
  const std::string path = PathOf(mnt, name);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::Corruption(path + ": not valid JSON");
  auto snapshot = fs::StatsFromJson(j);
  if (!snapshot.ok()) {
    return Status::Corruption(path + ": " + snapshot.status().message() +
                              " (is this mmfs older than the daemon?)");
  }
  return snapshot;
}

}  // namespace mmfs::cli
