// A dataset on a local filesystem opened whole, as the tools and the mount need it: its manifest
// and index (Dataset) and its shards, tree 0 of a LocalFileOrigin rooted at the dataset's
// directory. Opening fails as a dataset with a missing, truncated, linked or foreign shard
// always did: the origin checks each shard when the tree is added.
//
// Ownership: the caller owns both; the origin does not refer to the dataset.
// Thread-safety: a reentrant function.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/origin/local_file_origin.h"

namespace mmfs::format {

struct LocalDataset {
  std::unique_ptr<Dataset> dataset;
  std::unique_ptr<origin::LocalFileOrigin> origin;  // the dataset's shards as kDatasetTree
};

// Opens the dataset directory `dir` and its shards (Dataset::Open, then the shards' checks).
Result<LocalDataset> OpenLocalDataset(const std::string& dir);

}  // namespace mmfs::format
