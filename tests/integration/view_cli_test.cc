// Views through the real CLI (no mount): `mmfs pack --view`, `mmfs view add/ls/rm`, `mmfs verify`
// on a damaged view, and a `view add` killed with SIGKILL then resumed, checked byte for byte
// against an uninterrupted build.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fs/format/view_format.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

// A child process that is killed and reaped when this goes away, so that a failing assertion
// leaves nothing running.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    std::vector<std::string> copy = argv;
    std::vector<char*> cargv;
    for (std::string& a : copy) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      int devnull = ::open("/dev/null", O_RDWR);
      if (devnull >= 0) {
        ::dup2(devnull, STDIN_FILENO);
        ::dup2(devnull, STDOUT_FILENO);
        ::dup2(devnull, STDERR_FILENO);
      }
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Reap();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  // True while the child has not exited (reaps it if it has; the status is kept).
  bool Running() {
    if (pid_ <= 0) return false;
    pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  // SIGKILL, then reap. Returns the wait status.
  int Kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Reap();
    }
    return status_;
  }

 private:
  void Reap() {
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  pid_t pid_ = -1;
  int status_ = 0;
};

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class ViewCliTest : public ::testing::Test {
 protected:
  void SetUp() override { MMFS_SKIP_UNDER_TSAN(); }
  CommandResult Mmfs(std::vector<std::string> args, double timeout = 300) {
    args.insert(args.begin(), MmfsBinary());
    return RunCommand(args, timeout);
  }
  // A generated dataset source of `n` samples.
  std::string Generate(const std::string& name, int n) {
    std::string dir = tmp_ / name;
    auto gen = GenDataset(dir,
                          {"-n", std::to_string(n), "-c", "3", "--min-side", "200", "--max-side",
                           "400", "--seed", "3"},
                          300);
    EXPECT_EQ(gen.exit_code, 0) << gen.output;
    return dir;
  }
  // Sides `view ls --json` lists as ready views.
  std::set<uint32_t> ListedSides(const std::string& dst) {
    auto ls = Mmfs({"view", "ls", dst, "--json"});
    EXPECT_EQ(ls.exit_code, 0) << ls.output;
    std::set<uint32_t> sides;
    auto j = nlohmann::json::parse(ls.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << ls.output;
    if (j.is_discarded()) return sides;
    for (const auto& v : j["views"]) sides.insert(v["side"].get<uint32_t>());
    return sides;
  }
  TempDir tmp_;
};

TEST_F(ViewCliTest, PackAddListRemoveAndVerifyADamagedView) {
  std::string src = Generate("src", 60);
  std::string dst = tmp_ / "ds.mmfs";
  auto pack = Mmfs({"pack", src, dst, "--view", "128", "-q"});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;

  auto ls = Mmfs({"view", "ls", dst});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("\n128 "), std::string::npos) << ls.output;
  EXPECT_EQ(ListedSides(dst), (std::set<uint32_t>{128}));

  auto add = Mmfs({"view", "add", dst, "96", "-q"});
  ASSERT_EQ(add.exit_code, 0) << add.output;
  ls = Mmfs({"view", "ls", dst});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("\n96 "), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("\n128 "), std::string::npos) << ls.output;
  EXPECT_EQ(ListedSides(dst), (std::set<uint32_t>{96, 128}));

  auto rm = Mmfs({"view", "rm", dst, "96"});
  ASSERT_EQ(rm.exit_code, 0) << rm.output;
  EXPECT_EQ(ListedSides(dst), (std::set<uint32_t>{128}));
  EXPECT_FALSE(fsys::exists(dst + "/views/96"));

  auto verify = Mmfs({"verify", dst});
  ASSERT_EQ(verify.exit_code, 0) << verify.output;

  // Damage one resized image inside a view shard: the view's index says where its bytes are.
  const std::string view_dir = dst + "/views/128";
  std::string index = Bytes(view_dir + "/" + format::kViewIndexFileName);
  ASSERT_GE(index.size(), sizeof(format::ViewIndexHeader));
  format::ViewIndexHeader header;
  std::memcpy(&header, index.data(), sizeof header);
  ASSERT_GT(header.record_count, 0u);
  ASSERT_EQ(index.size(), header.records_offset + header.record_count * sizeof(format::ViewRecord));
  format::ViewRecord target{};
  bool found = false;
  for (uint64_t i = 0; i < header.record_count && !found; ++i) {
    format::ViewRecord r;
    std::memcpy(&r, index.data() + header.records_offset + i * sizeof r, sizeof r);
    if (r.kind == static_cast<uint16_t>(format::ViewRecordKind::kResized) && r.size > 16) {
      target = r;
      found = true;
    }
  }
  ASSERT_TRUE(found) << "no resized image in the view";
  char shard_name[32];
  std::snprintf(shard_name, sizeof shard_name, "shard-%05u.mdb", target.shard);
  const std::string shard = view_dir + "/" + shard_name;
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << shard;
    const auto at = static_cast<std::streamoff>(target.data_offset + target.size / 2);
    f.seekg(at);
    char byte = 0;
    f.read(&byte, 1);
    ASSERT_TRUE(f.good());
    byte = static_cast<char>(byte ^ 0x5A);
    f.seekp(at);
    f.write(&byte, 1);
    ASSERT_TRUE(f.good());
  }
  verify = Mmfs({"verify", dst});
  EXPECT_NE(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find("views/128"), std::string::npos) << verify.output;
}

TEST_F(ViewCliTest, KilledViewBuildStaysHiddenAndResumesToTheSameBytes) {
  std::string src = Generate("src", 600);
  std::string dst = tmp_ / "ds.mmfs";
  auto pack = Mmfs({"pack", src, dst, "-q"});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  const std::string fresh = tmp_ / "fresh.mmfs";
  fsys::copy(dst, fresh, fsys::copy_options::recursive);
  // Small shards, so the killed build has finished some and the resume takes them over.
  const std::vector<std::string> build_options = {"-j", "1", "--shard-size", "64K", "-q"};

  // Killed once its checkpoint records a finished shard (header line + one shard line).
  auto finished_a_shard = [&] {
    std::error_code ec;
    for (const auto& e : fsys::directory_iterator(dst + "/views", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind(".64.partial-", 0) != 0) continue;
      std::string cp = Bytes(e.path().string() + "/checkpoint.jsonl");
      if (std::count(cp.begin(), cp.end(), '\n') >= 2) return true;
    }
    return false;
  };
  {
    std::vector<std::string> argv = {MmfsBinary(), "view", "add", dst, "64"};
    argv.insert(argv.end(), build_options.begin(), build_options.end());
    Child build(argv);
    ASSERT_TRUE(build.started());
    bool progressed = WaitFor([&] { return finished_a_shard() || !build.Running(); }, 120);
    ASSERT_TRUE(progressed) << "the build neither progressed nor ended in 120 s";
    ASSERT_TRUE(build.Running()) << "the build ended before it could be killed: make the dataset "
                                    "larger";
    int status = build.Kill();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  EXPECT_FALSE(fsys::exists(dst + "/views/64"));
  EXPECT_EQ(ListedSides(dst).count(64), 0u);
  auto ls = Mmfs({"view", "ls", dst});
  EXPECT_NE(ls.output.find("interrupted build of view 64"), std::string::npos) << ls.output;

  std::vector<std::string> resume = {"view", "add", dst, "64", "--resume"};
  resume.insert(resume.end(), build_options.begin(), build_options.end());
  auto resumed = Mmfs(resume, 600);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(ListedSides(dst).count(64), 1u);

  std::vector<std::string> whole = {"view", "add", fresh, "64"};
  whole.insert(whole.end(), build_options.begin(), build_options.end());
  auto built = Mmfs(whole, 600);
  ASSERT_EQ(built.exit_code, 0) << built.output;

  // The same files, byte for byte; the manifest too, but for when it was made.
  std::set<std::string> names, fresh_names;
  for (const auto& e : fsys::directory_iterator(dst + "/views/64")) {
    names.insert(e.path().filename().string());
  }
  for (const auto& e : fsys::directory_iterator(fresh + "/views/64")) {
    fresh_names.insert(e.path().filename().string());
  }
  ASSERT_EQ(names, fresh_names);
  ASSERT_GE(names.size(), 4u) << "expected a manifest, an index and several shards";
  for (const std::string& name : names) {
    std::string a = Bytes(dst + "/views/64/" + name);
    std::string b = Bytes(fresh + "/views/64/" + name);
    if (name == "manifest.json") {
      auto ja = nlohmann::json::parse(a, nullptr, false);
      auto jb = nlohmann::json::parse(b, nullptr, false);
      ASSERT_FALSE(ja.is_discarded() || jb.is_discarded());
      ja.erase("created");
      jb.erase("created");
      EXPECT_EQ(ja, jb) << "manifest.json differs beyond its timestamp";
    } else {
      EXPECT_TRUE(a == b) << name << " differs from an uninterrupted build's";
    }
  }
}

}  // namespace
}  // namespace mmfs::testing
