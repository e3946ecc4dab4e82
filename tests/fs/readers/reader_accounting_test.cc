// The reader accounting's arithmetic with a fake clock and a fake /proc: overlapping requests of
// one thread count once, windows are differences of interpolated cumulative amounts, exited
// threads stay with their process, exited processes are folded into "finished", the table is
// bounded, and the verdict thresholds are where reader_verdict.h says.
#include "fs/readers/reader_accounting.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "fs/control/control_dir.h"
#include "fs/readers/reader_verdict.h"
#include "fs/stats/readers_json.h"
#include "fs/stats/stats_format.h"
#include "fs/stats/stats_prometheus.h"

namespace mmfs::fs {
namespace {

constexpr int64_t kSec = 1'000'000'000;

class FakeClock : public Clock {
 public:
  int64_t NowNs() const override { return now; }
  int64_t now = 0;
};

// Threads and processes the test creates, changes and ends.
class FakeProc : public ProcReader {
 public:
  struct Proc {
    std::string comm;
    uint64_t start = 1;
    double cpu_seconds = 0;
    double runq_seconds = 0;
    uint64_t rchar = 0;
  };
  Result<TaskInfo> ReadTask(uint64_t tid) override {
    auto it = tasks.find(tid);
    if (it == tasks.end()) return Status::NotFound("gone");
    return it->second;
  }
  Result<ProcessSample> ReadProcess(uint64_t tgid) override {
    auto it = procs.find(tgid);
    if (it == procs.end()) return Status::NotFound("gone");
    ProcessSample s;
    s.comm = it->second.comm;
    s.start_ticks = it->second.start;
    s.cpu_ns = static_cast<uint64_t>(it->second.cpu_seconds * 1e9);
    s.runq_ns = static_cast<uint64_t>(it->second.runq_seconds * 1e9);
    s.has_io = true;
    s.rchar = it->second.rchar;
    return s;
  }
  void AddProcess(uint64_t pid, std::string comm) {
    procs[pid].comm = std::move(comm);
    tasks[pid] = {pid, 1};
  }
  void AddThread(uint64_t tid, uint64_t pid) { tasks[tid] = {pid, 7}; }
  void Exit(uint64_t pid) {
    procs.erase(pid);
    for (auto it = tasks.begin(); it != tasks.end();) {
      it = it->second.tgid == pid ? tasks.erase(it) : std::next(it);
    }
  }
  std::map<uint64_t, TaskInfo> tasks;
  std::map<uint64_t, Proc> procs;
};

class ReaderAccountingTest : public ::testing::Test {
 protected:
  ReaderAccountingTest() {
    auto p = std::make_unique<FakeProc>();
    proc_ = p.get();
    ReaderAccountingOptions o;
    o.tick_ns = kSec;
    o.history_ticks = 64;
    acct_ = std::make_unique<ReaderAccounting>(o, &clock_, std::move(p));
  }
  void At(double seconds) { clock_.now = static_cast<int64_t>(seconds * kSec); }
  int64_t T(double seconds) const { return static_cast<int64_t>(seconds * kSec); }
  void Request(uint64_t tid, double from, double to, uint64_t bytes = 0) {
    ASSERT_TRUE(acct_->Begin(tid, T(from)));
    acct_->End(tid, T(to), bytes);
  }
  // A first request at `t`, sampled at once: the reader is observed from `t`.
  void Start(uint64_t pid, const std::string& comm, double t) {
    proc_->AddProcess(pid, comm);
    At(t);
    Request(pid, t, t);
    acct_->Tick();
  }
  const ReaderRow* Row(const ReadersStats& s, uint64_t pid) {
    for (const ReaderRow& r : s.rows) {
      if (r.kind == ReaderRow::Kind::kProcess && r.pid == pid) return &r;
    }
    return nullptr;
  }
  const ReaderRow* Finished(const ReadersStats& s) {
    for (const ReaderRow& r : s.rows) {
      if (r.kind == ReaderRow::Kind::kFinished) return &r;
    }
    return nullptr;
  }

  FakeClock clock_;
  FakeProc* proc_ = nullptr;
  std::unique_ptr<ReaderAccounting> acct_;
};

TEST_F(ReaderAccountingTest, OverlappingRequestsOfOneThreadCountOnceThreadsAdd) {
  Start(100, "python3", 0);
  proc_->AddThread(101, 100);
  // Thread 100: [0.2, 1.0] and [0.4, 0.7] overlap: 0.8 s, not 1.1 s.
  ASSERT_TRUE(acct_->Begin(100, T(0.2)));
  ASSERT_TRUE(acct_->Begin(100, T(0.4)));
  acct_->End(100, T(0.7), 4096);
  // Thread 101 of the same process: its own 0.3 s adds.
  Request(101, 0.5, 0.8, 1000);
  acct_->End(100, T(1.0), 8192);
  proc_->procs[100].cpu_seconds = 0.1;
  At(1.0);
  ReadersStats s = acct_->Snapshot(10, 8);
  const ReaderRow* r = Row(s, 100);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->wall_seconds, 1.0);
  EXPECT_NEAR(r->stall_seconds, 1.1, 1e-9);
  EXPECT_NEAR(r->cpu_seconds, 0.1, 1e-9);
  EXPECT_EQ(r->requests, 3u);
  EXPECT_EQ(r->served_bytes, 4096u + 8192u + 1000u);
  EXPECT_EQ(r->threads, 2u);
  EXPECT_EQ(r->comm, "python3");
  EXPECT_EQ(r->verdict, ReaderVerdict::kIoBound);
  EXPECT_EQ(s.verdict, ReaderVerdict::kIoBound);
}

TEST_F(ReaderAccountingTest, ARequestInFlightCountsUpToNow) {
  Start(100, "python3", 0);
  ASSERT_TRUE(acct_->Begin(100, T(1)));
  At(4);
  ReadersStats s = acct_->Snapshot(10, 8);
  ASSERT_NE(Row(s, 100), nullptr);
  EXPECT_NEAR(Row(s, 100)->stall_seconds, 3.0, 1e-9);
  acct_->End(100, T(5), 0);
  At(5);
  s = acct_->Snapshot(10, 8);
  EXPECT_NEAR(Row(s, 100)->stall_seconds, 4.0, 1e-9);
}

// 20 s of one reader: computing for its first 15 s (1 s of CPU per s), then waiting on mmfs for
// the last 5; it reads 1 MB/s through anything (rchar) and 100 KB per request from mmfs.
TEST_F(ReaderAccountingTest, WindowsAreDifferencesOverTheWindow) {
  Start(200, "pt_data_worker", 0);
  for (int s = 0; s < 20; ++s) {
    if (s >= 15) Request(200, s, s + 1, 100'000);
    proc_->procs[200].cpu_seconds += s < 15 ? 1.0 : 0.0;
    proc_->procs[200].rchar += 1'000'000;
    At(s + 1);
    acct_->Tick();
  }
  ReadersStats s = acct_->Snapshot(10, 8);
  EXPECT_DOUBLE_EQ(s.window_seconds, 10);
  const ReaderRow* r = Row(s, 200);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(r->wall_seconds, 10, 1e-9);
  EXPECT_NEAR(r->stall_seconds, 5, 1e-9);
  EXPECT_NEAR(r->cpu_seconds, 5, 1e-9);
  EXPECT_EQ(r->served_bytes, 500'000u);
  EXPECT_EQ(r->rchar_bytes, 10'000'000u);
  EXPECT_EQ(r->verdict, ReaderVerdict::kIoBound);

  s = acct_->Snapshot(4, 8);
  r = Row(s, 200);
  EXPECT_NEAR(r->stall_seconds, 4, 1e-9);
  EXPECT_NEAR(r->cpu_seconds, 0, 1e-9);

  // Between ticks the window starts between two of them: interpolated (linear inside a second).
  At(20.5);
  s = acct_->Snapshot(8, 8);  // from 12.5: 2.5 s computing, 5 s waiting, 0.5 s unknown yet
  r = Row(s, 200);
  EXPECT_NEAR(r->wall_seconds, 8, 1e-9);
  EXPECT_NEAR(r->stall_seconds, 5, 1e-9);
  EXPECT_NEAR(r->cpu_seconds, 2.5, 1e-9);

  // Windows clamp to the history kept.
  s = acct_->Snapshot(1000, 8);
  EXPECT_DOUBLE_EQ(s.window_seconds, acct_->max_window_seconds());
  EXPECT_NEAR(Row(s, 200)->wall_seconds, 20.5, 1e-9);  // observed since its first request
}

TEST_F(ReaderAccountingTest, ExitedProcessesFoldIntoFinishedWithinTheWindowOnly) {
  Start(300, "reader", 0);
  Start(301, "reader", 0);
  for (int s = 0; s < 5; ++s) {
    Request(300, s, s + 0.5, 10);
    Request(301, s, s + 0.25, 10);
    At(s + 1);
    acct_->Tick();
  }
  proc_->procs[300].cpu_seconds = 1.0;
  acct_->Tick();  // at 5: the last sample of 300
  proc_->Exit(300);
  At(6);
  acct_->Tick();  // 300 is gone: folded
  At(8);
  ReadersStats s = acct_->Snapshot(10, 8);
  EXPECT_EQ(Row(s, 300), nullptr);
  const ReaderRow* fin = Finished(s);
  ASSERT_NE(fin, nullptr);
  EXPECT_EQ(fin->processes, 1u);
  EXPECT_NEAR(fin->wall_seconds, 5, 1e-9);
  EXPECT_NEAR(fin->stall_seconds, 2.5, 1e-9);
  EXPECT_NEAR(fin->cpu_seconds, 1.0, 1e-9);
  EXPECT_EQ(fin->requests, 5u);
  ASSERT_NE(Row(s, 301), nullptr);
  EXPECT_NEAR(Row(s, 301)->stall_seconds, 1.25, 1e-9);
  EXPECT_NEAR(s.total.stall_seconds, 3.75, 1e-9);
  EXPECT_NEAR(s.total.wall_seconds, 13, 1e-9);  // 5 s of 300 and 8 s of 301

  // A window after its exit: nothing of it left but its totals by command.
  for (int t = 9; t <= 30; ++t) {
    At(t);
    acct_->Tick();
  }
  s = acct_->Snapshot(10, 8);
  EXPECT_EQ(Finished(s), nullptr);
  ASSERT_EQ(s.by_command.size(), 1u);
  EXPECT_EQ(s.by_command[0].comm, "reader");
  EXPECT_NEAR(s.by_command[0].stall_seconds, 3.75, 1e-9);
  EXPECT_EQ(s.by_command[0].requests, 10u);  // the Start requests precede the first samples
}

// Two decoders on one free core: each runs half the time and waits for the core the other half.
TEST_F(ReaderAccountingTest, WaitingForACoreCountsAsCompute) {
  Start(700, "python3", 0);
  for (int s = 0; s < 10; ++s) {
    Request(700, s, s + 0.01, 100'000);
    proc_->procs[700].cpu_seconds += 0.45;
    proc_->procs[700].runq_seconds += 0.45;
    At(s + 1);
    acct_->Tick();
  }
  ReadersStats s = acct_->Snapshot(10, 8);
  const ReaderRow* r = Row(s, 700);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(r->cpu_seconds, 4.5, 1e-9);
  EXPECT_NEAR(r->runq_seconds, 4.5, 1e-9);
  EXPECT_EQ(r->verdict, ReaderVerdict::kComputeBound);
  EXPECT_EQ(ClassifyReader(10, 0.5, 4.5, 0), ReaderVerdict::kIdle);  // without the wait
}

TEST_F(ReaderAccountingTest, AnExitedThreadStaysWithItsProcess) {
  Start(400, "python3", 0);
  proc_->AddThread(401, 400);
  Request(401, 0.5, 1.5);
  At(2);
  acct_->Tick();
  proc_->tasks.erase(401);
  At(3);
  acct_->Tick();
  ReadersStats s = acct_->Snapshot(10, 8);
  ASSERT_NE(Row(s, 400), nullptr);
  EXPECT_NEAR(Row(s, 400)->stall_seconds, 1.0, 1e-9);
  EXPECT_EQ(Row(s, 400)->threads, 1u);
  EXPECT_EQ(Finished(s), nullptr);
}

TEST_F(ReaderAccountingTest, TopRowsThenOthersAndTheTotalOfAll) {
  // append, not "w" + ...: GCC 12 -O3 reports a false -Wrestrict in operator+(const char*, string&&).
  for (uint64_t pid = 1; pid <= 5; ++pid) {
    Start(pid, std::string("w").append(std::to_string(pid)), 0);
  }
  for (uint64_t pid = 1; pid <= 5; ++pid) Request(pid, 1, 1 + 0.1 * static_cast<double>(pid));
  At(2);
  ReadersStats s = acct_->Snapshot(10, 2);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].pid, 5u);
  EXPECT_EQ(s.rows[1].pid, 4u);
  EXPECT_EQ(s.rows[2].kind, ReaderRow::Kind::kOthers);
  EXPECT_EQ(s.rows[2].processes, 3u);
  EXPECT_NEAR(s.rows[2].stall_seconds, 0.6, 1e-9);
  EXPECT_NEAR(s.total.stall_seconds, 1.5, 1e-9);
  EXPECT_NEAR(s.total.wall_seconds, 10, 1e-9);
  EXPECT_EQ(s.tracked_processes, 5u);
}

TEST_F(ReaderAccountingTest, TheThreadTableIsBounded) {
  FakeClock clock;
  ReaderAccountingOptions o;
  o.max_threads = 16;  // one per stripe
  ReaderAccounting small(o, &clock, std::make_unique<FakeProc>());
  EXPECT_TRUE(small.Begin(1, 0));
  EXPECT_FALSE(small.Begin(17, 0));  // same stripe, full
  small.End(1, 10, 0);
  EXPECT_EQ(small.Snapshot(10, 8).untracked_requests, 1u);
}

TEST_F(ReaderAccountingTest, ProcessesWithoutActivityInTheWindowAreNotShown) {
  Start(500, "bash", 0);  // looked at the mount once, then read a pipe now and then
  for (int t = 1; t <= 20; ++t) {
    proc_->procs[500].rchar += 1000;
    At(t);
    acct_->Tick();
  }
  ReadersStats s = acct_->Snapshot(10, 8);
  EXPECT_TRUE(s.rows.empty());
  EXPECT_EQ(s.verdict, ReaderVerdict::kNone);
  EXPECT_EQ(s.tracked_processes, 1u);
  // Reading 64 KiB in the window (from the page cache, say) makes it a reader again.
  proc_->procs[500].rchar += kActiveReadBytes;
  At(21);
  s = acct_->Snapshot(10, 8);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].pid, 500u);
}

TEST(ReaderVerdictTest, Thresholds) {
  EXPECT_EQ(ClassifyReader(10, 3.0, 0), ReaderVerdict::kIoBound);  // 30% waiting
  EXPECT_EQ(ClassifyReader(10, 2.99, 6.0), ReaderVerdict::kComputeBound);
  EXPECT_EQ(ClassifyReader(10, 2.99, 5.99), ReaderVerdict::kIdle);
  EXPECT_EQ(ClassifyReader(10, 9, 9), ReaderVerdict::kIoBound);  // waiting wins
  EXPECT_EQ(ClassifyReader(0.1, 0.1, 0), ReaderVerdict::kNone);
  EXPECT_EQ(ReaderVerdictName(ReaderVerdict::kComputeBound), "compute-bound");
  AdviceContext ctx;
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kIoBound, ctx).find("HintedSampler"), std::string::npos);
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kIoBound, ctx).find("warmup"), std::string::npos);
  ctx.warm = true;
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kIoBound, ctx).find("--overlay"), std::string::npos);
  ctx.view_sides = {256};
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kComputeBound, ctx).find("@256/"), std::string::npos);
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kComputeBound, ctx).find("workers"), std::string::npos);
  EXPECT_NE(ReaderAdvice(ReaderVerdict::kIdle, ctx).find("consumer"), std::string::npos);
}

TEST(ProcParseTest, StatIoStatus) {
  auto st = ParseProcStat(
      "1234 (pt (data) worker) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 "
      "987654 1000 100 18446744073709551615\n");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->comm, "pt (data) worker");
  EXPECT_EQ(st->utime_ticks, 250u);
  EXPECT_EQ(st->stime_ticks, 75u);
  EXPECT_EQ(st->start_ticks, 987654u);
  EXPECT_FALSE(ParseProcStat("1 (x) S 1 2").ok());
  auto tgid = ParseStatusTgid("Name:\tpython3\nUmask:\t0022\nState:\tS\nTgid:\t4321\nPid:\t4322\n");
  ASSERT_TRUE(tgid.ok());
  EXPECT_EQ(*tgid, 4321u);
  auto rchar = ParseIoRchar("rchar: 123456\nwchar: 7\nsyscr: 3\n");
  ASSERT_TRUE(rchar.ok());
  EXPECT_EQ(*rchar, 123456u);
  EXPECT_FALSE(ParseIoRchar("wchar: 7\n").ok());
  auto delay = ParseSchedstatRunDelay("123456789 98765 42\n");
  ASSERT_TRUE(delay.ok());
  EXPECT_EQ(*delay, 98765u);
  EXPECT_FALSE(ParseSchedstatRunDelay("123\n").ok());
}

// The real /proc: this process's main thread is its own process.
TEST(ProcParseTest, ProcfsReadsThisProcess) {
  auto proc = NewProcfsReader();
  const uint64_t pid = static_cast<uint64_t>(::getpid());
  auto task = proc->ReadTask(pid);
  ASSERT_TRUE(task.ok()) << task.status().message();
  EXPECT_EQ(task->tgid, pid);
  auto sample = proc->ReadProcess(pid);
  ASSERT_TRUE(sample.ok());
  EXPECT_FALSE(sample->comm.empty());
  EXPECT_TRUE(sample->has_io);
  EXPECT_GT(sample->rchar, 0u);
  EXPECT_FALSE(proc->ReadTask(0).ok());
}

TEST_F(ReaderAccountingTest, JsonAndPrometheusRenderTheSameReaders) {
  Start(600, "pt_data_worker", 0);
  Request(600, 0.5, 1.5, 1 << 20);
  proc_->procs[600].cpu_seconds = 0.25;
  proc_->procs[600].rchar = 4 << 20;
  At(2);
  StatsSnapshot snap;
  snap.readers = acct_->Snapshot(10, 8);
  snap.readers.advice = "advice";
  const nlohmann::json j = StatsToJson(snap).at("readers");
  EXPECT_EQ(j.at("verdict"), "io-bound");
  EXPECT_DOUBLE_EQ(j.at("rows")[0].at("stall_share").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j.at("rows")[0].at("page_cache_share_estimate").get<double>(), 0.75);
  auto back = ReadersFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->rows.size(), 1u);
  EXPECT_EQ(back->rows[0].pid, 600u);
  EXPECT_EQ(back->rows[0].comm, "pt_data_worker");
  EXPECT_DOUBLE_EQ(back->rows[0].stall_seconds, 1.0);
  EXPECT_EQ(back->rows[0].verdict, ReaderVerdict::kIoBound);
  EXPECT_EQ(back->verdict, ReaderVerdict::kIoBound);
  EXPECT_EQ(back->advice, "advice");
  EXPECT_FALSE(ReadersFromJson(nlohmann::json()).value().enabled);  // an older daemon
  const std::string prom = StatsPrometheus(snap);
  EXPECT_NE(prom.find("mmfs_reader_stall_seconds_total{dataset=\"\",comm=\"pt_data_worker\"} 1\n"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("mmfs_reader_cpu_seconds_total{dataset=\"\",comm=\"pt_data_worker\"} 0.25\n"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("mmfs_readers_verdict{dataset=\"\",verdict=\"io-bound\"} 1\n"),
            std::string::npos);
}

TEST(StatsQueryTest, ParsesWindowAndTop) {
  auto q = ParseStatsQuery("window=2.5&top=3");
  ASSERT_TRUE(q.ok());
  EXPECT_DOUBLE_EQ(q->reader_window_seconds, 2.5);
  EXPECT_EQ(q->reader_top, 3u);
  EXPECT_DOUBLE_EQ(ParseStatsQuery("").value().reader_window_seconds, 10);
  EXPECT_FALSE(ParseStatsQuery("window=0").ok());
  EXPECT_FALSE(ParseStatsQuery("window=ten").ok());
  EXPECT_FALSE(ParseStatsQuery("colour=red").ok());
  EXPECT_FALSE(ParseStatsQuery("top").ok());
}

}  // namespace
}  // namespace mmfs::fs
