#include "fs/control/line_pipe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>

#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using mmfs::testing::TempDir;
using mmfs::testing::WaitFor;

// What the pipe handed over, recorded from its reader thread.
struct Recorder {
  std::mutex mu;
  std::vector<std::vector<std::string>> orders;
  int ended = 0;
  LinePipeCallbacks Callbacks() {
    return {[this] {
              std::lock_guard<std::mutex> l(mu);
              orders.emplace_back();
            },
            [this](const std::vector<std::string>& lines) {
              std::lock_guard<std::mutex> l(mu);
              for (const auto& s : lines) orders.back().push_back(s);
            },
            [this] {
              std::lock_guard<std::mutex> l(mu);
              ++ended;
            }};
  }
  int Ended() {
    std::lock_guard<std::mutex> l(mu);
    return ended;
  }
};

// Writes `pieces` as one writer session: open, several writes, close.
void WriteSession(const std::string& path, const std::vector<std::string>& pieces) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  for (const std::string& p : pieces) {
    ASSERT_EQ(::write(fd, p.data(), p.size()), static_cast<ssize_t>(p.size()));
  }
  ::close(fd);
}

TEST(LinePipeTest, EachWriterSessionIsOneOrderSplitIntoLines) {
  TempDir tmp;
  Recorder rec;
  auto ch = LinePipe::Open(tmp.path(), "hint", 0600, rec.Callbacks());
  ASSERT_TRUE(ch.ok()) << ch.status().message();
  const std::string fifo = (*ch)->path();
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Lines split across writes, a last line without a newline, an empty line.
  WriteSession(fifo, {"train/a/1.jpg\ntrain/", "a/2.jpg\n\ntrain/b/", "3.jpg"});
  ASSERT_TRUE(WaitFor([&] { return rec.Ended() == 1; }, 10));
  std::string big(100000, 'x');  // an overlong line is dropped, the next one kept
  WriteSession(fifo, {"x/1.jpg\n", big, big + "\n", "x/2.jpg\n"});
  ASSERT_TRUE(WaitFor([&] { return rec.Ended() == 2; }, 10));
  std::lock_guard<std::mutex> l(rec.mu);
  ASSERT_EQ(rec.orders.size(), 2u);
  EXPECT_EQ(rec.orders[0],
            std::vector<std::string>({"train/a/1.jpg", "train/a/2.jpg", "", "train/b/3.jpg"}));
  EXPECT_EQ(rec.orders[1], std::vector<std::string>({"x/1.jpg", "x/2.jpg"}));
}

TEST(LinePipeTest, StopsPromptlyAndRemovesTheFifo) {
  TempDir tmp;
  Recorder rec;
  std::string fifo, dir;
  {
    auto ch = LinePipe::Open(tmp.path(), "hint", 0600, rec.Callbacks());
    ASSERT_TRUE(ch.ok()) << ch.status().message();
    fifo = (*ch)->path();
    dir = fifo.substr(0, fifo.rfind('/'));
  }  // no writer ever came: the destructor must still return
  EXPECT_NE(::access(fifo.c_str(), F_OK), 0);
  EXPECT_NE(::access(dir.c_str(), F_OK), 0);
}

TEST(LinePipeTest, DirectoriesOfDaemonsThatAreGoneAreRemoved) {
  TempDir tmp;
  // PID 999999999 cannot exist: a daemon killed before it could clean up.
  std::string stale = tmp / "mmfs-hint-999999999-abcdef";
  ASSERT_EQ(::mkdir(stale.c_str(), 0711), 0);
  ASSERT_EQ(::mkfifo((stale + "/hint").c_str(), 0600), 0);
  std::string mine = tmp / ("mmfs-hint-" + std::to_string(::getpid()) + "-keepme");
  ASSERT_EQ(::mkdir(mine.c_str(), 0711), 0);
  Recorder rec;
  auto ch = LinePipe::Open(tmp.path(), "hint", 0600, rec.Callbacks());
  ASSERT_TRUE(ch.ok());
  EXPECT_NE(::access(stale.c_str(), F_OK), 0) << "stale directory left";
  EXPECT_EQ(::access(mine.c_str(), F_OK), 0) << "a live daemon's directory was removed";
  ::rmdir(mine.c_str());
}

TEST(LinePipeTest, EachPipeIsNamedForWhatItCarries) {
  TempDir tmp;
  Recorder hint_rec, control_rec;
  auto hint = LinePipe::Open(tmp.path(), "hint", 0600, hint_rec.Callbacks());
  auto control = LinePipe::Open(tmp.path(), "control", 0600, control_rec.Callbacks());
  ASSERT_TRUE(hint.ok() && control.ok());
  const std::string pid = std::to_string(::getpid());
  const std::string c = (*control)->path();
  EXPECT_EQ(c.substr(c.rfind('/')), "/control");
  EXPECT_NE(c.find("/mmfs-control-" + pid + "-"), std::string::npos) << c;
  const std::string h = (*hint)->path();
  EXPECT_EQ(h.substr(h.rfind('/')), "/hint");
  // Clearing the stale pipes of one name leaves a live daemon's pipes of every name alone.
  LinePipe::RemoveStale(tmp.path(), "control");
  EXPECT_EQ(::access(h.c_str(), F_OK), 0);
  EXPECT_EQ(::access(c.c_str(), F_OK), 0);
  WriteSession(c, {"warm\n"});
  ASSERT_TRUE(WaitFor([&] { return control_rec.Ended() == 1; }, 10));
  EXPECT_EQ(hint_rec.Ended(), 0);
}

TEST(LinePipeTest, MissingParentIsAClearError) {
  Recorder rec;
  auto ch = LinePipe::Open("/nonexistent/dir", "hint", 0600, rec.Callbacks());
  ASSERT_FALSE(ch.ok());
  EXPECT_NE(ch.status().message().find("/nonexistent/dir"), std::string::npos);
}

}  // namespace
}  // namespace mmfs::fs
