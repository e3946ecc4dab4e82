#include "tools/mmfs/remote_dataset.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "base/file_util.h"
#include "cache/cache_dir.h"
#include "fs/format/format.h"
#include "fs/format/local_dataset.h"
#include "fs/format/manifest.h"
#include "fs/format/view_manifest.h"
#include "fs/format/view_set.h"
#include "fs/origin/s3_origin.h"
#include "fs/origin/url.h"

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

// What a manifest says of its index: the file next to it, its size and checksum.
struct IndexRef {
  std::string manifest_text;
  std::string file;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

template <typename ManifestT>
Result<IndexRef> ParseIndexRef(const std::string& text, const std::string& name) {
  MMFS_ASSIGN_OR_RETURN(ManifestT m, ManifestT::Parse(text, name));
  if (!PlainName(m.index_file)) {
    return Status::Corruption(name + ": index file '" + m.index_file +
                              "' is not a plain file name");
  }
  return IndexRef{text, m.index_file, m.index_size, m.index_checksum};
}

// Fetches PREFIX + "manifest.json" and the index it names into `dir`: the index only when the
// copy there does not match the fetched manifest, and checked against it; the manifest last,
// so that a copy whose manifest is there has the index it describes.
// `*manifest_missing`: the server has no such manifest (NotFound is returned then).
Status CopyIndexed(origin::HttpOrigin& remote, const std::string& prefix, const std::string& dir,
                   const std::function<Result<IndexRef>(const std::string&)>& parse,
                   bool* manifest_missing) {
  auto fetched = remote.FetchObject(prefix + format::kManifestFileName, kMaxManifestBytes);
  *manifest_missing = fetched.status().code() == StatusCode::kNotFound;
  MMFS_ASSIGN_OR_RETURN(std::string text, std::move(fetched));
  MMFS_ASSIGN_OR_RETURN(IndexRef ref, parse(text));
  const std::string index_path = dir + "/" + ref.file;
  auto cached = HashFile(index_path);
  if (!cached.ok() || *cached != ref.checksum) {
    MMFS_ASSIGN_OR_RETURN(std::string index, remote.FetchObject(prefix + ref.file, ref.size));
    if (index.size() != ref.size || XXH3_64bits(index.data(), index.size()) != ref.checksum) {
      return Status::Corruption(remote.UrlOf(prefix + ref.file) +
                                ": checksum does not match the manifest");
    }
    MMFS_RETURN_IF_ERROR(WriteFileDurably(index_path, index));
  }
  return WriteFileDurably(dir + "/" + format::kManifestFileName, ref.manifest_text);
}

// Removes the manifest of every view copy in `views_fd` (the copy's views/) whose side is not in
// `keep`, so that it is not a view any more. Only manifests the copy wrote, by their name in a
// folder named as a view: nothing else is touched.
void ForgetViewsBut(int views_fd, const std::vector<uint32_t>& keep) {
  int fd = ::dup(views_fd);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (dirent* e = ::readdir(d)) {
    uint32_t side = 0;
    if (!format::ParseViewSide(e->d_name, &side)) continue;
    if (std::find(keep.begin(), keep.end(), side) != keep.end()) continue;
    const int side_fd = ::openat(views_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (side_fd < 0) continue;
    ::unlinkat(side_fd, format::kManifestFileName, 0);
    ::close(side_fd);
  }
  ::closedir(d);
}

}  // namespace

bool IsRemoteDataset(const std::string& where) {
  return origin::IsS3Url(where) || origin::IsHttpUrl(where);
}

std::string DefaultRemoteCacheDir() {
  // Root of a user namespace (a rootless container) cannot write where the host's root can.
  if (::geteuid() == 0 && !cache::InUserNamespace()) return "/var/cache/mmfs";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mmfs";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/mmfs";
  return "/var/tmp/mmfs-" + std::to_string(::geteuid());
}

Result<OpenedDataset> OpenDatasetAt(const std::string& given, const RemoteFlags& flags) {
  OpenedDataset out;
  MMFS_ASSIGN_OR_RETURN(const std::string where, origin::DatasetLocation(given));
  if (!IsRemoteDataset(where)) {
    // Said, not ignored: the user believes the dataset is read from a store, or checked.
    if (!flags.endpoint.empty() || !flags.ca_file.empty()) {
      return Status::InvalidArgument(
          std::string(flags.endpoint.empty() ? "--ca-file" : "--endpoint") +
          " does not apply: " + where + " is a local dataset, not an s3:// or https:// URL");
    }
    MMFS_ASSIGN_OR_RETURN(format::LocalDataset local, format::OpenLocalDataset(where));
    out.local_dir = local.dataset->dir();
    out.dataset = std::move(local.dataset);
    out.origin = std::move(local.origin);
    return out;
  }
  origin::RemoteOptions options;
  options.endpoint = flags.endpoint;
  options.ca_file = flags.ca_file;
  MMFS_ASSIGN_OR_RETURN(std::unique_ptr<origin::HttpOrigin> remote,
                        origin::OpenUrlOrigin(where, std::move(options)));
  const std::string& base = remote->base_url();

  // The local copy's directory: CACHE/remote/<XXH3 of the base URL>.
  const std::string root = flags.cache_dir.empty() ? DefaultRemoteCacheDir() : flags.cache_dir;
  MMFS_ASSIGN_OR_RETURN(UniqueFd root_fd, cache::OpenCacheRootDir(root));
  MMFS_ASSIGN_OR_RETURN(UniqueFd remote_fd,
                        cache::OpenOwnSubdir(root_fd.get(), "remote", root + "/remote"));
  const std::string name = Hex64(XXH3_64bits(base.data(), base.size()));
  const std::string dir = root + "/remote/" + name;
  MMFS_ASSIGN_OR_RETURN(UniqueFd dir_fd, cache::OpenOwnSubdir(remote_fd.get(), name, dir));

  // One refresh of the copy at a time; the lock goes with dir_fd, when the dataset is open.
  while (::flock(dir_fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return Status::FromErrno(errno, dir + ": cannot lock it");
  }

  bool missing = false;
  MMFS_RETURN_IF_ERROR(CopyIndexed(*remote, "", dir, [&](const std::string& text) {
    return ParseIndexRef<format::Manifest>(text, base + "/manifest.json");
  }, &missing));
  {
    MMFS_ASSIGN_OR_RETURN(UniqueFd views_fd, cache::OpenOwnSubdir(dir_fd.get(), "views",
                                                                  dir + "/views"));
    // The copy holds the views asked for this time only: one copied by an earlier mount may
    // be stale, and the dataset would serve every view it finds here.
    ForgetViewsBut(views_fd.get(), flags.views);
    for (uint32_t side : flags.views) {
      const std::string place = "views/" + std::to_string(side);
      MMFS_ASSIGN_OR_RETURN(UniqueFd side_fd, cache::OpenOwnSubdir(views_fd.get(),
                                                                   std::to_string(side),
                                                                   dir + "/" + place));
      Status copied = CopyIndexed(*remote, place + "/", dir + "/" + place,
                                  [&](const std::string& text) {
        return ParseIndexRef<format::ViewManifest>(text, base + "/" + place + "/manifest.json");
      }, &missing);
      // A view the server does not have is left for the mount to name ("no such view").
      if (missing) continue;
      MMFS_RETURN_IF_ERROR(copied);
    }
  }

  MMFS_ASSIGN_OR_RETURN(out.dataset, format::Dataset::Open(dir));
  MMFS_RETURN_IF_ERROR(remote->AddTree(origin::kDatasetTree, out.dataset->ShardTree()));
  out.remote_origin = remote.get();
  out.origin = std::move(remote);
  out.remote = true;
  out.local_dir = dir;
  return out;
}

}  // namespace mmfs::cli
