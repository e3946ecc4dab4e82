#include "tools/mmfs/remote_dataset.h"

#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cache/cache_dir.h"
#include "base/file_util.h"
#include "fs/format/format.h"
#include "fs/format/local_dataset.h"
#include "fs/format/manifest.h"
#include "fs/origin/aws_config.h"
#include "fs/origin/s3_origin.h"

namespace mmfs::cli {
namespace {

// A manifest larger than this is not a manifest; an index is bounded by what the manifest says.
constexpr uint64_t kMaxManifestBytes = 64ull << 20;

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A file name the manifest gives for a file next to it: one plain path component.
bool PlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

Result<std::unique_ptr<origin::HttpOrigin>> NewOrigin(const std::string& url,
                                                      const RemoteFlags& flags) {
  origin::RemoteOptions options;
  options.endpoint = flags.endpoint;
  options.ca_file = flags.ca_file;
  // A test hook: each request's retry budget (RetryPolicy::total), in milliseconds, so that
  // tests see a persistent failure or a server that is down as EIO within seconds
  // (tests/origin/remote_mount_test.cc). Not an option: nobody else wants it.
  if (const char* ms = std::getenv("MMFS_TEST_REMOTE_RETRY_MS"); ms != nullptr) {
    options.retry.total = std::chrono::milliseconds(std::strtoull(ms, nullptr, 10));
  }
  if (origin::IsS3Url(url)) {
    MMFS_ASSIGN_OR_RETURN(origin::AwsSettings aws,
                          origin::LoadAwsSettings(origin::AwsSources::System()));
    return origin::NewS3Origin(url, aws, options);
  }
  if (!flags.endpoint.empty()) {
    return Status::InvalidArgument("--endpoint is for s3:// URLs; " + url + " names its server");
  }
  return origin::NewHttpOrigin(url, options);
}

}  // namespace

bool IsRemoteDataset(const std::string& where) {
  return origin::IsS3Url(where) || origin::IsHttpUrl(where);
}

std::string DefaultRemoteCacheDir() {
  if (::geteuid() == 0) return "/var/cache/mmfs";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mmfs";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/mmfs";
  return "/var/tmp/mmfs-" + std::to_string(::geteuid());
}

Result<OpenedDataset> OpenDatasetAt(const std::string& where, const RemoteFlags& flags) {
  OpenedDataset out;
  if (!IsRemoteDataset(where)) {
    MMFS_ASSIGN_OR_RETURN(format::LocalDataset local, format::OpenLocalDataset(where));
    out.local_dir = local.dataset->dir();
    out.dataset = std::move(local.dataset);
    out.origin = std::move(local.origin);
    return out;
  }
  MMFS_ASSIGN_OR_RETURN(std::unique_ptr<origin::HttpOrigin> remote, NewOrigin(where, flags));
  const std::string& base = remote->base_url();

  // The local copy's directory: CACHE/remote/<XXH3 of the base URL>.
  const std::string root = flags.cache_dir.empty() ? DefaultRemoteCacheDir() : flags.cache_dir;
  MMFS_ASSIGN_OR_RETURN(UniqueFd root_fd, cache::OpenCacheRootDir(root));
  MMFS_ASSIGN_OR_RETURN(UniqueFd remote_fd,
                        cache::OpenOwnSubdir(root_fd.get(), "remote", root + "/remote"));
  const std::string name = Hex64(XXH3_64bits(base.data(), base.size()));
  const std::string dir = root + "/remote/" + name;
  MMFS_ASSIGN_OR_RETURN(UniqueFd dir_fd, cache::OpenOwnSubdir(remote_fd.get(), name, dir));

  MMFS_ASSIGN_OR_RETURN(std::string manifest_text,
                        remote->FetchObject(format::kManifestFileName, kMaxManifestBytes));
  MMFS_ASSIGN_OR_RETURN(format::Manifest manifest,
                        format::Manifest::Parse(manifest_text, base + "/manifest.json"));
  if (!PlainName(manifest.index_file)) {
    return Status::Corruption(base + "/manifest.json: index file '" + manifest.index_file +
                              "' is not a plain file name");
  }
  const std::string index_path = dir + "/" + manifest.index_file;
  auto cached = HashFile(index_path);
  if (!cached.ok() || *cached != manifest.index_checksum) {
    MMFS_ASSIGN_OR_RETURN(std::string index,
                          remote->FetchObject(manifest.index_file, manifest.index_size));
    if (index.size() != manifest.index_size ||
        XXH3_64bits(index.data(), index.size()) != manifest.index_checksum) {
      return Status::Corruption(remote->UrlOf(manifest.index_file) +
                                ": checksum does not match the manifest");
    }
    MMFS_RETURN_IF_ERROR(WriteFileDurably(index_path, index));
  }
  // The manifest last: a copy whose manifest is there has the index it describes.
  MMFS_RETURN_IF_ERROR(WriteFileDurably(dir + "/" + format::kManifestFileName, manifest_text));

  MMFS_ASSIGN_OR_RETURN(out.dataset, format::Dataset::Open(dir));
  MMFS_RETURN_IF_ERROR(remote->AddTree(origin::kDatasetTree, out.dataset->ShardTree()));
  out.origin = std::move(remote);
  out.remote = true;
  out.local_dir = dir;
  return out;
}

}  // namespace mmfs::cli
