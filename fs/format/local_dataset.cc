#include "fs/format/local_dataset.h"

namespace mmfs::format {

Result<LocalDataset> OpenLocalDataset(const std::string& dir) {
  LocalDataset out;
  MMFS_ASSIGN_OR_RETURN(out.dataset, Dataset::Open(dir));
  out.origin = std::make_unique<origin::LocalFileOrigin>(out.dataset->dir());
  MMFS_RETURN_IF_ERROR(out.origin->AddTree(origin::kDatasetTree, out.dataset->ShardTree()));
  return out;
}

}  // namespace mmfs::format
