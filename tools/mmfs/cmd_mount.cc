// mmfs mount: checks what it can before forking (mount point, dataset, view, memory), then
// serves in a daemon (daemonize.h). mmfs umount is in cmd_umount.cc.

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "base/file_util.h"
#include "base/heap_prefaulter.h"
#include "base/units.h"
#include "cache/tier_stack.h"
#include "fs/control/line_pipe.h"
#include "fs/core/filesystem.h"
#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "fs/format/view_set.h"
#include "fs/fuse/fuse_server.h"
#include "fs/fuse/unmount.h"
#include "fs/memory/memory_budget.h"
#include "fs/memory/memory_governor.h"
#include "fs/origin/delayed_origin.h"
#include "fs/origin/local_file_origin.h"
#include "fs/origin/url.h"
#include "tools/mmfs/commands.h"
#include "tools/mmfs/remote_dataset.h"
#include "tools/mmfs/daemonize.h"
#include "tools/mmfs/huge_page_heap.h"
#include "tools/mmfs/mount_options.h"

namespace mmfs::cli {

namespace {

// `path` absolute and normal, without a trailing slash: as the mount table writes mount points.
std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::string out = std::filesystem::absolute(path, ec).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// The mount point as the mount table will name it: links resolved (the daemon checks its flags
// there, and `mmfs umount` finds it there). The last component only if it is a link itself: a
// stale mount there answers ENOTCONN to every look but lstat's.
std::string MountTableName(const std::string& path) {
  const std::string abs = AbsolutePath(path);
  struct stat st;
  if (::lstat(abs.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* resolved = ::realpath(abs.c_str(), nullptr)) {
      std::string out(resolved);
      std::free(resolved);
      return out;
    }
    return abs;  // a dangling link: CheckMountpoint names the problem
  }
  const std::filesystem::path p(abs);
  if (!p.has_parent_path() || p.parent_path() == p) return abs;
  char* resolved = ::realpath(p.parent_path().c_str(), nullptr);
  if (resolved == nullptr) return abs;  // CheckMountpoint names the problem
  std::filesystem::path parent(resolved);
  std::free(resolved);
  return (parent / p.filename()).string();
}

// The memory budget: the limit (physical or the memory cgroup's), what the daemon needs
// besides its RAM tier and what others under the same limit use now; the RAM tier and the
// buffers are sized within it (fs/memory/memory_budget.h). Without a readable limit, the old
// default: 1/8 of physical memory, 64 MiB to 8 GiB.
// Whether users other than the mounting one reach the mount: allow_other, or an overlay front,
// which serves every user (fs/fuse/overlay_front.h).
bool ServesOtherUsers(const ParsedMountOptions& opts) {
  return opts.mount.overlay_front ||
         std::find(opts.mount.fuse_options.begin(), opts.mount.fuse_options.end(),
                   "allow_other") != opts.mount.fuse_options.end();
}

// Shared-limit mode (fs/memory/memory_budget.h): the plan's, or --memory given where the limit
// could not be read (no plan then, but the user said memory is shared).
bool SharedLimitMode(const ParsedMountOptions& opts) {
  return opts.memory_budget.shared_limit() || opts.memory.has_value();
}

// SharedLimitMode as the plan will decide it, known before the dataset is opened: --memory, or
// no memory option under a cgroup limit (SharedLimitByDefault).
bool SharedLimitModeAhead(const ParsedMountOptions& opts) {
  if (opts.memory.has_value()) return true;
  auto limit = ReadMemoryLimit("/");
  if (!limit.ok()) return false;  // PlanMemory plans nothing then
  BudgetRequest request;  // no memory_bytes: --memory was answered above
  request.ram_cache_bytes = opts.ram_cache;
  return SharedLimitByDefault(*limit, request);
}

// Set when this process is the mount restarted with a huge-page heap (huge_page_heap.h).
bool huge_heap = false;

void PlanMemory(const format::Dataset& dataset, ParsedMountOptions* opts) {
  auto limit = ReadMemoryLimit("/");
  if (!limit.ok()) {
    std::fprintf(stderr, "mmfs: warning: %s; memory budget not checked\n",
                 limit.status().message().c_str());
    uint64_t phys = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                    static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    opts->fs.ram_cache_bytes =
        opts->ram_cache.value_or(std::clamp<uint64_t>(phys / 8, 64ull << 20, 8ull << 30));
    return;
  }
  BudgetRequest request;
  request.memory_bytes = opts->memory;
  request.ram_cache_bytes = opts->ram_cache;
  request.index_bytes = dataset.manifest().index_size;
  request.lock_index = opts->lock_index;
  request.threads = opts->mount.max_threads;
  request.ssd_tier = !opts->cache_dir.empty();
  request.cluster_tier = !opts->cluster_servers.empty();
  request.fill_chunk_bytes =
      opts->fs.fill.mode != fs::FillMode::kOff ? opts->fs.fill.chunk_bytes : 0;
  request.heap_slack_bytes = huge_heap ? kHugeHeapStepBytes : 0;
  const MemorySample now = SampleMemory(*limit);
  // Shared-limit mode by default takes what others hold for good; page cache gives way.
  request.in_use_bytes = SharedLimitByDefault(*limit, request) ? now.unreclaimable_bytes()
                                                               : now.working_bytes();
  opts->memory_budget = PlanMemoryBudget(*limit, request);
  opts->memory_limit = *limit;
  opts->fs.ram_cache_bytes = opts->memory_budget.ram_cache_bytes;
  opts->fs.prefetch_buffer_bytes = opts->memory_budget.prefetch_bytes;
  opts->fs.read_buffer_bytes = opts->memory_budget.read_buffer_bytes;
  if (opts->memory_budget.fill_bytes > 0) {
    opts->fs.fill.max_bytes_in_flight = opts->memory_budget.fill_bytes;
  }
  std::string warning = opts->memory_budget.Warning();
  if (!warning.empty()) std::fprintf(stderr, "mmfs: warning: %s\n", warning.c_str());
}

// A FUSE mount whose daemon died answers ENOTCONN; detach it so the new mount can take its
// place (what a restart after `kill -9` or a crash needs).
Status RecoverStaleMount(const std::string& mnt) {
  // The helper's complaints are expected here (it is tried as a fallback): keep them quiet.
  fs::DetachOptions detach;
  detach.quiet = true;
  if (!fs::DetachMount(mnt, detach).ok()) {
    return Status::IoError(mnt + " has a stale FUSE mount whose daemon died, and it could not "
                           "be detached; run 'mmfs umount -z " + mnt + "'");
  }
  std::fprintf(stderr, "mmfs: detached a stale mount at %s (its daemon had died)\n", mnt.c_str());
  return Status::Ok();
}

Status CheckMountpoint(const std::string& mnt, bool nonempty) {
  // statfs always reaches a FUSE daemon (stat may be answered from cached attributes), so it is
  // the probe that tells a dead mount from a live one.
  struct statfs probe;
  if (::statfs(mnt.c_str(), &probe) != 0 && errno == ENOTCONN) {
    MMFS_RETURN_IF_ERROR(RecoverStaleMount(mnt));
  }
  struct stat st;
  if (::stat(mnt.c_str(), &st) != 0) return Status::FromErrno(errno, "mount point " + mnt);
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument("mount point " + mnt + " is not a directory");
  struct stat parent;
  std::string up = mnt + "/..";
  if (::stat(up.c_str(), &parent) == 0 && (parent.st_dev != st.st_dev || parent.st_ino == st.st_ino)) {
    return Status::AlreadyExists(mnt + " is already a mount point (busy); unmount it first");
  }
  std::error_code ec;
  if (!nonempty && !std::filesystem::is_empty(mnt, ec)) {
    return Status::InvalidArgument("mount point " + mnt +
                                   " is not empty (files there would be hidden; use -o nonempty "
                                   "to mount anyway)");
  }
  return Status::Ok();
}

// Runs the mount; `report` receives "ready" or an error message exactly once.
int Serve(ParsedMountOptions& opts, OpenedDataset local, const ReadinessReport& report) {
  std::unique_ptr<format::Dataset> dataset = std::move(local.dataset);
  RaiseFileLimit();
  // Only in shared-limit mode: otherwise memory is not short, and a blob per mapping costs
  // page faults on every fill and, for a large tier of medium files, many mappings.
  if (SharedLimitMode(opts)) TuneAllocator();
  HeapPrefaulter* prefaulter = nullptr;
  if (huge_heap) {
    spdlog::info("malloc heap on transparent huge pages ({})", kHugeHeapTunables);
    // The heap grows top_pad at a time: have each step populated before the RAM tier reaches
    // it. Here, in the daemon: a thread would not survive the fork.
    prefaulter = HeapPrefaulter::InstallForHeap();
    opts.fs.heap_prefaulter = prefaulter;
    if (prefaulter == nullptr) {
      spdlog::info("heap not populated ahead: the kernel lacks MADV_POPULATE_WRITE (Linux 5.14)");
    }
    opts.fs.heap_on_huge_pages = true;
  }
  std::string dataset_dir = dataset->dir();
  uint64_t files = dataset->manifest().files;
  cache::TierStackOptions to;
  to.ram_bytes = opts.fs.ram_cache_bytes;
  to.expected_keys = files;
  // The RAM tier grows the heap: each insert nudges the prefaulter.
  if (prefaulter != nullptr) to.ram_grew = [prefaulter] { prefaulter->Nudge(); };
  to.name_space = dataset->Identity();
  to.ssd_dir = opts.cache_dir;
  to.ssd_bytes = opts.ssd_cache_bytes;
  to.cluster_servers = opts.cluster_servers;
  auto tiers = cache::BuildTierStack(to);
  if (!tiers.ok()) {
    report(tiers.status().message());
    return 1;
  }
  std::string ssd_note = "no SSD tier (use --cache-dir)";
  if (const cache::CacheTier* ssd = (*tiers)->local_disk()) {
    cache::TierCounters c = ssd->Counters();
    ssd_note = "SSD cache " + FormatBytes(c.bytes_budget) + " in " + opts.cache_dir + " (" +
               FormatCount(c.entries) + " entries kept from before)";
  }
  std::string cluster_note;
  if ((*tiers)->cluster() != nullptr) {
    cluster_note = ", cluster cache on " + std::to_string(opts.cluster_servers.size()) +
                   " memcached server(s)";
  }
  opts.fs.mountpoint = opts.mount.mountpoint;
  opts.fs.hint_open_to_all_only = ServesOtherUsers(opts) && !opts.hint_owner_only;
  // A test hook: a slow origin (tests/integration/reader_mount_test.cc), in microseconds per
  // shard read. Not an option: nobody wants it but a test or a demonstration.
  std::unique_ptr<origin::Origin> shards = std::move(local.origin);
  if (const char* delay = std::getenv("MMFS_TEST_ORIGIN_DELAY_US"); delay != nullptr) {
    const uint64_t us = std::strtoull(delay, nullptr, 10);
    spdlog::warn("MMFS_TEST_ORIGIN_DELAY_US: every shard read waits {} us more", us);
    shards = origin::NewDelayedOrigin(std::move(shards), us);
  }
  fs::Filesystem filesystem(std::move(dataset), opts.fs, std::move(tiers).value(),
                            std::move(shards));
  // Declared after the filesystem: stopped before it goes away.
  std::unique_ptr<fs::MemoryGovernor> governor;
  if (opts.memory_limit) {
    spdlog::info("memory budget: {}", opts.memory_budget.Explain());
    governor = std::make_unique<fs::MemoryGovernor>(
        *opts.memory_limit, opts.memory_budget, opts.push,
        fs::MemoryGovernor::Hooks{
            [&](const fs::MemoryTargets& t) { filesystem.SetMemoryTargets(t); },
            [&] { return filesystem.RamBytesUsed(); }});
    filesystem.SetMemoryGovernor(governor.get());
    governor->Start();
  }
  // Declared after the filesystem: stopped before it goes away.
  std::unique_ptr<fs::LinePipe> hint;
  if (opts.hint) {
    const bool shared = opts.fs.hint_open_to_all_only;
    auto channel = fs::LinePipe::Open(
        fs::LinePipe::DefaultParentDir(), "hint", shared ? 0666 : 0600,
        {[&] { filesystem.BeginHint(); },
         [&](const std::vector<std::string>& lines) { filesystem.AddHintLines(lines); },
         [&] { filesystem.EndHint(); }});
    if (channel.ok()) {
      hint = std::move(channel).value();
      filesystem.SetHintTarget(hint->path());
    } else {
      spdlog::warn("no prefetch hint file: {}", channel.status().message());
    }
  }
  // The control pipe of mmfs warmup (warm, evict), writable by the mounting user only: loading
  // and evicting are the owner's decisions.
  std::unique_ptr<fs::LinePipe> control;
  {
    auto channel = fs::LinePipe::Open(
        fs::LinePipe::DefaultParentDir(), "control", 0600,
        {[] {}, [&](const std::vector<std::string>& lines) { filesystem.HandleControlLines(lines); },
         [] {}});
    if (channel.ok()) {
      control = std::move(channel).value();
      filesystem.SetControlTarget(control->path());
    } else {
      spdlog::warn("no control file (mmfs warmup will not work): {}", channel.status().message());
    }
  }
  fs::FuseOpsConfig config;
  config.fs = &filesystem;
  config.uid = ::getuid();
  config.gid = ::getgid();
  config.readdirplus = opts.readdirplus;
  config.push_prefetched = opts.push;
  config.hold_once = opts.hold_once.value_or(SharedLimitMode(opts));
  config.cache_listings = opts.cache_listings;
  auto server = fs::FuseServer::Mount(&config, opts.mount);
  if (!server.ok()) {
    report(server.status().message());
    return 1;
  }
  if (opts.mount.overlay_front) {
    filesystem.SetControlLinkTarget((*server)->FuseMountpoint() + "/" + fs::kControlDirDirectName);
  }
  Status served = (*server)->Serve([&](const Status& ready) {
    if (ready.ok()) {
      spdlog::info("serving {} ({} files) at {}, RAM cache {}, {}{}", dataset_dir, files,
                   opts.mount.mountpoint, FormatBytes(opts.fs.ram_cache_bytes), ssd_note,
                   cluster_note);
      report(kReady);
    } else {
      report(ready.message());
    }
  });
  server->reset();
  if (!served.ok()) {
    spdlog::error("{}", served.message());
    return 1;
  }
  spdlog::info("unmounted {}", opts.mount.mountpoint);
  return 0;
}

}  // namespace

int RunMount(const MountArgs& in) {
  MountArgs args = in;
  if (args.debug) args.foreground = true;
  DropInheritedDescriptors(!args.foreground);
  huge_heap = ReturnFromHugeHeapRestart();
  // HTTP:// as http://; ftp:// or http:/host refused naming the scheme, not as a missing path.
  auto location = origin::DatasetLocation(args.dataset);
  if (!location.ok()) {
    PrintError("cannot mount " + location.status().message());
    return 1;
  }
  args.dataset = *location;
  // The daemon changes directory to /; keep the paths it needs absolute.
  const bool remote = IsRemoteDataset(args.dataset);
  if (!remote) args.dataset = AbsolutePath(args.dataset);
  args.mountpoint = MountTableName(args.mountpoint);

  auto parsed = ParseMountOptions(args);
  if (!parsed.ok()) {
    PrintError(parsed.status().message());
    return 2;
  }
  ParsedMountOptions opts = std::move(parsed).value();
  // Before anything is opened or started: the restart repeats what came before it.
  if (!huge_heap && opts.huge_pages && !SharedLimitModeAhead(opts)) {
    RestartWithHugeHeap(OwnCommandLine());
  }
  opts.mount.mountpoint = args.mountpoint;
  opts.mount.fsname = "mmfs:" + args.dataset;
  opts.mount.remote_origin = remote;
  opts.mount.debug = args.debug;
  Status s = CheckMountpoint(args.mountpoint, opts.nonempty);
  if (!s.ok()) {
    PrintError(s.message());
    return 1;
  }
  if (remote && opts.cache_dir.empty()) {
    // A remote origin is slow and billed per request: what was read is kept on the SSD tier,
    // within its budget, unless the user moved it (--cache-dir).
    opts.cache_dir = DefaultRemoteCacheDir();
  }
  RemoteFlags remote_flags = args.remote;
  remote_flags.cache_dir = opts.cache_dir;
  if (args.view != 0) remote_flags.views.push_back(args.view);
  auto dataset = OpenDatasetAt(args.dataset, remote_flags);
  // The dataset as messages show it: a URL without its credentials (refused, but still typed).
  const std::string shown = origin::RedactUrl(args.dataset);
  if (!dataset.ok()) {
    PrintError("cannot mount " + shown + ": " + dataset.status().message());
    return 1;
  }
  if (args.view != 0 && dataset->remote) {
    // The copy holds the view's manifest if the server has the view (OpenDatasetAt); its shards
    // are checked by the daemon only (a second origin would ask the server twice), whose
    // readiness report carries a failure to the user all the same.
    const std::string copy = format::ViewDir(dataset->local_dir, args.view) + "/manifest.json";
    if (::access(copy.c_str(), F_OK) != 0) {
      PrintError("cannot mount " + shown + " --view " + std::to_string(args.view) +
                 ": the server has no such view (no views/" + std::to_string(args.view) +
                 "/manifest.json there; build it with 'mmfs view add' on the packed dataset and "
                 "upload its views/ folder)");
      return 1;
    }
    opts.fs.root_view = args.view;
  } else if (args.view != 0) {
    // Checked here, before forking, so that the user sees why: the daemon would otherwise serve
    // the original tree. The views' shards are checked in an origin of their own, closed after
    // the check: the daemon's adds them again (Filesystem).
    origin::LocalFileOrigin check(dataset->dataset->dir());
    format::ViewSet views = format::ViewSet::Open(*dataset->dataset, check);
    if (views.Find(args.view) == nullptr) {
      std::string have;
      for (const auto& v : views.views()) have += (have.empty() ? "" : ", ") + std::to_string(v->side());
      for (const Status& p : views.problems()) PrintError("warning: " + p.message());
      PrintError("cannot mount " + args.dataset + " --view " + std::to_string(args.view) +
                 ": the dataset has no such view (" + (have.empty() ? "none" : "views: " + have) +
                 "; build it with 'mmfs view add " + args.dataset + " " +
                 std::to_string(args.view) + "')");
      return 1;
    }
    opts.fs.root_view = args.view;
  }
  // A dataset from a URL is fetched ahead of its readers once a training job is seen. Its
  // demand misses then read their samples alone: the fill brings the rest, once, and an extent
  // around a miss would fetch the same bytes a second time.
  // With a cluster tier the job's hosts share it (each chunk fetched from the store by one host,
  // read from the cluster by the others). Not for a view's root: its files are not the
  // originals the fill brings.
  const bool fill_by_default = dataset->remote && args.view == 0;
  opts.fs.fill.cluster_self = !opts.cluster_self.empty()
                                  ? opts.cluster_self
                                  : cache::ClusterTier::FindLocalServer(opts.cluster_servers);
  opts.fs.fill.mode =
      opts.fill.value_or(fill_by_default ? fs::FillMode::kAuto : fs::FillMode::kOff);
  if (dataset->remote && opts.fs.fill.mode != fs::FillMode::kOff && !opts.extents_given) {
    opts.fs.extents.mode = fs::ExtentMode::kOff;
  }
  PlanMemory(*dataset->dataset, &opts);
  opts.fs.lock_index = opts.lock_index.value_or(SharedLimitMode(opts));
  // A READ queued for a remote store fails within the store's retry budget, from its arrival.
  if (dataset->remote_origin != nullptr) opts.fs.read_bound = dataset->remote_origin->retry().total;

  if (args.foreground) {
    SetUpLogging(args.log_file, false);
    return Serve(opts, std::move(dataset).value(), [&](const std::string& msg) {
      if (msg == kReady) {
        NotifySystemd("READY=1\nSTATUS=serving " + args.dataset + " at " + args.mountpoint);
      } else {
        PrintError(msg);
      }
    });
  }
  // The remote origin's kept-alive connections are closed before the fork: the parent exits
  // after it, and closing what the daemon goes on using (a TLS shutdown) would break them.
  if (dataset->remote_origin != nullptr) dataset->remote_origin->DropConnections();
  return ForkDaemon(
      args.mountpoint, [&] { SetUpLogging(args.log_file, true); },
      [&](const ReadinessReport& report) {
        return Serve(opts, std::move(dataset).value(), report);
      });
}

}  // namespace mmfs::cli
