// Field tables: each plain value of a stats group (a struct of the snapshot, stats.h) named
// once, with its JSON key and, if it is exported, its Prometheus metric, so that the JSON writer
// (stats_format.cc), its parser (stats_parse.cc) and the Prometheus text (stats_prometheus.cc)
// iterate the same list and cannot disagree. The tables are stat_fields.h and memory_fields.h;
// this is the machinery that reads them: the fields and the Prometheus renderer here, the JSON
// writer and reader in field_json.h (apart, so that the Prometheus text need not parse
// nlohmann/json).
//
// A field is a member pointer (uint64_t, double, bool or std::string) or a derived value (a
// function of the struct: written and exported, never read back). Its JSON key may be a path
// ("queued.reads"): the field goes in a nested object of the group's. Fields of one Prometheus
// family (one metric name, told apart by a label) are listed next to each other; the family's
// help is its first field's.
//
// Thread-safety: the tables are constants; the functions are pure; a PromText is one caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mmfs::fs::field_table {

enum class Kind { kCounter, kGauge };

// Where a field is exported; a null name: the JSON alone.
struct Metric {
  const char* name = nullptr;
  Kind kind = Kind::kCounter;
  const char* help = "";
  const char* label = "";  // `outcome="used"`: which sample of its family
};

constexpr Metric Counter(const char* name, const char* help, const char* label = "") {
  return {name, Kind::kCounter, help, label};
}
constexpr Metric Gauge(const char* name, const char* help, const char* label = "") {
  return {name, Kind::kGauge, help, label};
}

template <typename S>
struct Field {
  // In the group's JSON object; "a.b": key b of the object a; null: a derived value exported
  // to Prometheus alone.
  const char* key = "";
  Metric metric;
  // Exactly one of these is set.
  uint64_t S::*u64 = nullptr;
  double S::*f64 = nullptr;
  bool S::*flag = nullptr;
  std::string S::*text = nullptr;
  uint64_t (*derived)(const S&) = nullptr;

  bool exported() const { return metric.name != nullptr; }
  // The value as Prometheus prints it (a string has none).
  double Number(const S& s) const {
    if (u64 != nullptr) return static_cast<double>(s.*u64);
    if (f64 != nullptr) return s.*f64;
    if (flag != nullptr) return s.*flag ? 1 : 0;
    if (derived != nullptr) return static_cast<double>(derived(s));
    return 0;
  }
};

// One line of a table: F("hits", &TierCounters::hits, Counter("mmfs_cache_hits_total", "...")).
template <typename S>
constexpr Field<S> F(const char* key, uint64_t S::*m, Metric metric = {}) {
  Field<S> f{key, metric};
  f.u64 = m;
  return f;
}
template <typename S>
constexpr Field<S> F(const char* key, double S::*m, Metric metric = {}) {
  Field<S> f{key, metric};
  f.f64 = m;
  return f;
}
template <typename S>
constexpr Field<S> F(const char* key, bool S::*m, Metric metric = {}) {
  Field<S> f{key, metric};
  f.flag = m;
  return f;
}
template <typename S>
constexpr Field<S> F(const char* key, std::string S::*m) {
  Field<S> f{key, {}};
  f.text = m;
  return f;
}
// A value computed from the others (a sum, a share): rendered, not parsed. S is named
// (Derived<OriginStats>(...)) so that a captureless lambda converts.
template <typename S>
constexpr Field<S> Derived(const char* key, std::type_identity_t<uint64_t (*)(const S&)> get,
                           Metric metric = {}) {
  Field<S> f{key, metric};
  f.derived = get;
  return f;
}

// The Prometheus text exposition format, family by family.
class PromText {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    out_ << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
  }
  // Values print as doubles (6 significant digits), as they did when this text was rendered
  // from the parsed JSON document.
  void Sample(const std::string& name, const std::string& labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << value << '\n';
  }
  void Single(const std::string& name, const char* type, const char* help,
              const std::string& labels, double value) {
    Family(name, type, help);
    Sample(name, labels, value);
  }

  // The exported fields of `table`, a sample per instance (its labels, the struct) in each
  // family. A family with no instance still has its header.
  template <typename S, size_t N>
  void Fields(const Field<S> (&table)[N],
              const std::vector<std::pair<std::string, const S*>>& instances) {
    const char* family = nullptr;
    for (const Field<S>& f : table) {
      if (!f.exported()) continue;
      if (family == nullptr || std::string_view(family) != f.metric.name) {
        family = f.metric.name;
        Family(family, f.metric.kind == Kind::kCounter ? "counter" : "gauge", f.metric.help);
      }
      for (const auto& [labels, s] : instances) {
        std::string all = labels;
        if (*f.metric.label != '\0') {
          if (!all.empty()) all += ',';
          all += f.metric.label;
        }
        Sample(family, all, f.Number(*s));
      }
    }
  }
  template <typename S, size_t N>
  void Fields(const Field<S> (&table)[N], const std::string& labels, const S& s) {
    Fields(table, std::vector<std::pair<std::string, const S*>>{{labels, &s}});
  }

  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace mmfs::fs::field_table
