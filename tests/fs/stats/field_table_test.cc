// Every field of every stats table (stat_fields.h, memory_fields.h) comes back through the JSON
// document and, where the table exports it, is in the Prometheus text with its value: a field
// added to a table cannot be rendered in one place and forgotten in another.
#include <gtest/gtest.h>

#include <memory>

#include <set>
#include <sstream>
#include <string>

#include "fs/stats/memory_fields.h"
#include "fs/stats/stat_fields.h"
#include "fs/stats/stats_format.h"
#include "fs/stats/stats_parse.h"
#include "fs/stats/stats_prometheus.h"

namespace mmfs::fs {
namespace {

// Kind is named in full: the unity build puts another test's `Kind` beside these.
template <typename S>
using Field = field_table::Field<S>;

// A snapshot with one of each listed part (a tier, a pattern, a view, a cluster server, a
// what-if point, a remote origin) and the sections rendered only when on (governed memory, a
// shared fill), so that every table's struct is in the document.
StatsSnapshot WithEveryPart() {
  StatsSnapshot s;
  s.requests.push_back({"read", 1, 0, 2, 3});
  s.tiers.push_back({"ram", {}});
  s.readahead.patterns.emplace_back("sequential", cache::PrefetchCounters{});
  s.views.emplace_back().side = 256;
  s.cluster = cache::ClusterCounters{};
  s.cluster->servers.emplace_back().server = "10.0.0.1:11211";
  s.what_if.ram.points.emplace_back();
  s.origin.remote = origin::RemoteStatsSnapshot{};
  s.origin.remote->url = "https://store.example/ds.mmfs";
  s.memory.governed = true;
  s.fill.mode = "on";
  s.fill.shared = true;
  return s;
}

// Each field that is read back set to a value of its own; a flag to the opposite of its
// default.
template <typename S, size_t N>
void SetEach(const Field<S> (&table)[N], S* s, uint64_t* n) {
  for (const Field<S>& f : table) {
    if (f.u64 != nullptr) {
      s->*f.u64 = ++*n;
    } else if (f.f64 != nullptr) {
      s->*f.f64 = static_cast<double>(++*n) + 0.5;
    } else if (f.flag != nullptr) {
      // On the heap: GCC 12 at -O3 takes a local S{} read through a member pointer for
      // uninitialized.
      const auto defaults = std::make_unique<S>();
      s->*f.flag = !((*defaults).*f.flag);
    } else if (f.text != nullptr) {
      s->*f.text = "text " + std::to_string(++*n);
    }
  }
}

template <typename S>
bool Same(const Field<S>& f, const S& a, const S& b) {
  if (f.u64 != nullptr) return a.*f.u64 == b.*f.u64;
  if (f.f64 != nullptr) return a.*f.f64 == b.*f.f64;
  if (f.flag != nullptr) return a.*f.flag == b.*f.flag;
  if (f.text != nullptr) return a.*f.text == b.*f.text;
  return true;  // derived: not read back
}

// A sample of f's metric with f's label and f's value in `prom`.
template <typename S>
bool HasSample(const std::string& prom, const Field<S>& f, const S& s) {
  std::ostringstream value;
  value << ' ' << f.Number(s);
  const std::string head = std::string(f.metric.name) + "{";
  std::istringstream lines(prom);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(head, 0) != 0) continue;
    if (*f.metric.label != '\0' && line.find(f.metric.label) == std::string::npos) continue;
    const std::string v = value.str();
    if (line.size() > v.size() && line.compare(line.size() - v.size(), v.size(), v) == 0) {
      return true;
    }
  }
  return false;
}

// `at` finds the table's struct in a snapshot.
template <typename S, size_t N, typename At>
void ExpectEveryField(const char* group, const Field<S> (&table)[N], At at) {
  SCOPED_TRACE(group);
  std::set<std::string> keys;
  for (const Field<S>& f : table) {
    if (f.key != nullptr) {
      EXPECT_TRUE(keys.insert(f.key).second) << "twice: " << f.key;
    }
    EXPECT_TRUE(f.key != nullptr || f.exported()) << "a field neither written nor exported";
  }
  StatsSnapshot s = WithEveryPart();
  uint64_t n = 100;
  SetEach(table, &at(s), &n);
  auto back = StatsFromJson(StatsToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (const Field<S>& f : table) {
    EXPECT_TRUE(Same(f, at(s), at(*back))) << "not read back: " << (f.key ? f.key : "?");
  }
  const std::string prom = StatsPrometheus(s);
  for (const Field<S>& f : table) {
    if (!f.exported()) continue;
    const std::string type =
        std::string("# TYPE ") + f.metric.name +
        (f.metric.kind == field_table::Kind::kCounter ? " counter\n" : " gauge\n");
    EXPECT_NE(prom.find(type), std::string::npos) << type;
    EXPECT_TRUE(HasSample(prom, f, at(s)))
        << "no sample: " << f.metric.name << " " << f.metric.label << "\n"
        << prom;
  }
}

TEST(FieldTableTest, EveryFieldComesBackAndIsExported) {
  using namespace stat_fields;
  using Snap = StatsSnapshot;
  ExpectEveryField("snapshot", kSnapshotFields, [](Snap& s) -> Snap& { return s; });
  ExpectEveryField(
      "dataset", kDatasetFields, [](Snap & s) -> auto& { return s.dataset; });
  ExpectEveryField(
      "cpu", kCpuFields, [](Snap & s) -> auto& { return s.cpu; });
  ExpectEveryField(
      "transport", kTransportFields, [](Snap & s) -> auto& { return s.transport; });
  ExpectEveryField(
      "requests", kRequestFields, [](Snap & s) -> auto& { return s.requests[0]; });
  ExpectEveryField(
      "tier", kTierFields, [](Snap & s) -> auto& { return s.tiers[0].counters; });
  ExpectEveryField(
      "read_buffer", kReadBufferFields, [](Snap & s) -> auto& { return s.read_buffer; });
  ExpectEveryField(
      "origin", kOriginFields, [](Snap & s) -> auto& { return s.origin; });
  ExpectEveryField(
      "queued", kMissQueueFields, [](Snap & s) -> auto& { return s.origin.queued; });
  ExpectEveryField(
      "rereads", kRereadFields, [](Snap & s) -> auto& { return s.origin.rereads; });
  ExpectEveryField(
      "cost_model", kCostFields, [](Snap & s) -> auto& { return s.origin.cost; });
  ExpectEveryField(
      "streamed", kStreamedFields, [](Snap & s) -> auto& { return s.origin.streamed; });
  ExpectEveryField(
      "remote", kRemoteFields, [](Snap & s) -> auto& { return *s.origin.remote; });
  ExpectEveryField(
      "readahead", kReadaheadFields, [](Snap & s) -> auto& { return s.readahead; });
  ExpectEveryField(
      "pattern", kPatternFields, [](Snap & s) -> auto& { return s.readahead.patterns[0].second; });
  ExpectEveryField(
      "hint", kHintFields, [](Snap & s) -> auto& { return s.readahead.hint; });
  ExpectEveryField(
      "pushed", kPushFields, [](Snap & s) -> auto& { return s.readahead.pushed; });
  ExpectEveryField(
      "cluster", kClusterFields, [](Snap & s) -> auto& { return *s.cluster; });
  ExpectEveryField(
      "cluster server", kClusterServerFields,
      [](Snap & s) -> auto& { return s.cluster->servers[0]; });
  ExpectEveryField(
      "what_if", kWhatIfCurveFields, [](Snap & s) -> auto& { return s.what_if.ram; });
  ExpectEveryField(
      "what_if point", kWhatIfPointFields,
      [](Snap & s) -> auto& { return s.what_if.ram.points[0]; });
  ExpectEveryField(
      "warmup", kWarmupFields, [](Snap & s) -> auto& { return s.warmup; });
  ExpectEveryField(
      "view", kViewFields, [](Snap & s) -> auto& { return s.views[0]; });
  ExpectEveryField(
      "extents", kExtentFields, [](Snap & s) -> auto& { return s.extents; });
  ExpectEveryField(
      "fill", kFillFields, [](Snap & s) -> auto& { return s.fill; });
  ExpectEveryField(
      "fill hosts", kFillHostsFields, [](Snap & s) -> auto& { return s.fill.hosts; });
  ExpectEveryField(
      "memory", kMemoryFields, [](Snap & s) -> auto& { return s.memory; });
  ExpectEveryField(
      "budget", kBudgetFields, [](Snap & s) -> auto& { return s.memory.plan; });
  ExpectEveryField(
      "sample", kSampleFields, [](Snap & s) -> auto& { return s.memory.governor.last; });
  ExpectEveryField(
      "governor", kGovernorFields, [](Snap & s) -> auto& { return s.memory.governor; });
  ExpectEveryField(
      "targets", kTargetFields, [](Snap & s) -> auto& { return s.memory.governor.targets; });
}

// A family's samples follow its one header: a table that split a family, or two tables that
// shared a metric name, would print it twice.
TEST(FieldTableTest, EachFamilyIsDeclaredOnce) {
  const std::string prom = StatsPrometheus(WithEveryPart());
  std::istringstream lines(prom);
  std::string line;
  std::set<std::string> families;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    EXPECT_TRUE(families.insert(line).second) << line;
  }
  EXPECT_GT(families.size(), 50u);
}

}  // namespace
}  // namespace mmfs::fs
