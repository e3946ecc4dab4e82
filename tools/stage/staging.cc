#include "tools/stage/staging.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/file_util.h"
#include "tools/stage/checkpoint_file.h"

namespace mmfs::stage {

namespace fsys = std::filesystem;

namespace {

constexpr std::string_view kPartialMark = ".partial-";

}  // namespace

bool ParseStagingName(std::string_view file_name, std::string* name, long* pid) {
  if (file_name.size() < 2 || file_name[0] != '.') return false;
  size_t mark = file_name.rfind(kPartialMark);
  if (mark == std::string_view::npos || mark < 2) return false;  // NAME is not empty
  std::string digits(file_name.substr(mark + kPartialMark.size()));
  if (digits.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(digits.c_str(), &end, 10);
  if (*end != '\0' || v <= 0) return false;
  *name = std::string(file_name.substr(1, mark - 1));
  *pid = v;
  return true;
}

bool ProcessGone(long pid) {
  return pid == ::getpid() || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
}

Staging::Staging(std::string parent, std::string name)
    : parent_(std::move(parent)), name_(std::move(name)) {
  // Appended, not "." + ...: GCC 12 -O3 reports a false -Wrestrict in operator+(const char*,
  // string&&).
  std::string staged = ".";
  staged += name_;
  staged += kPartialMark;
  staged += std::to_string(::getpid());
  dir_ = (fsys::path(parent_) / staged).string();
  final_path_ = (fsys::path(parent_) / name_).string();
}

void Staging::ForEachStale(const std::function<void(const std::string& dir)>& fn) const {
  std::vector<std::string> stale;
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(parent_, ec)) {
    std::string name;
    long pid = 0;
    if (ParseStagingName(e.path().filename().string(), &name, &pid) && name == name_ &&
        ProcessGone(pid)) {
      stale.push_back(e.path().string());
    }
  }
  for (const std::string& dir : stale) fn(dir);
}

std::string Staging::FindResumable() const {
  std::string best;
  fsys::file_time_type best_time;
  ForEachStale([&](const std::string& dir) {
    std::error_code ec;
    fsys::path cp = fsys::path(dir) / kCheckpointFileName;
    if (!fsys::exists(cp, ec)) return;
    auto t = fsys::last_write_time(cp, ec);
    if (best.empty() || t > best_time) {
      best = dir;
      best_time = t;
    }
  });
  return best;
}

Result<bool> Staging::Begin(bool resume, mode_t mode, const Notes& notes) const {
  bool resumed = false;
  if (resume) {
    std::string found = FindResumable();
    if (found.empty()) {
      if (notes.nothing_to_resume) notes.nothing_to_resume();
    } else if (found != dir_ && ::rename(found.c_str(), dir_.c_str()) != 0) {
      return Status::FromErrno(errno, "take over " + found);
    } else {
      resumed = true;
    }
  }
  ForEachStale([&](const std::string& dir) {
    if (resumed && dir == dir_) return;
    if (notes.removing) notes.removing(dir);
    std::error_code ec;
    fsys::remove_all(dir, ec);
  });
  if (!resumed) {
    if (::mkdir(dir_.c_str(), mode) != 0) return Status::FromErrno(errno, "mkdir " + dir_);
    return false;
  }
  // Narrowed, never widened: a directory made under a stricter umask stays as strict.
  struct stat st;
  if (::stat(dir_.c_str(), &st) == 0) (void)::chmod(dir_.c_str(), st.st_mode & mode & 07777);
  return true;
}

void Staging::Discard() const {
  std::error_code ec;
  fsys::remove_all(dir_, ec);
}

Status Staging::Publish(bool replace, std::string_view failure) const {
  std::string old;
  if (replace) {
    std::string aside = ".";  // appended, see the constructor
    aside += name_;
    aside += ".old-";
    aside += std::to_string(::getpid());
    old = (fsys::path(parent_) / aside).string();
    if (::rename(final_path_.c_str(), old.c_str()) != 0) {
      Status s = Status::FromErrno(errno, "rename " + final_path_);
      Discard();
      return s;
    }
  }
  if (::rename(dir_.c_str(), final_path_.c_str()) != 0) {
    Status s = Status::FromErrno(errno, failure);
    if (!old.empty()) (void)::rename(old.c_str(), final_path_.c_str());
    Discard();
    return s;
  }
  if (!old.empty()) {
    std::error_code ec;
    fsys::remove_all(old, ec);
  }
  return FsyncPath(parent_);
}

}  // namespace mmfs::stage
