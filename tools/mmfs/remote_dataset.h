// Opening a dataset by its path or by its URL, for mount, info and verify.
//
// A local directory opens as it always did (format::OpenLocalDataset). An http://, https:// or
// s3:// URL names a dataset's directory on a server: its manifest and index are fetched into
// a cache directory (--cache-dir, else $XDG_CACHE_HOME/mmfs, ~/.cache/mmfs, or /var/cache/mmfs
// for root; walked and created as cache/cache_dir.h does, then remote/<hash of the URL>/),
// checked against the manifest's checksum, and kept: on the next open, an index whose checksum
// still matches the freshly fetched manifest is not fetched again. The same for the views asked
// for (RemoteFlags::views): views/N/manifest.json and its index into the copy's views/N/; a view
// copied earlier but not asked for now loses its manifest (it may be stale). format::Dataset
// then opens the local copy, and the remote origin (origin::OpenUrlOrigin: an HttpOrigin, signed
// for S3) serves the shards, checked as they are added (size, magic, ETag pinned).
//
// Ownership: the caller owns what is returned.
// Thread-safety: a reentrant function. Two processes opening one URL's copy at once (a mount
// and `mmfs info`) take turns: the copy's directory is locked (flock) while it is refreshed and
// opened.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/origin/http_origin.h"
#include "fs/origin/origin.h"

namespace mmfs::cli {

struct RemoteFlags {
  std::string cache_dir;  // empty: DefaultRemoteCacheDir()
  std::string endpoint;   // S3: the store's URL (else AWS_ENDPOINT_URL, else AWS's)
  std::string ca_file;    // TLS: trust this CA file instead of the system's CAs
  // Views whose manifest and index are copied too (views/N/), so that the dataset's ViewSet
  // finds them in the copy; a view the server lacks is left out.
  std::vector<uint32_t> views;
};

struct OpenedDataset {
  std::unique_ptr<format::Dataset> dataset;
  std::unique_ptr<origin::Origin> origin;  // the dataset's shards as kDatasetTree
  origin::HttpOrigin* remote_origin = nullptr;  // `origin`, when it is remote
  bool remote = false;
  // Where the index and the manifest are: the dataset's directory, or the copy of a remote one.
  std::string local_dir;
};

// Whether `where` is a URL (http://, https://, s3://) rather than a path. REQUIRES: `where` as
// origin::DatasetLocation gives it (its scheme lower-cased; other schemes refused).
bool IsRemoteDataset(const std::string& where);
// The cache directory for remote datasets when --cache-dir is not given: /var/cache/mmfs for
// root (not the root of a user namespace), else under XDG_CACHE_HOME or HOME, else /var/tmp.
std::string DefaultRemoteCacheDir();

// The dataset at `where`, a path or a URL (origin::DatasetLocation: the scheme in any case;
// another scheme is refused, naming it). `flags.endpoint` or `flags.ca_file` given for a local
// dataset is an error: they do not apply, and would otherwise be silently ignored.
Result<OpenedDataset> OpenDatasetAt(const std::string& where, const RemoteFlags& flags);

}  // namespace mmfs::cli
