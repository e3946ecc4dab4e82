#include "fs/readers/proc_reader.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

#include "base/file_util.h"

namespace mmfs::fs {

namespace {

bool ParseU64(std::string_view s, uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The value of "Key:<spaces>N" in a /proc key-value file.
Result<uint64_t> KeyValue(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') {
      continue;
    }
    std::string_view v = line.substr(key.size() + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    uint64_t n = 0;
    if (!ParseU64(v, &n)) break;
    return n;
  }
  return Status::Corruption("no " + std::string(key) + " line");
}

class ProcfsReader : public ProcReader {
 public:
  explicit ProcfsReader(std::string root)
      : root_(std::move(root)),
        ns_per_tick_(1e9 / static_cast<double>(std::max<long>(1, ::sysconf(_SC_CLK_TCK)))) {}

  Result<TaskInfo> ReadTask(uint64_t tid) override {
    const std::string dir = root_ + "/" + std::to_string(tid);
    auto status = ReadWholeFile(dir + "/status", 1 << 16);
    if (!status.ok()) return Status::NotFound("thread " + std::to_string(tid) + " is gone");
    auto stat_text = ReadWholeFile(dir + "/stat", 1 << 16);
    if (!stat_text.ok()) return Status::NotFound("thread " + std::to_string(tid) + " is gone");
    auto tgid = ParseStatusTgid(*status);
    if (!tgid.ok()) return tgid.status();
    auto stat = ParseProcStat(*stat_text);
    if (!stat.ok()) return stat.status();
    return TaskInfo{*tgid, stat->start_ticks};
  }

  Result<ProcessSample> ReadProcess(uint64_t tgid) override {
    const std::string dir = root_ + "/" + std::to_string(tgid);
    auto stat_text = ReadWholeFile(dir + "/stat", 1 << 16);
    if (!stat_text.ok()) return Status::NotFound("process " + std::to_string(tgid) + " is gone");
    auto stat = ParseProcStat(*stat_text);
    if (!stat.ok()) return stat.status();
    ProcessSample s;
    s.comm = stat->comm;
    s.start_ticks = stat->start_ticks;
    s.cpu_ns = static_cast<uint64_t>(static_cast<double>(stat->utime_ticks + stat->stime_ticks) *
                                     ns_per_tick_);
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(dir + "/task", ec)) {
      auto text = ReadWholeFile(task.path().string() + "/schedstat", 256);
      if (!text.ok()) continue;  // a thread that just ended
      auto delay = ParseSchedstatRunDelay(*text);
      if (delay.ok()) s.runq_ns += *delay;
    }
    auto io = ReadWholeFile(dir + "/io", 1 << 16);
    if (io.ok()) {
      auto rchar = ParseIoRchar(*io);
      if (rchar.ok()) {
        s.has_io = true;
        s.rchar = *rchar;
      }
    }
    return s;
  }

 private:
  const std::string root_;
  const double ns_per_tick_;
};

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::Corruption("stat: no command name");
  }
  ProcStat st;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields after the name, numbered as in proc(5): the state is field 3.
  std::vector<std::string_view> fields;
  size_t pos = close + 1;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    if (end > pos) fields.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  auto field = [&](int n, uint64_t* out) {
    const size_t i = static_cast<size_t>(n - 3);
    return i < fields.size() && ParseU64(fields[i], out);
  };
  if (!field(14, &st.utime_ticks) || !field(15, &st.stime_ticks) || !field(22, &st.start_ticks)) {
    return Status::Corruption("stat: too few fields");
  }
  return st;
}

Result<uint64_t> ParseStatusTgid(std::string_view text) { return KeyValue(text, "Tgid"); }

Result<uint64_t> ParseSchedstatRunDelay(std::string_view text) {
  const size_t a = text.find(' ');
  if (a == std::string_view::npos) return Status::Corruption("schedstat: one field");
  const size_t b = text.find(' ', a + 1);
  if (b == std::string_view::npos) return Status::Corruption("schedstat: two fields");
  uint64_t n = 0;
  if (!ParseU64(text.substr(a + 1, b - a - 1), &n)) return Status::Corruption("schedstat");
  return n;
}
Result<uint64_t> ParseIoRchar(std::string_view text) { return KeyValue(text, "rchar"); }

std::unique_ptr<ProcReader> NewProcfsReader(std::string root) {
  return std::make_unique<ProcfsReader>(std::move(root));
}

}  // namespace mmfs::fs
