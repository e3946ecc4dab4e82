#include "fs/memory/memory_budget.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "base/mount_table.h"
#include "base/units.h"

namespace mmfs {

namespace {

constexpr uint64_t kMiB = 1ull << 20;
// Values at or above this mean "no limit" (v1 writes PAGE_COUNTER_MAX pages, about 2^63).
constexpr uint64_t kUnlimited = 1ull << 60;

std::string Under(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  return (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A file holding one number, or "max" (v2: no limit, as nullopt).
std::optional<uint64_t> ReadNumber(const std::string& path) {
  auto text = Slurp(path);
  if (!text) return std::nullopt;
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty() || s == "max") return std::nullopt;
  char* end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

// The value of `key` in a "key value" per line file (memory.stat, memory.events, meminfo
// without the colon); nullopt if absent.
std::optional<uint64_t> KeyValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    if (!(f >> k >> v)) continue;
    if (!k.empty() && k.back() == ':') k.pop_back();
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<uint64_t> FileKeyValue(const std::string& path, const std::string& key) {
  auto text = Slurp(path);
  if (!text) return std::nullopt;
  return KeyValue(*text, key);
}

// "some avg10=1.23 ..." and "full avg10=..." of a PSI file.
bool ReadPsi(const std::string& path, double* some, double* full) {
  auto text = Slurp(path);
  if (!text) return false;
  std::istringstream in(*text);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    size_t at = line.find("avg10=");
    if (at == std::string::npos) continue;
    double v = std::strtod(line.c_str() + at + 6, nullptr);
    if (line.rfind("some", 0) == 0) *some = v, any = true;
    if (line.rfind("full", 0) == 0) *full = v, any = true;
  }
  return any;
}

// `cgroup_path` (from /proc/self/cgroup) inside a hierarchy mounted at `m`, whose root may be a
// subtree (a container's view): the directory under ROOT.
std::string CgroupDir(const std::string& root, const MountEntry& m, std::string cgroup_path) {
  if (m.root != "/" && cgroup_path.rfind(m.root, 0) == 0) cgroup_path.erase(0, m.root.size());
  std::string dir = Under(root, m.mount_point);
  if (!cgroup_path.empty() && cgroup_path != "/") {
    if (cgroup_path.front() != '/') dir += '/';
    dir += cgroup_path;
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

bool HasOption(const std::string& options, const std::string& want) {
  std::istringstream in(options);
  std::string o;
  while (std::getline(in, o, ',')) {
    if (o == want) return true;
  }
  return false;
}

}  // namespace

const char* LimitSourceName(LimitSource source) {
  switch (source) {
    case LimitSource::kPhysical: return "physical";
    case LimitSource::kCgroupV1: return "cgroup v1";
    case LimitSource::kCgroupV2: return "cgroup v2";
  }
  return "physical";
}

uint64_t MemoryLimit::bytes() const {
  return cgroup_bytes > 0 ? std::min(physical_bytes, cgroup_bytes) : physical_bytes;
}

LimitSource MemoryLimit::source() const {
  if (cgroup_bytes == 0 || cgroup_bytes >= physical_bytes) return LimitSource::kPhysical;
  return cgroup_version == 2 ? LimitSource::kCgroupV2 : LimitSource::kCgroupV1;
}

Result<MemoryLimit> ReadMemoryLimit(const std::string& root) {
  MemoryLimit out;
  auto kib = FileKeyValue(Under(root, "/proc/meminfo"), "MemTotal");
  if (!kib || *kib == 0) {
    return Status::IoError("cannot read the physical memory size from " +
                           Under(root, "/proc/meminfo"));
  }
  out.physical_bytes = *kib * 1024;
  // Which cgroup this process is in, per hierarchy.
  std::optional<std::string> v1_path, v2_path;
  auto self = Slurp(Under(root, "/proc/self/cgroup"));
  if (self) {
    std::istringstream in(*self);
    std::string line;
    while (std::getline(in, line)) {
      size_t a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
      std::string path = line.substr(b + 1);
      if (id == "0" && controllers.empty()) v2_path = path;
      if (HasOption(controllers, "memory")) v1_path = path;
    }
  }
  // Where the hierarchies are mounted. A v1 memory hierarchy wins: on hybrid hosts the unified
  // one has no memory controller.
  std::optional<MountEntry> v1_mount, v2_mount;
  // The first mount of each: the one the system made at boot comes before any later bind of it
  // (a chroot's or a container's /sys bound in), which would only rename the same files.
  for (const MountEntry& m : ReadMountTable(Under(root, "/proc/self/mountinfo"))) {
    if (!v1_mount && m.fs_type == "cgroup" && HasOption(m.super_options, "memory")) v1_mount = m;
    if (!v2_mount && m.fs_type == "cgroup2") v2_mount = m;
  }
  std::string binding;  // the cgroup whose limit binds, when found among the mounted ones
  if (v1_path && v1_mount) {
    out.cgroup_version = 1;
    out.cgroup_dir = CgroupDir(root, *v1_mount, *v1_path);
    // The effective limit counts the ancestors' limits too. The cgroup whose limit binds is the
    // one to watch: its usage counts its descendants', ours and our neighbours' (a loader in a
    // sibling cgroup of the same pod or slice).
    const std::string top = CgroupDir(root, *v1_mount, "/");
    for (std::string d = out.cgroup_dir; d.size() >= top.size();) {
      auto limit = ReadNumber(d + "/memory.limit_in_bytes");
      if (limit && *limit < kUnlimited && (out.cgroup_bytes == 0 || *limit < out.cgroup_bytes)) {
        out.cgroup_bytes = *limit;
        binding = d;
      }
      if (d == top) break;
      d = d.substr(0, d.rfind('/'));
    }
    // Ancestors above the mounted subtree (a container's view) are seen only through this.
    auto hierarchical = FileKeyValue(out.cgroup_dir + "/memory.stat", "hierarchical_memory_limit");
    if (hierarchical && *hierarchical < kUnlimited &&
        (out.cgroup_bytes == 0 || *hierarchical < out.cgroup_bytes)) {
      out.cgroup_bytes = *hierarchical;
      binding.clear();
    }
    if (!binding.empty()) out.cgroup_dir = binding;
  } else if (v2_path && v2_mount) {
    const std::string top = CgroupDir(root, *v2_mount, "/");
    std::string dir = CgroupDir(root, *v2_mount, *v2_path);
    // Only a hierarchy with the memory controller has memory.max files.
    auto controllers = Slurp(top + "/cgroup.controllers");
    if (controllers && controllers->find("memory") != std::string::npos) {
      out.cgroup_version = 2;
      out.cgroup_dir = dir;
      // The smallest memory.max of the cgroup and its ancestors up to the hierarchy's root; the
      // cgroup that has it is the one to watch (as for v1 above).
      for (std::string d = dir; d.size() >= top.size();) {
        auto limit = ReadNumber(d + "/memory.max");
        if (limit && *limit < kUnlimited && (out.cgroup_bytes == 0 || *limit < out.cgroup_bytes)) {
          out.cgroup_bytes = *limit;
          out.cgroup_dir = d;
        }
        if (d == top) break;
        d = d.substr(0, d.rfind('/'));
      }
    }
  }
  return out;
}

MemorySample SampleMemory(const MemoryLimit& limit, const std::string& root) {
  MemorySample s;
  const std::string& d = limit.cgroup_dir;
  // A cgroup without a limit below physical memory: the host's memory is what runs out.
  const int version = limit.source() == LimitSource::kPhysical ? 0 : limit.cgroup_version;
  if (version == 1) {
    s.usage_bytes = ReadNumber(d + "/memory.usage_in_bytes").value_or(0);
    auto stat = Slurp(d + "/memory.stat");
    if (stat) {
      s.reclaimable_bytes = KeyValue(*stat, "total_inactive_file").value_or(0);
      s.active_file_bytes = KeyValue(*stat, "total_active_file").value_or(0);
    }
    s.kernel_reclaimable_bytes = ReadNumber(d + "/memory.kmem.usage_in_bytes").value_or(0);
    s.limit_events = ReadNumber(d + "/memory.failcnt").value_or(0);
    s.oom_kills = FileKeyValue(d + "/memory.oom_control", "oom_kill").value_or(0);
    // v1 has no per-cgroup PSI; the host's would mix in every other cgroup.
  } else if (version == 2) {
    s.usage_bytes = ReadNumber(d + "/memory.current").value_or(0);
    auto stat = Slurp(d + "/memory.stat");
    if (stat) {
      s.reclaimable_bytes = KeyValue(*stat, "inactive_file").value_or(0);
      s.active_file_bytes = KeyValue(*stat, "active_file").value_or(0);
      s.kernel_reclaimable_bytes = KeyValue(*stat, "slab_reclaimable").value_or(0);
    }
    auto events = Slurp(d + "/memory.events");
    if (events) {
      s.limit_events = KeyValue(*events, "max").value_or(0) + KeyValue(*events, "high").value_or(0);
      s.oom_kills = KeyValue(*events, "oom_kill").value_or(0);
    }
    s.has_psi = ReadPsi(d + "/memory.pressure", &s.psi_some_avg10, &s.psi_full_avg10);
  } else {
    auto meminfo = Slurp(Under(root, "/proc/meminfo"));
    if (meminfo) {
      uint64_t total = KeyValue(*meminfo, "MemTotal").value_or(0) * 1024;
      uint64_t avail = KeyValue(*meminfo, "MemAvailable").value_or(0) * 1024;
      s.usage_bytes = total > avail ? total - avail : 0;
      // MemAvailable already counts most file pages as free; what is left in use is not.
    }
    s.has_psi = ReadPsi(Under(root, "/proc/pressure/memory"), &s.psi_some_avg10,
                        &s.psi_full_avg10);
  }
  if (s.reclaimable_bytes > s.usage_bytes) s.reclaimable_bytes = s.usage_bytes;
  if (s.active_file_bytes > s.usage_bytes - s.reclaimable_bytes) {
    s.active_file_bytes = s.usage_bytes - s.reclaimable_bytes;
  }
  s.kernel_reclaimable_bytes = std::min(s.kernel_reclaimable_bytes, s.non_file_bytes());
  return s;
}

bool SharedLimitByDefault(const MemoryLimit& limit, const BudgetRequest& request) {
  return !request.memory_bytes && !request.ram_cache_bytes &&
         limit.source() != LimitSource::kPhysical;
}

MemoryBudget PlanMemoryBudget(const MemoryLimit& limit, const BudgetRequest& request) {
  MemoryBudget b;
  b.limit_bytes = limit.bytes();
  b.limit_source = limit.source();
  b.cgroup_dir = limit.cgroup_dir;
  b.in_use_bytes = request.in_use_bytes;
  const uint64_t left = b.limit_bytes > b.in_use_bytes ? b.limit_bytes - b.in_use_bytes : 0;
  // What the buffers scale with: the memory given, else the limit.
  uint64_t scale = b.limit_bytes;
  if (request.memory_bytes || SharedLimitByDefault(limit, request)) {
    b.memory_given = request.memory_bytes.has_value();
    b.requested_memory_bytes = request.memory_bytes.value_or(left);
    b.memory_bytes = std::max<uint64_t>(1, std::min(b.requested_memory_bytes, left));
    scale = b.memory_bytes;
    b.page_cache_bytes =
        std::clamp<uint64_t>(scale / 8, kMinPageCacheBytes, kMaxPageCacheBytes);
  }
  // Buffers scale down with small limits: 1/16 of the limit (or memory) each, 4 to 64 MiB.
  const uint64_t buffer = std::clamp<uint64_t>(scale / 16, 4 * kMiB, 64 * kMiB);
  b.prefetch_bytes = buffer;
  b.read_buffer_bytes = buffer;
  // The fill's reads in flight: 1/8 of the limit (or memory), 32 to 96 MiB and at least one
  // read, so that a fill in a small container neither starves the RAM tier nor goes uncounted.
  b.fill_bytes = request.fill_chunk_bytes > 0
                     ? std::max(std::clamp<uint64_t>(scale / 8, 32 * kMiB, 96 * kMiB),
                                request.fill_chunk_bytes)
                     : 0;
  b.index_counted_as_read = b.shared_limit() && request.lock_index.value_or(true);
  b.reserved_bytes = kBaseBytes + uint64_t{request.threads} * kPerThreadBytes +
                     (b.index_counted_as_read ? 0 : request.index_bytes) + b.prefetch_bytes +
                     b.read_buffer_bytes + b.fill_bytes +
                     (request.ssd_tier ? kQueueBytes : 0) +
                     (request.cluster_tier ? kQueueBytes : 0) + request.heap_slack_bytes;
  uint64_t room;
  if (b.shared_limit()) {
    // The RAM tier gets what the daemon and the page-cache share leave of the memory given.
    const uint64_t taken = b.reserved_bytes + b.page_cache_bytes;
    room = b.memory_bytes > taken ? b.memory_bytes - taken : 0;
  } else {
    const uint64_t taken = b.reserved_bytes + b.in_use_bytes;
    room = b.limit_bytes > taken ? b.limit_bytes - taken : 0;
  }
  if (request.ram_cache_bytes) {
    b.explicit_ram = true;
    b.requested_ram_bytes = *request.ram_cache_bytes;
    b.clamped = b.requested_ram_bytes > room;
    b.ram_cache_bytes = std::min(b.requested_ram_bytes, room);
  } else if (b.shared_limit()) {
    b.clamped = b.requested_memory_bytes > b.memory_bytes;
    b.ram_cache_bytes = room;
  } else {
    // Modest by default: the kernel's page cache of the mount holds warm files too, and under a
    // shared limit the readers need the rest of it.
    b.ram_cache_bytes = std::min(std::clamp<uint64_t>(b.limit_bytes / 8, 64 * kMiB, 8ull << 30),
                                 room / 2);
  }
  return b;
}

std::string MemoryBudget::Explain() const {
  std::string limit = FormatBytes(limit_bytes) + " " + LimitSourceName(limit_source) +
                      (cgroup_dir.empty() || limit_source == LimitSource::kPhysical
                           ? ""
                           : " (" + cgroup_dir + ")");
  std::string why;
  if (shared_limit() && !memory_given) {
    why = "shared-limit mode, the default under a memory cgroup's limit: what the cgroup's ";
    why += "other processes left of it at mount, ";
    why += FormatBytes(memory_bytes);
    why += ", less the daemon's needs and a page-cache share of ";
    why += FormatBytes(page_cache_bytes);
    why += "; the tier gives way as they grow (--memory sets the amount)";
  } else if (shared_limit() && !explicit_ram) {
    why = "--memory ";
    why += FormatBytes(memory_bytes);
    why += " less the daemon's needs and a page-cache share of ";
    why += FormatBytes(page_cache_bytes);
    if (requested_memory_bytes > memory_bytes) {
      why += " (--memory ";
      why += FormatBytes(requested_memory_bytes);
      why += " clamped to what is left)";
    }
  } else if (!explicit_ram) {
    why = "default: 1/8 of the limit, at most half of what is left";
  } else if (clamped) {
    why = "--ram-cache " + FormatBytes(requested_ram_bytes) + " clamped to what is left";
  } else {
    why = "--ram-cache, fits";
  }
  std::string out = "RAM tier " + FormatBytes(ram_cache_bytes) + " (" + why + "); limit " + limit +
                    ", the daemon needs " + FormatBytes(reserved_bytes) +
                    " besides its RAM tier (prefetch " + FormatBytes(prefetch_bytes) +
                    ", read buffer " + FormatBytes(read_buffer_bytes) +
                    (fill_bytes > 0 ? ", the fill's reads " + FormatBytes(fill_bytes) : "") +
                    (index_counted_as_read ? "; the locked index counted as it is read" : "") +
                    "), others use " +
                    FormatBytes(in_use_bytes);
  if (shared_limit()) {
    out += "; left to the kernel for the mount's page cache: ";
    out += FormatBytes(page_cache_bytes);
  }
  return out;
}

std::string MemoryBudget::Warning() const {
  if (shared_limit() && !memory_given && ram_cache_bytes == 0) {
    return "the " + FormatBytes(limit_bytes) + " " + LimitSourceName(limit_source) +
           " limit leaves no room for a RAM tier: others use " + FormatBytes(in_use_bytes) +
           ", the daemon needs " + FormatBytes(reserved_bytes) + " and the page cache's share is " +
           FormatBytes(page_cache_bytes) + "; reading without a RAM tier";
  }
  if (shared_limit() && !explicit_ram && ram_cache_bytes == 0) {
    // Mounting still works (every read goes to the origin), but nobody asks for that this way.
    std::string w = "--memory ";
    w += FormatBytes(requested_memory_bytes);
    w += " leaves no room for a RAM tier: the daemon needs ";
    w += FormatBytes(reserved_bytes);
    w += " and the page cache's share is ";
    w += FormatBytes(page_cache_bytes);
    if (clamped) {
      w += ", and only ";
      w += FormatBytes(memory_bytes);
      w += " is left under the limit";
    }
    w += "; reading without a RAM tier";
    return w;
  }
  if (!clamped) return "";
  if (shared_limit() && !explicit_ram) {
    std::string w = "--memory ";
    w += FormatBytes(requested_memory_bytes);
    w += " does not fit: the memory limit is ";
    w += FormatBytes(limit_bytes);
    w += " (";
    w += LimitSourceName(limit_source);
    w += ") and others use ";
    w += FormatBytes(in_use_bytes);
    w += "; using ";
    w += FormatBytes(memory_bytes);
    return w;
  }
  return "--ram-cache " + FormatBytes(requested_ram_bytes) + " does not fit: the memory limit is " +
         FormatBytes(limit_bytes) + " (" + LimitSourceName(limit_source) + "), the daemon needs " +
         FormatBytes(reserved_bytes) + " besides its RAM tier and others use " +
         FormatBytes(in_use_bytes) + "; using a RAM tier of " + FormatBytes(ram_cache_bytes);
}

const char* PressureName(Pressure p) {
  switch (p) {
    case Pressure::kLow: return "low";
    case Pressure::kModerate: return "moderate";
    case Pressure::kHigh: return "high";
    case Pressure::kCritical: return "critical";
  }
  return "low";
}

Pressure AssessPressure(uint64_t limit_bytes, const MemorySample& prev, const MemorySample& cur) {
  const double ratio = limit_bytes == 0 ? 0.0
                                        : static_cast<double>(cur.working_bytes()) /
                                              static_cast<double>(limit_bytes);
  const bool limit_hit = cur.limit_events > prev.limit_events;
  if (cur.oom_kills > prev.oom_kills || ratio >= kCriticalFraction ||
      (cur.has_psi && cur.psi_full_avg10 >= 10.0)) {
    return Pressure::kCritical;
  }
  // Hitting the limit alone is normal when page cache fills it (the kernel drops clean pages);
  // it counts only with a working set well into the limit.
  if (ratio >= kHighFraction || (cur.has_psi && cur.psi_some_avg10 >= 10.0) ||
      (limit_hit && ratio >= kModerateFraction)) {
    return Pressure::kHigh;
  }
  if (ratio >= kModerateFraction || (cur.has_psi && cur.psi_some_avg10 >= 2.0)) {
    return Pressure::kModerate;
  }
  return Pressure::kLow;
}

ResidentMemory ProcessResident() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages_total = 0, pages_resident = 0, pages_shared = 0;
  if (!(statm >> pages_total >> pages_resident >> pages_shared)) return {};
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return {pages_resident * page, pages_shared * page};
}

}  // namespace mmfs
