// What both writers share (tools/stage): the staging directory and resume, the checkpoint file,
// the atomic publish, Ctrl-C and the manifests' stamp.
#include "tools/stage/staging.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tools/stage/checkpoint_file.h"
#include "tools/stage/interrupt.h"
#include "tools/stage/stamp.h"

namespace mmfs::stage {
namespace {

namespace fsys = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// No process has this PID (above Linux's largest pid_max): its builds are over.
constexpr long kGonePid = 999999999;

class StagingTest : public ::testing::Test {
 protected:
  // A staging directory of NAME "out" left by `pid`, with a checkpoint when `checkpoint`.
  std::string Leftover(long pid, bool checkpoint, const std::string& content = "") {
    std::string dir = tmp_ / (".out.partial-" + std::to_string(pid));
    fsys::create_directories(dir);
    if (checkpoint) WriteFile(dir + "/" + kCheckpointFileName, "header\n" + content);
    return dir;
  }

  // Notes that record what Begin said.
  Staging::Notes Recording() {
    Staging::Notes notes;
    notes.nothing_to_resume = [this] { nothing_to_resume_ = true; };
    notes.removing = [this](const std::string& dir) { removed_.push_back(dir); };
    return notes;
  }

  TempDir tmp_;
  bool nothing_to_resume_ = false;
  std::vector<std::string> removed_;
};

TEST(StagingNameTest, OnlyADotNameAndAWholePositivePidAreAStagingDirectory) {
  std::string name;
  long pid = 0;
  ASSERT_TRUE(ParseStagingName(".out.mmfs.partial-1234", &name, &pid));
  EXPECT_EQ(name, "out.mmfs");
  EXPECT_EQ(pid, 1234);
  // A NAME may itself look like a staging name: the last mark is the one that counts.
  ASSERT_TRUE(ParseStagingName(".a.partial-7.partial-8", &name, &pid));
  EXPECT_EQ(name, "a.partial-7");
  EXPECT_EQ(pid, 8);
  for (const char* other : {"out.partial-12", ".out.partial-", ".out.partial-12x", ".out.partial-0",
                            ".out.partial--3", ".out.old-12", "..partial-5", ".partial-5"}) {
    EXPECT_FALSE(ParseStagingName(other, &name, &pid)) << other;
  }
}

TEST(StagingNameTest, AGoneProcessOrThisOneHasFinishedItsBuild) {
  EXPECT_TRUE(ProcessGone(kGonePid));
  EXPECT_TRUE(ProcessGone(::getpid()));  // an earlier build of this process
  EXPECT_FALSE(ProcessGone(1));          // init runs as long as the machine does
}

TEST_F(StagingTest, TheBuildIsHiddenBesideThePlaceItIsFor) {
  Staging s(tmp_.path(), "out");
  EXPECT_EQ(s.dir(), tmp_ / (".out.partial-" + std::to_string(::getpid())));
  EXPECT_EQ(s.final_path(), tmp_ / "out");
  auto begun = s.Begin(/*resume=*/false, 0700, Recording());
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  EXPECT_FALSE(*begun);
  EXPECT_FALSE(nothing_to_resume_);  // not asked to resume
  struct stat st;
  ASSERT_EQ(::stat(s.dir().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0077, 0u) << "made private, as asked";
  EXPECT_FALSE(fsys::exists(s.final_path()));
}

TEST_F(StagingTest, ResumeTakesOverTheLatestInterruptedBuildAndRemovesTheOthers) {
  std::string older = Leftover(kGonePid, true, "older\n");
  std::string newer = Leftover(kGonePid - 1, true, "newer\n");
  std::string no_checkpoint = Leftover(kGonePid - 2, false);
  auto now = fsys::file_time_type::clock::now();
  fsys::last_write_time(older + "/" + kCheckpointFileName, now - std::chrono::hours(2));
  fsys::last_write_time(newer + "/" + kCheckpointFileName, now - std::chrono::hours(1));
  std::string running = tmp_ / ".out.partial-1";  // init's: a build still running
  fsys::create_directories(running);
  std::string other_name = tmp_ / ".other.partial-999999999";
  fsys::create_directories(other_name);

  Staging s(tmp_.path(), "out");
  EXPECT_EQ(s.FindResumable(), newer);
  auto begun = s.Begin(/*resume=*/true, 0700, Recording());
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  EXPECT_TRUE(*begun);
  EXPECT_FALSE(nothing_to_resume_);
  // Taken over under this process's name, with what it had written.
  EXPECT_EQ(ReadFile(s.dir() + "/" + kCheckpointFileName), "header\nnewer\n");
  EXPECT_FALSE(fsys::exists(newer));
  // The other interrupted builds of "out" are removed, each named first.
  EXPECT_FALSE(fsys::exists(older));
  EXPECT_FALSE(fsys::exists(no_checkpoint));
  std::sort(removed_.begin(), removed_.end());
  EXPECT_EQ(removed_, (std::vector<std::string>{no_checkpoint, older}));
  // A running build and another NAME's build are not touched.
  EXPECT_TRUE(fsys::exists(running));
  EXPECT_TRUE(fsys::exists(other_name));
}

TEST_F(StagingTest, NothingToResumeStartsAfreshAndSaysSo) {
  std::string no_checkpoint = Leftover(kGonePid, false);  // interrupted before its checkpoint
  Staging s(tmp_.path(), "out");
  EXPECT_EQ(s.FindResumable(), "");
  auto begun = s.Begin(/*resume=*/true, 0700, Recording());
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  EXPECT_FALSE(*begun);
  EXPECT_TRUE(nothing_to_resume_);
  EXPECT_EQ(removed_, std::vector<std::string>{no_checkpoint});
  EXPECT_FALSE(fsys::exists(no_checkpoint));
  EXPECT_TRUE(fsys::is_empty(s.dir()));
}

TEST_F(StagingTest, WithoutResumeAnInterruptedBuildIsRemovedNotTakenOver) {
  std::string left = Leftover(kGonePid, true, "line\n");
  Staging s(tmp_.path(), "out");
  auto begun = s.Begin(/*resume=*/false, 0755, Recording());
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  EXPECT_FALSE(*begun);
  EXPECT_FALSE(fsys::exists(left));
  EXPECT_TRUE(fsys::is_empty(s.dir()));
}

TEST_F(StagingTest, ATakenOverBuildIsNarrowedToTheModeAsked) {
  std::string left = Leftover(kGonePid, true);
  ASSERT_EQ(::chmod(left.c_str(), 0755), 0);
  Staging s(tmp_.path(), "out");
  auto begun = s.Begin(/*resume=*/true, 0700, Recording());
  ASSERT_TRUE(begun.ok() && *begun) << begun.status().ToString();
  struct stat st;
  ASSERT_EQ(::stat(s.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// A build killed (kill -9) in the middle: nothing is visible where it was going, and the next
// build resumes it.
TEST_F(StagingTest, AKilledBuildNeverShowsAndIsResumedByTheNext) {
  int ready[2], hold[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(hold), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    ::close(hold[1]);
    // The build: staged, a checkpoint line and half a shard written, then held until killed.
    Staging s(tmp_.path(), "out");
    bool ok = s.Begin(false, 0700, {}).ok();
    auto cp = CheckpointFile::Create(s.dir() + "/" + kCheckpointFileName, "header");
    ok = ok && cp.ok() && cp->Append("shard 0").ok();
    WriteFile(s.dir() + "/shard-00001.mdb", "half");
    char c = ok ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    (void)!::read(hold[0], &c, 1);  // never returns: the parent kills this process
    ::_exit(0);
  }
  // Only the child writes `ready` (EOF if it dies) and reads `hold` (EOF if this process does).
  ::close(ready[1]);
  ::close(hold[0]);
  char c = 0;
  ssize_t got = ::read(ready[0], &c, 1);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(hold[1]);
  ASSERT_EQ(got, 1);
  ASSERT_EQ(c, 'y');
  ASSERT_TRUE(WIFSIGNALED(status));

  EXPECT_FALSE(fsys::exists(tmp_ / "out"));
  const std::string killed = tmp_ / (".out.partial-" + std::to_string(child));
  ASSERT_TRUE(fsys::exists(killed));
  Staging next(tmp_.path(), "out");
  EXPECT_EQ(next.FindResumable(), killed);
  auto begun = next.Begin(/*resume=*/true, 0700, Recording());
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  EXPECT_TRUE(*begun);
  EXPECT_EQ(ReadFile(next.dir() + "/" + kCheckpointFileName), "header\nshard 0\n");
  EXPECT_EQ(ReadFile(next.dir() + "/shard-00001.mdb"), "half");
}

TEST_F(StagingTest, PublishMovesTheWholeBuildInPlaceAndLeavesNothingBehind) {
  Staging s(tmp_.path(), "out");
  ASSERT_TRUE(s.Begin(false, 0700, {}).ok());
  WriteFile(s.dir() + "/manifest.json", "new");
  EXPECT_FALSE(fsys::exists(s.final_path()));  // nothing visible before the rename
  Status published = s.Publish(/*replace=*/false, "publish");
  ASSERT_TRUE(published.ok()) << published.ToString();
  EXPECT_EQ(ReadFile(s.final_path() + "/manifest.json"), "new");
  EXPECT_FALSE(fsys::exists(s.dir()));
}

TEST_F(StagingTest, ReplacingKeepsNoOldCopy) {
  WriteFile(tmp_ / "out/manifest.json", "old");
  Staging s(tmp_.path(), "out");
  ASSERT_TRUE(s.Begin(false, 0700, {}).ok());
  WriteFile(s.dir() + "/manifest.json", "new");
  Status published = s.Publish(/*replace=*/true, "publish");
  ASSERT_TRUE(published.ok()) << published.ToString();
  EXPECT_EQ(ReadFile(tmp_ / "out/manifest.json"), "new");
  std::vector<std::string> names;
  for (const auto& e : fsys::directory_iterator(tmp_.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"out"}) << "no .out.old-PID, no staging directory";
}

// A publish that cannot complete leaves the place as it was: never a mix, never nothing where
// there was something.
TEST_F(StagingTest, AFailedPublishLeavesThePlaceAsItWas) {
  // Another build of the same place was published first: this one's rename is refused.
  WriteFile(tmp_ / "out/manifest.json", "first");
  Staging s(tmp_.path(), "out");
  ASSERT_TRUE(s.Begin(false, 0700, {}).ok());
  WriteFile(s.dir() + "/manifest.json", "second");
  Status refused = s.Publish(/*replace=*/false, "publish it");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("publish it"), std::string::npos) << refused.ToString();
  EXPECT_EQ(ReadFile(tmp_ / "out/manifest.json"), "first");
  EXPECT_FALSE(fsys::exists(s.dir())) << "a failed build is removed";

  // Replacing, and the new build cannot be moved in (here: it is gone): the old one is put back.
  Status failed = s.Publish(/*replace=*/true, "publish it");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(ReadFile(tmp_ / "out/manifest.json"), "first");
  std::vector<std::string> names;
  for (const auto& e : fsys::directory_iterator(tmp_.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"out"});
}

class StageCheckpointFileTest : public ::testing::Test {
 protected:
  std::string path() const { return tmp_ / kCheckpointFileName; }
  // Reads path() with a header that must be "H" and lines taken while they are not "stop".
  Result<uint64_t> Read(std::vector<std::string>* lines) {
    return ReadCheckpointFile(
        path(),
        [](std::string_view h) {
          if (h == "H") return Status::Ok();
          if (h == "refused") return Status::InvalidArgument("other options");
          return Status::Corruption("not a header");
        },
        [lines](std::string_view l) {
          if (l == "stop") return false;
          lines->emplace_back(l);
          return true;
        });
  }
  TempDir tmp_;
};

TEST_F(StageCheckpointFileTest, WrittenLinesReadBackInOrder) {
  auto w = CheckpointFile::Create(path(), "H");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->Append("a").ok());
  ASSERT_TRUE(w->Append("b").ok());
  EXPECT_EQ(ReadFile(path()), "H\na\nb\n");
  std::vector<std::string> lines;
  auto usable = Read(&lines);
  ASSERT_TRUE(usable.ok()) << usable.status().ToString();
  EXPECT_EQ(*usable, 6u);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(CountCheckpointLines(path()), 2u);
}

TEST_F(StageCheckpointFileTest, ACutOrUnusableLineEndsTheUsablePartAndTheWriterContinuesThere) {
  struct Case {
    const char* text;
    uint64_t usable;
    std::vector<std::string> lines;
  } cases[] = {
      {"H\na\nb", 4, {"a"}},                // b was cut by the interruption
      {"H\na\nstop\nb\n", 4, {"a"}},         // its owner cannot use "stop": b is not read
      {"H\n", 2, {}},
  };
  for (const Case& c : cases) {
    WriteFile(path(), c.text);
    std::vector<std::string> lines;
    auto usable = Read(&lines);
    ASSERT_TRUE(usable.ok()) << c.text << ": " << usable.status().ToString();
    EXPECT_EQ(*usable, c.usable) << c.text;
    EXPECT_EQ(lines, c.lines) << c.text;
  }
  WriteFile(path(), "H\na\nstop\nb\n");
  std::vector<std::string> lines;
  auto usable = Read(&lines);
  ASSERT_TRUE(usable.ok());
  auto w = CheckpointFile::Continue(path(), *usable);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->Append("c").ok());
  EXPECT_EQ(ReadFile(path()), "H\na\nc\n");
}

TEST_F(StageCheckpointFileTest, ADamagedOrForeignHeaderIsRefused) {
  for (const char* text : {"", "H", "garbage\na\n"}) {
    WriteFile(path(), text);
    std::vector<std::string> lines;
    auto usable = Read(&lines);
    ASSERT_FALSE(usable.ok()) << text;
    EXPECT_EQ(usable.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(usable.status().message(), path() + ": empty checkpoint") << text;
    EXPECT_TRUE(lines.empty());
  }
  WriteFile(path(), "refused\na\n");
  std::vector<std::string> lines;
  auto refused = Read(&lines);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "other options");  // the owner's words, as they are
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(CountCheckpointLines(tmp_ / "missing.jsonl"), 0u);
}

// Restores the handlers CatchInterrupts replaces, so the test process keeps its own.
class InterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sigaction(SIGINT, nullptr, &old_int_);
    sigaction(SIGTERM, nullptr, &old_term_);
  }
  void TearDown() override {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

TEST_F(InterruptTest, CtrlCAndTermSetTheFlagAndEachBuildStartsClear) {
  const std::atomic<bool>* flag = CatchInterrupts();
  EXPECT_FALSE(flag->load());
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_TRUE(flag->load()) << "the process goes on; the build sees the flag";
  EXPECT_EQ(CatchInterrupts(), flag);
  EXPECT_FALSE(flag->load()) << "the next build (pack --view) starts uninterrupted";
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_TRUE(flag->load());
}

TEST(StampTest, UtcNowIsIso8601ToTheSecondAndNow) {
  std::time_t before = std::time(nullptr);
  std::string now = UtcNow();
  std::time_t after = std::time(nullptr);
  ASSERT_TRUE(std::regex_match(now, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << now;
  struct tm tm {};
  ASSERT_NE(::strptime(now.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm), nullptr);
  std::time_t parsed = ::timegm(&tm);
  EXPECT_GE(parsed, before);
  EXPECT_LE(parsed, after);
  EXPECT_EQ(ToolName(), "mmfs " MMFS_VERSION);
}

}  // namespace
}  // namespace mmfs::stage
