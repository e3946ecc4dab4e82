#include "tools/pack/folder_source.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "fs/format/format.h"

namespace mmfs::pack {

std::string_view SampleKeyOf(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos) return name;
  return name.substr(0, dot);
}

size_t SampleRunEnd(const std::vector<SourceNode>& siblings, size_t first) {
  auto is_regular = [](const SourceNode& n) {
    return (n.mode & format::kModeTypeMask) == format::kModeRegular;
  };
  std::string_view key = SampleKeyOf(siblings[first].name);
  size_t end = first + 1;
  while (end < siblings.size() && is_regular(siblings[end]) &&
         SampleKeyOf(siblings[end].name) == key) {
    ++end;
  }
  return end;
}

namespace {

bool IsInside(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

class FolderScanner {
 public:
  FolderScanner(std::string real_root, PackReporter& reporter, ScanCounts* counts)
      : real_root_(std::move(real_root)), reporter_(reporter), counts_(counts) {}

  // `reach`: the group and other read bits the folders down to `path` let through.
  Status ScanDir(const std::string& path, SourceNode* dir, uint32_t reach) {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return Status::FromErrno(errno, "open directory " + path);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* de = ::readdir(d)) {
      std::string name = de->d_name;
      if (name == "." || name == "..") continue;
      names.push_back(std::move(name));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return Status::FromErrno(err, "read directory " + path);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      std::string child_path = path + "/" + name;
      struct stat st;
      if (::lstat(child_path.c_str(), &st) != 0) {
        return Status::FromErrno(errno, "stat " + child_path);
      }
      SourceNode node;
      node.name = name;
      // Permission bits only: a dataset never holds setuid, setgid or sticky bits.
      node.mode = st.st_mode & 0777;
      node.mtime_ns = MtimeNs(st);
      if (S_ISDIR(st.st_mode)) {
        node.mode |= S_IFDIR;
        MMFS_RETURN_IF_ERROR(ScanDir(child_path, &node, reach & ((st.st_mode & 0011) << 2)));
      } else if (S_ISREG(st.st_mode)) {
        node.mode |= S_IFREG;
        if (counts_->access != nullptr) {
          counts_->access->AddFile(child_path, st.st_uid, st.st_gid, st.st_mode, reach);
        }
        node.size = static_cast<uint64_t>(st.st_size);
        node.source_path = child_path;
        counts_->files++;
        counts_->bytes += node.size;
      } else if (S_ISLNK(st.st_mode)) {
        if (!ResolveLink(child_path, &node)) {
          counts_->skipped++;
          continue;
        }
        node.mode = S_IFLNK | 0777;
      } else {
        reporter_.Warning("skipping " + child_path + ": " + KindName(st.st_mode) +
                          " (only files, directories and symlinks are packed)");
        counts_->skipped++;
        continue;
      }
      dir->children.push_back(std::move(node));
    }
    return Status::Ok();
  }

 private:
  static const char* KindName(mode_t mode) {
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "an unsupported file type";
  }

  // Keeps links whose resolution stays inside the source; returns false (with a warning) else.
  bool ResolveLink(const std::string& link_path, SourceNode* node) {
    char target[PATH_MAX + 1];
    ssize_t n = ::readlink(link_path.c_str(), target, PATH_MAX);
    if (n < 0) {
      reporter_.Warning("skipping symlink " + link_path + ": cannot read it");
      return false;
    }
    target[n] = '\0';
    char* resolved = ::realpath(link_path.c_str(), nullptr);
    if (resolved == nullptr) {
      reporter_.Warning("skipping symlink " + link_path + " -> " + target +
                        ": it does not resolve (dangling or a loop)");
      return false;
    }
    std::string real(resolved);
    std::free(resolved);
    if (!IsInside(real, real_root_)) {
      reporter_.Warning("skipping symlink " + link_path + " -> " + target +
                        ": it points outside the source folder");
      return false;
    }
    if (target[0] == '/') {
      // The absolute path would leave the mount; point at the same file relatively.
      std::filesystem::path parent = std::filesystem::path(link_path).parent_path();
      std::error_code ec;
      std::filesystem::path parent_real = std::filesystem::canonical(parent, ec);
      if (ec) {
        reporter_.Warning("skipping symlink " + link_path + ": cannot resolve its folder");
        return false;
      }
      std::filesystem::path relative = std::filesystem::path(real).lexically_relative(parent_real);
      if (relative.empty()) relative = ".";
      node->link_target = relative.string();
    } else {
      node->link_target = target;
    }
    return true;
  }

  std::string real_root_;
  PackReporter& reporter_;
  ScanCounts* counts_;
};

}  // namespace

Result<SourceNode> ScanFolder(const std::string& root, PackReporter& reporter,
                              ScanCounts* counts) {
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) return Status::FromErrno(errno, root);
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(root + " is not a directory");
  char* resolved = ::realpath(root.c_str(), nullptr);
  if (resolved == nullptr) return Status::FromErrno(errno, "resolve " + root);
  std::string real_root(resolved);
  std::free(resolved);
  SourceNode top;
  top.mode = S_IFDIR | (st.st_mode & 0777);
  top.mtime_ns = MtimeNs(st);
  FolderScanner scanner(real_root, reporter, counts);
  MMFS_RETURN_IF_ERROR(scanner.ScanDir(real_root, &top, FolderReach(real_root)));
  return top;
}

}  // namespace mmfs::pack
