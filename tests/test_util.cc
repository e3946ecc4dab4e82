#include "tests/test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace mmfs::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/mmfs-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string MakeJpeg(int width, int height, unsigned seed) {
  std::vector<unsigned char> rgb(static_cast<size_t>(width) * height * 3);
  unsigned x = seed * 2654435761u + 1;
  for (auto& b : rgb) {
    x = x * 1103515245u + 12345u;
    b = static_cast<unsigned char>(x >> 16);
  }
  tjhandle tj = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, rgb.data(), width, 0, height, TJPF_RGB, &jpeg, &size, TJSAMP_420, 90, 0) !=
      0) {
    tjDestroy(tj);
    throw std::runtime_error("tjCompress2 failed");
  }
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(tj);
  return out;
}

CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_seconds) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(pipefd[1], STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  CommandResult result;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_seconds));
  bool killed = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
      result.output += "\n[test: command timed out and was killed]\n";
    }
    struct pollfd p = {pipefd[0], POLLIN, 0};
    int rc = ::poll(&p, 1, killed ? 1000 : static_cast<int>(std::min<long>(left, 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) {
      if (killed) break;
      continue;
    }
    char buf[4096];
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

CommandResult Shell(const std::string& command, double timeout_seconds) {
  return RunCommand({"/bin/sh", "-c", command}, timeout_seconds);
}

bool IsMountPoint(const std::string& path) {
  struct stat self, parent;
  if (::stat(path.c_str(), &self) != 0) return false;
  if (::stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev;
}

int CurrentThreadId() { return static_cast<int>(::gettid()); }

bool WaitUntilBlocked(int tid, double timeout_seconds) {
  std::string stat_path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  return WaitFor(
      [&] {
        std::ifstream in(stat_path);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        // "tid (comm) S ...": the state follows the last ')' (comm may hold spaces and parens).
        size_t paren = text.rfind(')');
        return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S';
      },
      timeout_seconds);
}

std::string MmfsBinary() { return MMFS_TEST_BINARY; }
std::string GenDatasetBinary() { return MMFS_TEST_GEN_BINARY; }

namespace {

// The trees GenDataset made in this process, by their arguments. Removed at exit by the process
// that made them only: a forked child that exits without exec must not take them away.
class GeneratedTrees {
 public:
  ~GeneratedTrees() {
    if (::getpid() != owner_) static_cast<void>(dir_.release());  // not ours to remove
  }
  // The tree for `args`, generating it on the first call; nullopt (and `failed`) if gen failed.
  std::optional<std::string> For(const std::vector<std::string>& args, double timeout_seconds,
                                 CommandResult* failed) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string key;
    for (const std::string& a : args) key += a + '\0';
    auto it = trees_.find(key);
    if (it != trees_.end()) return it->second;
    if (dir_ == nullptr) dir_ = std::make_unique<TempDir>();
    const std::string tree = dir_->path() + "/" + std::to_string(trees_.size());
    std::vector<std::string> argv = {GenDatasetBinary(), tree};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult gen = RunCommand(argv, timeout_seconds);
    if (gen.exit_code != 0) {
      *failed = std::move(gen);
      std::error_code ec;
      std::filesystem::remove_all(tree, ec);
      return std::nullopt;
    }
    trees_.emplace(key, tree);
    return tree;
  }

 private:
  std::mutex mu_;
  const pid_t owner_ = ::getpid();
  std::unique_ptr<TempDir> dir_;
  std::map<std::string, std::string> trees_;
};

}  // namespace

CommandResult GenDataset(const std::string& dir, const std::vector<std::string>& args,
                         double timeout_seconds) {
  static GeneratedTrees trees;
  CommandResult result;
  std::optional<std::string> tree = trees.For(args, timeout_seconds, &result);
  if (!tree) return result;
  std::error_code ec;
  std::filesystem::copy(*tree, dir, std::filesystem::copy_options::recursive, ec);
  if (ec) return {1, "copying the generated tree " + *tree + " to " + dir + ": " + ec.message()};
  return {0, ""};
}
std::string SourceDir() { return MMFS_TEST_SOURCE_DIR; }

uint64_t ProcStatusBytes(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  const std::string key = field + ":";
  for (std::string line; std::getline(in, line);) {
    // "VmRSS:\t   11220 kB": the kernel gives these in KiB.
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  }
  return 0;
}

}  // namespace mmfs::testing
