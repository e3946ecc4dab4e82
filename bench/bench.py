#!/usr/bin/python3
"""mmfs benchmarks: mmfs side by side with the native folder, kernel squashfs and squashfuse_ll.

Run as root from the repository (after `bash tools/install-deps.sh --bench` and a release build):
    /usr/bin/python3 bench/bench.py [--samples 20000] [--repeats 3] [--throttle] [--million]
    /usr/bin/python3 bench/bench.py --extents     (the extents figures only, ~15 min)

Every figure is the median of --repeats runs, reported as seconds and as a ratio to the native
folder measured in the same run (ratio = native time / peer time: above 1 is faster than native).
"Cold" drops the page cache (and restarts FUSE daemons, emptying their caches) before each run;
"warm" runs right after an identical run. --throttle adds the slow-origin profiles, limiting reads
from the disk with the blkio cgroup (v1): the reader processes for the native folder and kernel
squashfs, the daemon for FUSE peers. Results: bench/results/<timestamp>.jsonl and latest.md.
"""
import argparse
import atexit
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import shlex
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# MMFS_BUILD picks another build of mmfs (for example an older commit's, to compare before and
# after a change with the same bench in one session).
BUILD = os.environ.get("MMFS_BUILD", os.path.join(REPO, "build", "release"))
MMFS = os.path.join(BUILD, "mmfs")
GEN = os.path.join(BUILD, "mmfs-gen-dataset")
PY = "/usr/bin/python3"
WORKLOADS = os.path.join(HERE, "workloads.py")

PROFILES = {  # slow origins: (bytes/s, read IOPS)
    "cloud-volume": (125_000_000, 3000),
    "hard-disk": (200_000_000, 300),
    # An object store behind a block interface: plenty of bandwidth, tens of ms per request.
    "slow-object-store": (400_000_000, 50),
}
# The profiles of --throttle's peer table. Not slow-object-store: at 50 IOPS the native folder's
# in-order read alone (40,000 files at 20,000 samples) would take over ten minutes; --extents
# uses it with time limits.
PEER_TABLE_PROFILES = ("cloud-volume", "hard-disk")

# What --extents throttles its emulated SSD to (see EmulatedSsd): a SATA-class local SSD, so
# that the SSD tier is not served at RAM speed. Not an origin profile, hence not in PROFILES.
LOCAL_SSD = (500_000_000, 20_000)

# The mmfs sides of --extents by role, (label, mount options), kept here so that a variant of the
# policy is one edit (or --extents-mmfs ROLE=OPTIONS) away: "off" reads one sample per origin
# read, as before extents existed; "auto" is the policy under test. The options are passed
# explicitly, not left to the default, so that a binary without them fails instead of being
# measured as "auto". Each part adds its own tier sizes (--ram-cache, --cache-dir) after these.
EXTENTS_MMFS = {
    "off": ("mmfs extents=off", ["-o", "extents=off"]),
    "auto": ("mmfs extents=auto", ["-o", "extents=auto"]),
}


# Set by a script that wants the time of day on every line (bench/million.py, whose steps run
# for minutes to hours).
LOG_TIMES = False


def log(msg):
    if LOG_TIMES:
        msg = time.strftime("%H:%M:%S ") + msg
    print(msg, file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, text=True, capture_output=True, **kw)


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def is_mounted(path):
    return run(["mountpoint", "-q", path], check=False).returncode == 0


def wait_for(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def pids_of(pattern):
    out = run(["pgrep", "-f", pattern], check=False).stdout.split()
    return [int(p) for p in out if int(p) != os.getpid()]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def evacuate(cgroup, root):
    """Moves every process of a v1 cgroup back to the hierarchy's root, so it can be removed."""
    with open(f"{root}/cgroup.procs", "w") as dest:
        for pid in open(f"{cgroup}/cgroup.procs").read().split():
            try:
                dest.write(f"{pid}\n")
                dest.flush()
            except OSError:
                pass  # exited meanwhile


class V1Cgroup:
    """A cgroup (v1) named `name` in one hierarchy; processes are added by pid."""

    def __init__(self, hierarchy, name="mmfs-bench"):
        self.root = f"/sys/fs/cgroup/{hierarchy}"
        self.path = f"{self.root}/{name}"

    def write(self, name, value):
        with open(f"{self.path}/{name}", "w") as f:
            f.write(f"{value}\n")

    def add(self, pid):
        self.write("cgroup.procs", pid)

    def remove(self):
        evacuate(self.path, self.root)
        os.rmdir(self.path)


class KernelRingOffer:
    """Has the kernel offer FUSE over io_uring to new mounts (enable_uring=Y) while in use, and
    puts the setting back after."""
    PATH = "/sys/module/fuse/parameters/enable_uring"

    def __enter__(self):
        with open(self.PATH) as f:
            self.before = f.read().strip()
        with open(self.PATH, "w") as f:
            f.write("Y")
        log(f"kernel: FUSE over io_uring offered for the run ({self.PATH}: {self.before} -> Y)")
        return self

    def __exit__(self, *exc):
        with open(self.PATH, "w") as f:
            f.write(self.before)


def device_of(path):
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"


class Throttle(V1Cgroup):
    """Limits reads from the device holding `path` (blkio.throttle.*), and from the devices of
    `also`, (path, bps, iops) each. The limits are per device: a directory on another device
    (an SSD tier's) is not slowed by the origin's. bps = iops = 0 sets no limit but still counts
    the cgroup's reads (reads())."""

    def __init__(self, path, bps, iops, also=()):
        super().__init__("blkio")
        self.dev = device_of(path)
        self.bps, self.iops = bps, iops
        self.limits = [(self.dev, bps, iops)] + [(device_of(p), b, i) for p, b, i in also]

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        for dev, bps, iops in self.limits:
            self.write("blkio.throttle.read_bps_device", f"{dev} {bps}")
            self.write("blkio.throttle.read_iops_device", f"{dev} {iops}")
        return self

    def __exit__(self, *exc):
        for dev, _, _ in self.limits:
            self.write("blkio.throttle.read_bps_device", f"{dev} 0")
            self.write("blkio.throttle.read_iops_device", f"{dev} 0")
        self.remove()

    def reads(self, dev=None):
        """(bytes, requests) the cgroup's processes have read from `dev` (the origin's by
        default) so far."""
        dev = dev or self.dev
        out = []
        for name in ("blkio.throttle.io_service_bytes", "blkio.throttle.io_serviced"):
            with open(f"{self.path}/{name}") as f:
                out.append(next((int(p[2]) for p in (line.split() for line in f)
                                 if len(p) == 3 and p[0] == dev and p[1] == "Read"), 0))
        return tuple(out)


class Peer:
    name = "?"
    fuse = False

    def __init__(self, work):
        self.work = work
        self.mount_seconds = None
        self.pack_seconds = None
        self.pack_bytes = None

    def start(self):
        pass

    def stop(self):
        pass

    def daemon_pid(self):
        return None

    def restart(self):
        self.stop()
        drop_caches()
        self.start()


class Native(Peer):
    name = "native"

    def __init__(self, work, src):
        super().__init__(work)
        self.root = src
        self.mount_seconds = 0.0

    @property
    def pack_bytes(self):
        """The folder's bytes, counted when first asked: a walk with a stat per file, which at
        a million samples takes a while and which most uses of a Native never need."""
        if self._bytes is None:
            self._bytes = dir_bytes(self.root)
        return self._bytes

    @pack_bytes.setter
    def pack_bytes(self, value):
        self._bytes = value


class KernelSquashfs(Peer):
    name = "squashfs"

    def __init__(self, work, image, pack_seconds):
        super().__init__(work)
        self.image = image
        self.root = os.path.join(work, "mnt-squashfs")
        self.pack_seconds = pack_seconds
        # Made by prepare() only when the peers' table runs.
        self.pack_bytes = os.path.getsize(image) if os.path.exists(image) else 0

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        t = time.monotonic()
        run(["mount", "-t", "squashfs", "-o", "loop,ro", self.image, self.root])
        self.mount_seconds = time.monotonic() - t

    def stop(self):
        if is_mounted(self.root):
            run(["umount", self.root])


class SquashfuseLL(KernelSquashfs):
    name = "squashfuse_ll"
    fuse = True

    def __init__(self, work, image, pack_seconds):
        super().__init__(work, image, pack_seconds)
        self.root = os.path.join(work, "mnt-squashfuse")

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        t = time.monotonic()
        run(["squashfuse_ll", self.image, self.root])
        wait_for(lambda: is_mounted(self.root), 30)
        self.mount_seconds = time.monotonic() - t

    def stop(self):
        if is_mounted(self.root):
            run(["fusermount3", "-u", self.root])
        wait_for(lambda: not self.daemon_pid(), 20)

    def daemon_pid(self):
        pids = pids_of(f"squashfuse_ll {self.image} {self.root}")
        return pids[0] if pids else None


class Mmfs(Peer):
    name = "mmfs"
    fuse = True

    def __init__(self, work, dataset, pack_seconds, options=(), name=None):
        super().__init__(work)
        self.dataset = dataset
        if name:
            self.name = name
        self.root = os.path.join(work, "mnt-" + self.name.replace(" ", "").replace("--", "-"))
        self.options = list(options)
        self.pack_seconds, self.pack_bytes = pack_seconds, dir_bytes(dataset)

    def start(self, preexec_fn=None):
        os.makedirs(self.root, exist_ok=True)
        t = time.monotonic()
        run([MMFS, "mount", self.dataset, self.root] + self.options, preexec_fn=preexec_fn)
        self.mount_seconds = time.monotonic() - t

    def stop(self):
        if is_mounted(self.root):
            run([MMFS, "umount", self.root])
        wait_for(lambda: not self.daemon_pid(), 20)

    def daemon_pid(self):
        # Not a prefix match: mnt-mmfs must not find the daemon of mnt-mmfs-overlay.
        pids = pids_of(f"mount {self.dataset} {self.root}( |$)")
        return pids[0] if pids else None


def prepare(args, work):
    src = os.path.join(work, f"src-{args.samples}")
    if not os.path.isdir(os.path.join(src, "train")):
        log(f"generating {args.samples} samples in {src}")
        run([GEN, src, "--samples", str(args.samples), "--classes", "100", "--seed", "1",
             "--min-side", "160", "--max-side", "640"])
    filelist = os.path.join(work, f"filelist-{args.samples}.txt")
    if not os.path.exists(filelist):
        rel = sorted(os.path.relpath(os.path.join(d, f), src)
                     for d, _, fs in os.walk(src) for f in fs if f.endswith(".jpg"))
        with open(filelist, "w") as f:
            f.write("\n".join(rel) + "\n")
    image = os.path.join(work, f"data-{args.samples}.sqfs")
    sq_seconds = None
    # Only the peers' table needs the squashfs image (squashfs-tools may be missing otherwise).
    if not os.path.exists(image) and not args.no_peers:
        t = time.monotonic()
        run(["mksquashfs", src, image, "-noI", "-noD", "-noF", "-noX", "-no-progress", "-quiet"])
        sq_seconds = time.monotonic() - t
    dataset = os.path.join(work, f"data-{args.samples}.mmfs")
    t = time.monotonic()
    run([MMFS, "pack", "--force", "-q", src, dataset])
    mmfs_seconds = time.monotonic() - t
    return src, filelist, image, sq_seconds, dataset, mmfs_seconds


def workload(peer, name, filelist, extra=(), throttle=None):
    cmd = [PY, WORKLOADS, name, peer.root, filelist] + list(extra)
    pid = peer.daemon_pid()
    cpu0 = cpu_seconds(pid) if pid else None
    requests0 = daemon_requests(peer) if pid else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=(lambda: throttle.add(os.getpid())) if throttle else None)
    try:
        out, err = proc.communicate()
    except BaseException:  # Ctrl-C, SIGTERM turned into SystemExit: the reader goes too
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"{name} on {peer.name} failed: {err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    if pid:
        result["daemon_cpu_seconds"] = cpu_seconds(pid) - cpu0
        result["daemon_peak_rss"] = peak_rss(pid)
        if requests0 is not None:
            result["daemon_requests"] = daemon_requests(peer) - requests0
    return result


def daemon_requests(peer):
    """Requests that reached an mmfs daemon so far (its stats file), or None for other peers."""
    if not isinstance(peer, Mmfs):
        return None
    try:
        with open(os.path.join(peer.root, ".mmfs", "stats")) as f:
            return sum(r["count"] for r in json.load(f)["requests"].values())
    except (OSError, ValueError, KeyError):
        return None


def measure(peers, name, filelist, repeats, cold, extra=(), profile=None, src=None):
    """Median over repeats of one workload on every peer; returns {peer: result}."""
    results = {}
    for peer in peers:
        runs = []
        for r in range(repeats):
            throttle = None
            if cold:
                peer.restart()
                # "Cold" is about the dataset: Python and torch come from the page cache, as on
                # a training host where they were loaded before the data loader starts.
                run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
            elif r == 0:
                workload(peer, name, filelist, extra)  # warm-up run, not counted
            if profile:
                bps, iops = PROFILES[profile]
                throttle = Throttle(src, bps, iops)
                throttle.__enter__()
                if peer.fuse and peer.daemon_pid():
                    throttle.add(peer.daemon_pid())
            try:
                # A FUSE peer's reader never touches the origin disk; its daemon does.
                runs.append(workload(peer, name, filelist, extra,
                                     None if peer.fuse else throttle))
            finally:
                if throttle:
                    throttle.__exit__(None, None, None)
        med = statistics.median(r["seconds"] for r in runs)
        best = dict(min(runs, key=lambda r: abs(r["seconds"] - med)))
        best["seconds"] = med
        best["runs"] = [r["seconds"] for r in runs]
        results[peer.name] = best
        log(f"  {name:14s} {'cold' if cold else 'warm'} {profile or '':12s} {peer.name:14s} "
            f"{med:8.3f} s")
    return results


class MemoryLimit(V1Cgroup):
    """Its processes may use at most `limit` bytes, page cache included (memory cgroup v1)."""

    def __init__(self, limit, name="mmfs-bench"):
        super().__init__("memory", name)
        self.limit = limit

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        self.write("memory.limit_in_bytes", self.limit)
        return self

    def __exit__(self, *exc):
        evacuate(self.path, self.root)
        self.write("memory.force_empty", 0)
        os.rmdir(self.path)


def loader_footprint(args, root, filelist):
    """Peak memory of the DataLoader itself (torch, 2 workers), page cache aside.

    Measured as the memory cgroup's peak while the same loader reads the first 2,048 files,
    less the page cache charged to the cgroup by the end (the files it read): what is left is
    the interpreter and its workers. torch's own files are read into the page cache outside the
    cgroup first, as each side does before its epochs, so that whether they happened to be
    cached does not change the figure (it did: 138-539 MiB for the same loader when read from
    the 256 first files without that); 2,048 files let the workers reach the size they keep
    for an epoch (at 256 they were below it, and the governor then gave back tier memory the
    loader took later).
    """
    small = os.path.join(args.work, "filelist-footprint.txt")
    with open(filelist) as f, open(small, "w") as out:
        out.writelines(f.readlines()[:2048])
    run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
    with MemoryLimit(1 << 40) as mem:
        subprocess.run([PY, WORKLOADS, "loader-raw", root, small], check=True,
                       capture_output=True, preexec_fn=lambda: mem.add(os.getpid()))
        with open(f"{mem.path}/memory.max_usage_in_bytes") as f:
            peak = int(f.read())
        return max(0, peak - memory_stat(mem.path, "total_cache"))


def memory_stat(cgroup_path, key):
    with open(f"{cgroup_path}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return int(v)
    return 0


def equal_memory_epochs(args, src, dataset, filelist, profile, size=None):
    """Three shuffled DataLoader epochs with the same memory for every side, origin throttled.

    One memory cgroup (v1) holds everything a side uses: the loader, its page cache and, for
    mmfs, the daemon (started inside it), its tiers and buffers and the page cache of the mount
    and of the shards, as in a container. Its size is the loader's own footprint (measured
    first) plus --memory-fraction of the dataset (half by default). mmfs is told what it may use
    with the mount options of --memory-mmfs ("{data}" stands for the data share in bytes). The
    origin's reads are throttled by the blkio cgroup (the reader for the native folder, the
    daemon for mmfs) and counted per epoch from that cgroup's io_service_bytes. `size` is the
    bytes of the files in `filelist` with their captions when it lists only part of `src`
    (default: all of `src`), so that the data share is a share of what the epochs read.
    """
    size = size if size is not None else dir_bytes(src)
    data = int(size * args.memory_fraction)
    footprint = loader_footprint(args, src, filelist)
    limit = footprint + data
    log(f"  loader footprint {footprint / 2**20:.0f} MiB; data {data / 2**20:.0f} MiB; "
        f"one cgroup of {limit / 2**20:.0f} MiB for everything")
    results = {"dataset": {"seconds": 0, "bytes": size, "memory_limit": limit,
                           "loader_footprint": footprint}}
    bps, iops = PROFILES[profile]
    sides = [("native", Native(args.work, src))]
    for i, opts in enumerate(args.memory_mmfs):
        # "{data}" or "{data*F}": the data share (times F) in bytes.
        options = re.sub(r"\{data(?:\*([0-9.]+))?\}",
                         lambda m: str(int(data * float(m.group(1) or 1))), opts).split()
        sides.append((f"mmfs {' '.join(options)}".strip(),
                      Mmfs(args.work, dataset, None, options, name=f"mmfs-eq{i}")))
    for label, peer in sides:
        peer.stop()
        drop_caches()
        run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
        try:
            with contextlib.ExitStack() as stack:
                throttle = stack.enter_context(Throttle(src, bps, iops))
                mem = stack.enter_context(MemoryLimit(limit))

                def enter():
                    throttle.add(os.getpid())
                    mem.add(os.getpid())
                if peer.fuse:
                    peer.start(preexec_fn=enter)
                # A FUSE side's reader never touches the origin, but sits in the blkio cgroup
                # anyway: the counts are the cgroup's, whoever reads.
                cmd = [PY, WORKLOADS, "loader-raw", peer.root, filelist, "--epochs", "3",
                       "--io-stat", f"{throttle.path}/blkio.throttle.io_service_bytes",
                       "--io-dev", throttle.dev]
                proc = subprocess.run(cmd, text=True, capture_output=True, preexec_fn=enter)
                failcnt = int(open(f"{mem.path}/memory.failcnt").read())
                peak = int(open(f"{mem.path}/memory.max_usage_in_bytes").read())
                with open(f"{mem.path}/memory.oom_control") as f:
                    oom = dict(line.split() for line in f).get("oom_kill", "0")
                stats = None
                if peer.fuse and proc.returncode == 0:
                    with open(os.path.join(peer.root, ".mmfs", "stats")) as f:
                        stats = json.load(f)
                pid = peer.daemon_pid()
                daemon_rss = peak_rss(pid) if pid else None
                if peer.fuse:
                    peer.stop()
            if proc.returncode != 0:
                # Never empty: a loader killed by the OOM killer leaves no stderr.
                r = {"seconds": 0, "oom_kills": int(oom),
                     "failed": proc.stderr[-500:] or f"exit status {proc.returncode}"}
                log(f"  equal memory {label}: FAILED (oom kills {oom}) {proc.stderr[-300:]}")
                results[label] = r
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["seconds"] = sum(r["epoch_seconds"][1:]) / 2
            r["samples_per_second"] = len(open(filelist).readlines()) / r["seconds"]
            r.update(memory_limit=limit, cgroup_peak=peak, limit_hits=failcnt, oom_kills=int(oom),
                     options=label)
            if daemon_rss is not None:
                r["daemon_peak_rss"] = daemon_rss
            if stats is not None:
                r["mmfs_stats"] = {k: stats.get(k) for k in ("origin", "readahead", "memory",
                                                             "requests", "extents", "cache",
                                                             "tiers")
                                   if k in stats}
            results[label] = r
            log(f"  equal memory {label}: epochs {[round(x, 2) for x in r['epoch_seconds']]}, "
                f"origin MB {[round(x / 1e6) for x in r['origin_bytes']]}"
                + (f" (daemon's shard MB {[round(x / 1e6) for x in r['daemon_origin_bytes']]})"
                   if r.get("daemon_origin_bytes") else "") + ", "
                + (" by cause MB " + "; ".join(
                    ", ".join(f"{k} {v / 1e6:.0f}" for k, v in c.items() if v)
                    for c in r["daemon_origin_causes"]) + ", "
                   if r.get("daemon_origin_causes") else "")
                + f"{r['samples_per_second']:.0f} samples/s in epochs 2-3, cgroup peak "
                f"{peak / 2**20:.0f} MiB" + (f", daemon peak RSS {daemon_rss / 2**20:.0f} MiB"
                                            if daemon_rss else ""))
        finally:
            peer.stop()
    return results


def cache_epochs(args, src, dataset, filelist, profile="cloud-volume"):
    """Three shuffled DataLoader epochs from a slow origin, the page cache dropped before each.

    Dropping the page cache between epochs stands for a dataset larger than the memory the
    kernel can keep for it; the mmfs daemon's RAM tier is not page cache and survives it. So
    this shows what the tier does for epochs 2+, against the native folder and against mmfs with
    its cache made useless (--ram-cache 1M).
    """
    half = dir_bytes(src) // 2
    bps, iops = PROFILES[profile]
    configs = [("native", Native(args.work, src)),
               ("mmfs, no cache", Mmfs(args.work, dataset, None, ["--ram-cache", "1M"])),
               ("mmfs, RAM tier = dataset/2",
                Mmfs(args.work, dataset, None, ["--ram-cache", str(half)])),
               ("mmfs, RAM tier = dataset", Mmfs(args.work, dataset, None,
                                                 ["--ram-cache", str(2 * half + (64 << 20))]))]
    results = {}
    for name, peer in configs:
        peer.stop()
        drop_caches()
        peer.start()
        epochs = []
        try:
            for e in range(3):
                drop_caches()
                with Throttle(src, bps, iops) as throttle:
                    if peer.daemon_pid():
                        throttle.add(peer.daemon_pid())
                    r = workload(peer, "loader-raw", filelist, ("--seed", str(e)), throttle)
                epochs.append(r["epoch_seconds"][0])
        finally:
            peer.stop()
        results[name] = {"seconds": (epochs[1] + epochs[2]) / 2, "epoch_seconds": epochs}
        log(f"  cache epochs {name}: {[round(x, 2) for x in epochs]}")
    return results


def readahead_figures(args, src, dataset, filelist):
    """Readahead on against off from an IOPS-bound origin, and the hint against a warm cache.

    Every run is cold (daemon restarted, page cache dropped) and throttled; one mmfs per
    configuration, so the ratios compare mmfs with itself.
    """
    def mmfs(name, options):
        peer = Mmfs(args.work, dataset, None, options)
        peer.name = name
        return peer

    reps = max(1, args.repeats - 2)
    rows = []
    on, off = mmfs("readahead on", []), mmfs("readahead off", ["--readahead", "off"])
    try:
        for name in ("seqread", "seqread-alt", "loader-raw"):
            rows.append((name, "readahead, cold, hard-disk",
                         measure([on, off], name, filelist, reps, True, (), "hard-disk", src)))
    finally:
        on.stop()
        off.stop()
    return rows + hint_figures(args, src, dataset, filelist)


def hint_figures(args, src, dataset, filelist):
    """A decoding DataLoader epoch: warm against cold from the cloud volume, with and without
    the hint, `--repeats` runs of each taken in turn (warm, hint, no hint, warm, ...) so that
    the machine's drift spreads over all three; each cell is the median. A warm run follows an
    untimed epoch that fills the page cache (measure's warm-up). The "listed" run is the hinted
    one on a mount with -o readdirplus=always whose loader lists train/ before the epoch starts,
    as ImageFolder does when it is built: the listing gives the kernel every file's entry, so
    the epoch makes no LOOKUP."""
    peer = Mmfs(args.work, dataset, None, [])
    listed = Mmfs(args.work, dataset, None, ["-o", "readdirplus=always"], name="mmfs-rdplus")
    runs = {"warm": [], "cold + hint": [], "cold + hint, listed": [], "cold, no hint": []}
    try:
        peer.restart()
        for _ in range(args.repeats):
            for label in runs:
                who = listed if label == "cold + hint, listed" else peer
                if label == "warm":
                    r = measure([who], "loader-decode", filelist, 1, False)
                else:
                    extra = ("--hint",) if label.startswith("cold + hint") else ()
                    if who is listed:
                        extra += ("--list-first",)
                    r = measure([who], "loader-decode", filelist, 1, True, extra, "cloud-volume",
                                src)
                    if who is listed:
                        who.stop()
                runs[label].append(r[who.name])
    finally:
        peer.stop()
        listed.stop()
    res = {}
    for label, rs in runs.items():
        med = statistics.median(x["seconds"] for x in rs)
        res[label] = dict(min(rs, key=lambda x: abs(x["seconds"] - med)), seconds=med,
                          runs=[x["seconds"] for x in rs])
    return [("loader-decode", "hint, cloud-volume", res)]


class Memcached:
    """A memcached server on a free loopback port for the cluster benchmark."""

    def __init__(self):
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(["memcached", "-l", "127.0.0.1", "-p", str(self.port),
                                      "-U", "0", "-m", "1024", "-t", "2", "-u", "nobody"])
        import socket as so

        def up():
            try:
                with so.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False
        wait_for(up, 20)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def cluster_epochs(args, src, dataset, filelist, profile="cloud-volume", hint=False):
    """Two hosts, one dataset, a shared memcached tier: the second host's cold epoch.

    Host A and host B are two mounts with their own small RAM tiers and no SSD tier; both
    daemons read the origin through the same blkio throttle. A runs a cold shuffled DataLoader
    epoch (filling the cluster tier), then B runs its own cold epoch.
    """
    servers = [Memcached() for _ in range(3)]
    cluster = ",".join(f"127.0.0.1:{m.port}" for m in servers)
    bps, iops = PROFILES[profile]
    results = {}
    try:
        for host in ("host A (first)", "host B (second)"):
            peer = Mmfs(args.work, dataset, None, ["--ram-cache", "64M", "--cluster-cache", cluster])
            peer.name = host
            peer.stop()
            drop_caches()
            peer.start()
            try:
                with Throttle(src, bps, iops) as throttle:
                    throttle.add(peer.daemon_pid())
                    run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
                    r = workload(peer, "loader-raw", filelist,
                                 ("--seed", "7") + (("--hint",) if hint else ()))
                with open(os.path.join(peer.root, ".mmfs", "stats")) as f:
                    stats = json.load(f)
                if host.startswith("host A"):
                    # Let A's asynchronous fill reach the cluster before B starts.
                    def drained():
                        with open(os.path.join(peer.root, ".mmfs", "stats")) as f:
                            return json.load(f)["cluster"]["queued_bytes"] == 0
                    wait_for(drained, 120)
                r["origin_bytes"] = stats["origin"]["bytes"] + stats["readahead"]["bytes"]
                r["cluster"] = {k: stats["cluster"][k] for k in ("hits", "misses", "bytes_in", "bytes_out")}
                results[host] = r
                log(f"  cluster {host}: {r['seconds']:.2f} s, origin {r['origin_bytes'] / 2**20:.0f} MiB")
            finally:
                peer.stop()
    finally:
        for m in servers:
            m.stop()
    results["dataset_bytes"] = {"seconds": 0, "bytes": dir_bytes(src)}
    results["floor"] = fuse_floor(args, dataset, filelist, hint)
    return results


def fuse_floor(args, dataset, filelist, hint=False):
    """The same cold epoch with nothing to fetch from anywhere: every file already in the
    daemon's RAM tier, the page cache dropped. What a cold epoch through FUSE costs on this
    machine whatever the tiers below do (the second host's best possible time)."""
    peer = Mmfs(args.work, dataset, None, [])
    peer.name = "RAM tier floor"
    extra = ("--seed", "7") + (("--hint",) if hint else ())
    try:
        peer.restart()
        workload(peer, "loader-raw", filelist, extra)  # fills the RAM tier
        drop_caches()
        run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
        r = workload(peer, "loader-raw", filelist, extra)
        log(f"  cluster floor (all in the RAM tier): {r['seconds']:.2f} s")
        return r
    finally:
        peer.stop()


IMAGEFOLDER_1M = r"""
import json, sys, time
from torchvision.datasets import ImageFolder
t = time.monotonic()
ds = ImageFolder(sys.argv[1], is_valid_file=lambda p: True)  # metadata-only: .txt files
print(json.dumps({"seconds": time.monotonic() - t, "samples": len(ds)}))
"""


def walk_seconds(root):
    t = time.monotonic()
    files = sum(len(fs) for _, _, fs in os.walk(root))
    return time.monotonic() - t, files


def mmfs_requests(root):
    """Request counts of an mmfs mount, from its .mmfs/stats snapshot."""
    try:
        with open(os.path.join(root, ".mmfs", "stats")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return {}
    out = {op: r["count"] for op, r in s.get("requests", {}).items() if r.get("count")}
    out.update({"listed_entries": s.get("listing", {}).get("entries", 0),
                "largest_readdir_request": s.get("listing", {}).get("largest_request_bytes", 0)})
    return out


def _gen_path(out, i, classes, ext, split="train"):
    """Where mmfs-gen-dataset writes sample i."""
    return os.path.join(out, split, "class_%03d" % (i % classes), "%08d%s" % (i, ext))


def _written(out, first, end, classes, ext):
    """How many of samples first..end-1 a generator process has written so far: it writes them
    in order, so a binary search on the files' existence finds where it is."""
    lo, hi = first, end
    while lo < hi:
        mid = (lo + hi) // 2
        if os.path.exists(_gen_path(out, mid, classes, ext)):
            lo = mid + 1
        else:
            hi = mid
    return lo - first


def generate(out, samples, classes, gen_args=(), procs=1, marker=None, poll=30):
    """Writes `samples` samples in `classes` class folders into `out` with mmfs-gen-dataset, in
    `procs` processes over disjoint ranges of samples (--first), logging progress every `poll`
    seconds. `marker` is a JSON file beside `out` written last (the parameters, the time taken):
    when it is there with the same parameters the tree is kept; otherwise the tree, made by an
    interrupted or different generation, is removed and written afresh. Returns the marker's
    contents."""
    params = {"samples": samples, "classes": classes, "args": list(gen_args)}
    if marker and os.path.exists(marker):
        try:
            with open(marker) as f:
                done = json.load(f)
        except ValueError:
            done = {}
        if done.get("params") == params and os.path.isdir(out):
            log(f"{out}: generated before ({marker}), kept")
            return done
        os.remove(marker)
    if os.path.exists(out):
        log(f"{out}: incomplete or made with other parameters: removing it")
        shutil.rmtree(out)
    ext = ".txt" if "--metadata-only" in gen_args else ".jpg"
    # The class folders first, so that the parts do not race to make them.
    run([GEN, out, "--samples", "0", "--classes", str(classes)] + list(gen_args))
    bounds = [samples * k // procs for k in range(procs + 1)]
    log(f"generating {samples:,} samples in {out} ({procs} process(es)): "
        f"{shlex.join([GEN, out, '--classes', str(classes)] + list(gen_args))} "
        f"--first A --samples B-A")
    t0 = time.monotonic()
    parts = []
    try:
        for a, b in zip(bounds, bounds[1:]):
            if b > a:
                parts.append((a, b, subprocess.Popen(
                    [GEN, out, "--samples", str(b - a), "--first", str(a), "--classes",
                     str(classes)] + list(gen_args),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        last = t0
        while True:
            running = [p for _, _, p in parts if p.poll() is None]
            failed = [p for _, _, p in parts if p.returncode not in (None, 0)]
            if failed:
                raise RuntimeError(f"mmfs-gen-dataset failed: {failed[0].stderr.read()[-1000:]}")
            if not running:
                break
            try:
                running[0].wait(timeout=min(poll, 5))
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - last >= poll:
                last = time.monotonic()
                n = sum(_written(out, a, b, classes, ext) for a, b, _ in parts)
                rate = n / (last - t0)
                eta = (samples - n) / rate if rate else float("inf")
                log(f"  generated {n:,}/{samples:,} samples in {last - t0:.0f} s "
                    f"({rate:,.0f}/s, about {eta / 60:.1f} min left)")
    finally:
        for _, _, p in parts:
            if p.poll() is None:
                p.kill()
                p.wait()
    mib = 0.0
    for _, _, p in parts:
        m = re.search(r"\(([0-9.]+) MiB\)", p.stdout.read())
        mib += float(m.group(1)) if m else 0
    done = {"params": params, "seconds": time.monotonic() - t0, "procs": procs, "mib": mib,
            "finished": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H%M%SZ")}
    log(f"generated {samples:,} samples ({mib:,.0f} MiB) in {done['seconds']:.0f} s")
    if marker:
        with open(marker + ".tmp", "w") as f:
            json.dump(done, f)
        os.replace(marker + ".tmp", marker)
    return done


def meta_dataset(work, n, empty=False, squashfs=False, procs=1):
    """The metadata-only dataset of n entries (n/1000 folders of 1,000 caption files; empty
    files with `empty`, which need no data block each), generated and packed once under `work`,
    and its squashfs image when asked for. Returns (src, dataset, image, pack_seconds): the
    seconds of `mmfs pack` when it ran now, else None."""
    src = os.path.join(work, f"meta-{n}" + ("-empty" if empty else ""))
    marker = src + ".complete"
    classes = max(1, n // 1000)
    gen_args = ["--metadata-only"] + (["--empty"] if empty else [])
    if (not os.path.exists(marker) and not empty
            and os.path.exists(_gen_path(src, n - 1, classes, ".txt"))
            and sum(len(fs) for _, _, fs in os.walk(src)) == n):
        # A tree from before the marker existed, with every entry written: adopted.
        with open(marker, "w") as f:
            json.dump({"params": {"samples": n, "classes": classes, "args": gen_args},
                       "adopted": True}, f)
        # As old as the tree, so that a pack made from it is not taken for stale.
        made = os.path.getmtime(src)
        os.utime(marker, (made, made))
    generate(src, n, classes, gen_args, procs, marker)
    dataset = src + ".mmfs"
    pack_seconds = None
    manifest = os.path.join(dataset, "manifest.json")
    if not os.path.exists(manifest) or os.path.getmtime(manifest) < os.path.getmtime(marker):
        log(f"packing {src}")
        t = time.monotonic()
        run([MMFS, "pack", "--force", "-q", src, dataset])
        pack_seconds = time.monotonic() - t
        log(f"packed {n:,} entries in {pack_seconds:.1f} s")
    image = src + ".sqfs"
    if squashfs and (not os.path.exists(image)
                     or os.path.getmtime(image) < os.path.getmtime(marker)):
        # Written under another name first: an interrupted mksquashfs leaves no image behind.
        run(["mksquashfs", src, image + ".partial", "-noI", "-noD", "-noF", "-noX",
             "-no-progress", "-quiet", "-noappend"])
        os.replace(image + ".partial", image)
    return src, dataset, image, pack_seconds


def million(args, n=1_000_000, empty=False, procs=1):
    """Mount time, cold and warm os.walk, ImageFolder construction (warm) and daemon memory at
    n metadata-only entries (n/1000 folders of 1,000 files; empty files with `empty`;
    generated by `procs` processes), for the peers in --peers. args: work, peers, repeats,
    mmfs_option. The result also has "pack" (the seconds of mmfs pack when the dataset was
    packed by this call)."""
    work = args.work
    squashfs = any(p in ("squashfs", "squashfuse_ll") for p in args.peers.split(","))
    src, dataset, image, pack_seconds = meta_dataset(work, n, empty, squashfs, procs)
    known = {"native": lambda: Native(work, src),
             "squashfs": lambda: KernelSquashfs(work, image, None),
             "squashfuse_ll": lambda: SquashfuseLL(work, image, None),
             "mmfs": lambda: Mmfs(work, dataset, None, ["--ram-cache", "64M"] + args.mmfs_option),
             "mmfs-classic": lambda: Mmfs(work, dataset, None, ["--ram-cache", "64M", "-o",
                                                                "transport=classic"]
                                          + args.mmfs_option, "mmfs /dev/fuse"),
             "mmfs-uring": lambda: Mmfs(work, dataset, None, ["--ram-cache", "64M", "-o",
                                                              "transport=uring"]
                                        + args.mmfs_option, "mmfs io_uring")}
    peers = [known[p]() for p in args.peers.split(",") if p in known]
    res = {"mount": {}, "list": {}, "list-warm": {}, "imagefolder": {}, "pack": pack_seconds}
    # --repeats rounds, the peers interleaved in each (the VM's noise drifts over minutes: a
    # peer's runs side by side with the others' are what can be compared); medians reported.
    runs = {p.name: {"mount": [], "cold": [], "warm": [], "folder": [], "cpu": []} for p in peers}
    for rep in range(max(1, args.repeats)):
        for p in peers:
            p.stop()
            drop_caches()
            p.start()
            try:
                pid = p.daemon_pid()
                cpu0 = cpu_seconds(pid) if pid else None
                cold, files = walk_seconds(p.root)
                cold_cpu = cpu_seconds(pid) - cpu0 if pid else None
                requests = mmfs_requests(p.root) if isinstance(p, Mmfs) else {}
                warm, _ = walk_seconds(p.root)
                r = run([PY, "-c", IMAGEFOLDER_1M, os.path.join(p.root, "train")])
                folder = json.loads(r.stdout.strip().splitlines()[-1])
                got = runs[p.name]
                got["mount"].append(p.mount_seconds)
                got["cold"].append(cold)
                got["warm"].append(warm)
                got["folder"].append(folder["seconds"])
                if cold_cpu is not None:
                    got["cpu"].append(cold_cpu)
                res["mount"][p.name] = {"seconds": statistics.median(got["mount"]),
                                        "runs": got["mount"]}
                res["list"][p.name] = {"seconds": statistics.median(got["cold"]), "files": files,
                                       "runs": got["cold"]}
                res["list-warm"][p.name] = {"seconds": statistics.median(got["warm"]),
                                            "runs": got["warm"]}
                res["imagefolder"][p.name] = {"seconds": statistics.median(got["folder"]),
                                              "runs": got["folder"]}
                if pid:
                    res["list"][p.name].update(daemon_cpu_seconds=statistics.median(got["cpu"]),
                                               daemon_peak_rss=peak_rss(pid))
                if requests:
                    res["list"][p.name]["requests"] = requests
                log(f"  {n:,} entries {p.name} (round {rep + 1}): mount {p.mount_seconds:.3f} s, "
                    f"cold os.walk {cold:.2f} s ({files} files), warm {warm:.2f} s, ImageFolder "
                    f"{folder['seconds']:.2f} s ({folder['samples']}), daemon cpu {cold_cpu}, "
                    f"rss {res['list'][p.name].get('daemon_peak_rss')}, requests {requests}")
            finally:
                p.stop()
    return res


class EmulatedSsd:
    """Where --extents puts the SSD tier when no --ssd-dir is given.

    The throttle is per block device and this VM has one disk (vda), which holds the origin, the
    repository and /tmp alike: an SSD tier there would be throttled as the origin is, and one on
    tmpfs would never leave RAM (drop_caches does not drop tmpfs pages). So the tier gets a
    block device of its own: ext4 on a loop device over a file in /dev/shm. Its page cache is
    dropped with the others, its reads are block I/O on a device the origin's limits do not
    cover, and they are throttled to LOCAL_SSD so that the tier costs what a SATA-class SSD
    would rather than a memcpy. The file's pages take RAM (about the dataset's size).
    """

    def __init__(self, work, size):
        self.image = "/dev/shm/mmfs-bench-ssd.img"
        self.path = os.path.join(work, "ssd")
        self.size = size
        self.loop = None
        self.throttled = True

    def _detach(self):
        if is_mounted(self.path):
            run(["umount", self.path])
        if os.path.exists(self.image):
            # A loop device left by an interrupted run still holds the file.
            for line in run(["losetup", "-j", self.image], check=False).stdout.splitlines():
                run(["losetup", "-d", line.split(":")[0]], check=False)
            os.remove(self.image)

    def __enter__(self):
        self._detach()
        with open(self.image, "wb") as f:
            f.truncate(self.size)
        self.loop = run(["losetup", "--find", "--show", self.image]).stdout.strip()
        # Inode tables and journal written now, not by ext4lazyinit during the measured epochs.
        run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.loop])
        os.makedirs(self.path, exist_ok=True)
        run(["mount", self.loop, self.path])
        return self

    def __exit__(self, *exc):
        self._detach()


class GivenSsd:
    """--ssd-dir: a directory on a real local SSD, used as it is and not throttled."""

    def __init__(self, path):
        self.path = path
        self.throttled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def mmfs_extents_stats(root):
    """What the extents policy needs to be judged, from a mount's stats: origin reads (with the
    cost model), readahead, the tiers, and any top-level section about extents or neighbours
    (named by the daemon, which this bench does not want to guess)."""
    try:
        with open(os.path.join(root, ".mmfs", "stats")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None
    keep = {"origin": s.get("origin"), "readahead": {k: s.get("readahead", {}).get(k)
                                                     for k in ("reads", "bytes")},
            "tiers": s.get("cache", {}).get("tiers")}
    keep.update({k: v for k, v in s.items() if "extent" in k or "neighbo" in k
                 or "probation" in k})
    return keep


class Extents:
    """--extents: first epochs from slow origins, every figure as a ratio to the
    native folder measured in the same run.

    Every run is cold: the FUSE daemon stopped, the page cache dropped, the daemon started, then
    the origin throttled (the daemon for FUSE peers, the reader for the native folder) and the
    workload run. Random reads run for a fixed time (--extents-seconds) and report files/s; an
    epoch of the native folder or of extents=off, whose rate stays about the same through an
    epoch, is cut at --extents-epoch-seconds and extrapolated from the rate of the window's
    second half (workloads.py --seconds); mmfs extents=auto always reads its epochs to the end.
    """

    def __init__(self, args, src, image, dataset, filelist):
        self.args, self.src, self.image, self.dataset, self.filelist = (
            args, src, image, dataset, filelist)
        self.size = dir_bytes(src)
        self.roles = {role: (label, list(options)) for role, (label, options)
                      in EXTENTS_MMFS.items()}
        for spec in args.extents_mmfs:
            role, _, opts = spec.partition("=")
            if role not in self.roles:
                sys.exit(f"--extents-mmfs {spec}: the roles are {', '.join(self.roles)}")
            self.roles[role] = (f"mmfs {opts}".strip(), opts.split())
        if args.drop_extents_option:
            for role, (label, options) in self.roles.items():
                self.roles[role] = (label, drop_extents(options))
        self.label = {role: label for role, (label, _) in self.roles.items()}

    def mmfs(self, role, extra=()):
        label, options = self.roles[role]
        peer = Mmfs(self.args.work, self.dataset, None, options + list(extra), name=label)
        peer.root = os.path.join(self.args.work, f"mnt-extents-{role}")
        return peer

    def native(self):
        return Native(self.args.work, self.src)

    def throttle(self, profile, ssd=None):
        """The blkio cgroup of a run: the profile's limits on the origin's device (none when
        unthrottled, to count the reads all the same), plus LOCAL_SSD on an emulated SSD's."""
        bps, iops = PROFILES[profile] if profile else (0, 0)
        also = [(ssd.path,) + LOCAL_SSD] if ssd is not None and ssd.throttled else []
        return Throttle(self.src, bps, iops, also)

    def cold(self, peer, loader):
        peer.stop()
        drop_caches()
        # Python (and torch for a loader) from the page cache, as on a training host (see
        # measure()): the reader of the native folder is in the throttled cgroup, and loading
        # the interpreter from the origin's disk would count as origin reads (at 50 IOPS, more
        # than its files'); the random reads need only the interpreter and workloads.py's modules.
        run([PY, "-c", "import torch, torchvision, numpy, PIL.Image" if loader
             else "import argparse, json, multiprocessing, random"])
        try:
            peer.start()
        except subprocess.CalledProcessError as e:
            # Most likely a binary from before -o extents: say so rather than show a traceback.
            sys.exit(f"{shlex.join(e.cmd)} failed: {e.stderr.strip()[-500:]}\n(a binary without "
                     "-o extents? --drop-extents-option runs the bench without it)")

    def timed(self, peer, name, extra, throttle, ssd=None):
        """One workload inside `throttle`, with the origin's (and SSD's) reads it caused."""
        if peer.fuse:
            throttle.add(peer.daemon_pid())
        if ssd is not None and device_of(ssd.path).startswith("0:"):
            ssd = None  # a --ssd-dir on tmpfs: no block device whose reads could be counted
        b0, n0 = throttle.reads()
        s0 = throttle.reads(device_of(ssd.path)) if ssd is not None else (0, 0)
        r = workload(peer, name, self.filelist, extra, None if peer.fuse else throttle)
        b1, n1 = throttle.reads()
        r.update(origin_bytes=b1 - b0, origin_reads=n1 - n0)
        if ssd is not None:
            s1 = throttle.reads(device_of(ssd.path))
            r.update(ssd_bytes=s1[0] - s0[0], ssd_reads=s1[1] - s0[1])
        if isinstance(peer, Mmfs):
            r["mmfs_stats"] = mmfs_extents_stats(peer.root)
        return r

    def randread(self, peer, profile, seed):
        self.cold(peer, loader=False)
        try:
            with self.throttle(profile) as throttle:
                r = self.timed(peer, "randread", ("--procs", "1", "--seed", str(seed),
                                                  "--seconds", str(self.args.extents_seconds)),
                               throttle)
        finally:
            peer.stop()
        r["per_second"] = r["files_per_second"]
        log(f"  extents randread {profile or 'unthrottled':17s} {peer.name:22s} "
            f"{r['files_per_second']:8.1f} files/s ({r['files']} files in {r['seconds']:.1f} s, "
            f"{r['origin_reads']} origin reads, {r['origin_bytes'] / 1e6:.0f} MB)")
        return r

    def epochs(self, peer, profile, n=1, ssd=None, limited=False):
        """n shuffled raw DataLoader epochs (seeds 0..n-1) on one daemon, the page cache dropped
        before each (a dataset larger than the memory the kernel could keep for it); the
        daemon's own tiers stay."""
        self.cold(peer, loader=True)
        cut = self.args.extents_epoch_seconds
        extra = ("--seconds", str(cut)) if limited and cut > 0 else ()
        runs = []
        try:
            with self.throttle(profile, ssd) as throttle:
                for e in range(n):
                    if e:
                        drop_caches()
                        run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
                    r = self.timed(peer, "loader-raw", ("--seed", str(e)) + extra, throttle, ssd)
                    r["epoch"] = e + 1
                    r["estimated"] = bool(r.get("partial_epochs"))
                    runs.append(r)
                    log(f"  extents epoch {e + 1} {profile or 'unthrottled':17s} {peer.name:22s} "
                        f"{r['epoch_seconds'][0]:8.2f} s{' (estimated)' if r['estimated'] else ''}"
                        f", {r['origin_reads']} origin reads, {r['origin_bytes'] / 1e6:.0f} MB"
                        + (f", SSD {r['ssd_bytes'] / 1e6:.0f} MB" if ssd is not None else ""))
        finally:
            peer.stop()
        return runs

    @staticmethod
    def median_of(runs, key):
        med = statistics.median(r[key] for r in runs)
        best = dict(min(runs, key=lambda r: abs(r[key] - med)))
        best[key] = med
        best["runs"] = [r[key] for r in runs]
        return best

    def cold_randreads(self, profile, sides, repeats):
        """sides: {label: peer}; repeats taken in turn over the sides (same seed per turn)."""
        runs = {label: [] for label in sides}
        for r in range(repeats):
            for label, peer in sides.items():
                runs[label].append(self.randread(peer, profile, seed=r))
        return {label: self.median_of(rs, "per_second") for label, rs in runs.items()}

    def part_a(self, repeats):
        sq = SquashfuseLL(self.args.work, self.image, None)
        sides = {"native": self.native(), "squashfuse_ll": sq,
                 self.label["off"]: self.mmfs("off"), self.label["auto"]: self.mmfs("auto")}
        res = self.cold_randreads("hard-disk", sides, repeats)
        res["_part"] = {"part": "a", "kind": "randread", "profile": "hard-disk",
                        "title": f"Cold random whole-file reads, 1 process, "
                                 f"{self.args.extents_seconds:g} s, hard-disk origin",
                        "targets": [[self.label["auto"], "squashfuse_ll", 1.5],
                                    [self.label["auto"], "native", 8]]}
        return res

    def part_bc(self, parts, repeats):
        ram_all = str(int(self.size * 1.5))
        ram_tenth = str(self.size // 10)
        rows = []
        # The native folder has no tier: its epochs 1 and 2 (page cache dropped before each)
        # serve part b and part c alike, so they are run once.
        native = [self.epochs(self.native(), "hard-disk", 2 if "c" in parts else 1,
                              limited=True) for _ in range(repeats)]

        def epoch_res(runs_per_repeat, e):
            rs = [runs[e] for runs in runs_per_repeat]
            for r in rs:
                r["seconds"] = r["epoch_seconds"][0]
            return self.median_of(rs, "seconds")
        if "b" in parts:
            res = {"native": {"epochs": [epoch_res(native, 0)]}}
            for role in ("off", "auto"):
                peer = self.mmfs(role, ["--ram-cache", ram_all])
                runs = [self.epochs(peer, "hard-disk", 1, limited=role == "off")
                        for _ in range(repeats)]
                res[self.label[role]] = {"epochs": [epoch_res(runs, 0)], "ram_cache": ram_all}
            res["_part"] = {"part": "b", "kind": "epochs", "profile": "hard-disk",
                            "title": "A first shuffled raw DataLoader epoch (2 workers), hard-disk "
                                     "origin, RAM tier 1.5x the dataset, no SSD tier",
                            "targets": [[self.label["auto"], "native", 5, 0]]}
            rows.append(("loader-raw epoch 1", "extents, b", res))
        if "c" in parts:
            res = {"native": {"epochs": [epoch_res(native, 0), epoch_res(native, 1)]}}
            with self.ssd_context() as ssd:
                tier = os.path.join(ssd.path, "mmfs-bench-tier")
                runs = []
                for _ in range(repeats):
                    # Epoch 1 starts from an empty SSD tier, as on a fresh training host.
                    shutil.rmtree(tier, ignore_errors=True)
                    os.makedirs(tier)
                    peer = self.mmfs("auto", ["--ram-cache", ram_tenth, "--cache-dir", tier,
                                              "--ssd-cache", str(int(self.size * 1.25))])
                    runs.append(self.epochs(peer, "hard-disk", 2, ssd=ssd))
                shutil.rmtree(tier, ignore_errors=True)
                res[self.label["auto"]] = {"epochs": [epoch_res(runs, 0), epoch_res(runs, 1)],
                                           "ram_cache": ram_tenth}
            ssd_text = (f"SSD tier on ext4 over a loop device in /dev/shm, throttled to "
                        f"{LOCAL_SSD[0] / 1e6:.0f} MB/s and {LOCAL_SSD[1]} read IOPS"
                        if ssd.throttled else f"SSD tier in {ssd.path} (not throttled)")
            res["_part"] = {"part": "c", "kind": "epochs", "profile": "hard-disk",
                            "title": "Epochs 1 and 2 (page cache dropped before each), hard-disk "
                                     f"origin, RAM tier a tenth of the dataset, {ssd_text}",
                            "targets": [[self.label["auto"], "native", 5, 1]]}
            rows.append(("loader-raw epochs 1-2", "extents, c", res))
        return rows

    def ssd_context(self):
        if self.args.ssd_dir:
            if device_of(self.args.ssd_dir) == device_of(self.src):
                sys.exit(f"--ssd-dir {self.args.ssd_dir} is on the origin's device "
                         f"({device_of(self.src)}), which the throttle limits")
            return GivenSsd(self.args.ssd_dir)
        return EmulatedSsd(self.args.work, int(self.size * 1.5) + (256 << 20))

    def part_d(self, repeats):
        """Where extents must not pay: a bandwidth-bound origin and the local disk. Native once
        per turn (the ratio's base), then off and auto taken in turn so that drift spreads over
        both."""
        ram_all = str(int(self.size * 1.5))
        res = {}
        for profile in ("cloud-volume", None):
            name = profile or "unthrottled"
            rr = {"native": [], self.label["off"]: [], self.label["auto"]: []}
            ep = {k: [] for k in rr}
            for r in range(repeats):
                for label, peer in (("native", self.native()),
                                    (self.label["off"], self.mmfs("off")),
                                    (self.label["auto"], self.mmfs("auto"))):
                    if label == "native" and r:
                        continue  # one native run per figure is its base; noise is off vs auto
                    rr[label].append(self.randread(peer, profile, seed=r))
                    if isinstance(peer, Mmfs):
                        peer = self.mmfs("off" if label == self.label["off"] else "auto",
                                         ["--ram-cache", ram_all])
                    e = self.epochs(peer, profile, 1)[0]
                    e["seconds"] = e["epoch_seconds"][0]
                    ep[label].append(e)
            res[name] = {"randread": {k: self.median_of(v, "per_second") for k, v in rr.items()},
                         "epoch": {k: self.median_of(v, "seconds") for k, v in ep.items()}}
        res["_part"] = {"part": "d", "kind": "noise",
                        "title": "Where extents must not cost: cloud-volume origin and "
                                 "unthrottled, cold random reads "
                                 f"({self.args.extents_seconds:g} s at most) and a first epoch "
                                 "(RAM tier 1.5x the dataset)"}
        return res

    def part_e(self, repeats):
        sides = {"native": self.native(), self.label["off"]: self.mmfs("off"),
                 self.label["auto"]: self.mmfs("auto")}
        res = self.cold_randreads("slow-object-store", sides, repeats)
        res["_part"] = {"part": "e", "kind": "randread", "profile": "slow-object-store",
                        "title": f"Cold random whole-file reads, 1 process, "
                                 f"{self.args.extents_seconds:g} s, slow-object-store origin",
                        "targets": []}
        return res

    def figures(self):
        parts = set(self.args.extents_parts.split(","))
        repeats = self.args.extents_repeats
        rows = []
        if "a" in parts:
            rows.append(("randread x1", "extents, a", self.part_a(repeats)))
        if parts & {"b", "c"}:
            rows += self.part_bc(parts, repeats)
        if "d" in parts:
            rows.append(("randread x1 and loader-raw epoch 1", "extents, d",
                         self.part_d(max(2, repeats))))
        if "e" in parts:
            rows.append(("randread x1", "extents, e", self.part_e(repeats)))
        return rows


def drop_extents(options):
    """The options without -o extents=... (alone or in a comma list): for a binary that does not
    know the option yet, so that the bench runs end to end with today's read path on every mmfs
    side."""
    out, i = [], 0
    while i < len(options):
        if options[i] == "-o" and i + 1 < len(options):
            kept = [o for o in options[i + 1].split(",") if not o.startswith("extents=")]
            if kept:
                out += ["-o", ",".join(kept)]
            i += 2
        else:
            out.append(options[i])
            i += 1
    return out


def extents_tables(rows, meta):
    """The --extents figures as markdown: one table per part, targets checked below each."""
    lines = []
    if meta.get("drop_extents_option"):
        lines += ["", "**-o extents was dropped (--drop-extents-option): every mmfs side is the "
                  "same mount with today's read path; the sides differ only in name.**"]

    def fmt_ratio(x):
        return f"{x:.2f}x" if x else "-"
    for label, mode, res in rows:
        part = res["_part"]
        sides = {k: v for k, v in res.items() if not k.startswith("_")}
        lines += ["", f"**{part['part']}. {part['title']}**", ""]
        if part["kind"] == "randread":
            base = sides.get("native", {}).get("per_second")
            lines += ["| side | files/s | vs native | runs | origin reads per file | origin MB |",
                      "|---|---|---|---|---|---|"]
            for k, v in sides.items():
                per_file = v["origin_reads"] / v["files"] if v.get("files") else 0
                lines.append(f"| {k} | {v['per_second']:.0f} | "
                             f"{fmt_ratio(v['per_second'] / base if base else None)} | "
                             + ", ".join(f"{x:.0f}" for x in v["runs"])
                             + f" | {per_file:.2f} | {v['origin_bytes'] / 1e6:.0f} |")
            for side, ref, factor in part.get("targets", []):
                if side in sides and ref in sides:
                    got = sides[side]["per_second"] / sides[ref]["per_second"]
                    lines.append(f"\nTarget: {side} >= {factor:g}x {ref}: {got:.2f}x, "
                                 f"{'met' if got >= factor else 'not met'}.")
        elif part["kind"] == "epochs":
            n = max(len(v["epochs"]) for v in sides.values())
            head = "| side | " + " | ".join(f"epoch {e + 1} (s) | vs native" for e in range(n))
            lines += [head + " | origin MB per epoch | SSD MB per epoch |",
                      "|---|" + "---|---|" * n + "---|---|"]
            base = [e["seconds"] for e in sides["native"]["epochs"]] if "native" in sides else []
            for k, v in sides.items():
                cells = []
                for e, r in enumerate(v["epochs"]):
                    est = "~" if r.get("estimated") else ""
                    ratio = base[e] / r["seconds"] if e < len(base) and r["seconds"] else None
                    cells += [f"{est}{r['seconds']:.1f}", fmt_ratio(ratio)]
                cells += ["", ""] * (n - len(v["epochs"]))
                origin = " / ".join(f"{r['origin_bytes'] / 1e6:.0f}" for r in v["epochs"])
                ssd = " / ".join(f"{r['ssd_bytes'] / 1e6:.0f}" for r in v["epochs"]
                                 if "ssd_bytes" in r) or "-"
                lines.append(f"| {k} | " + " | ".join(cells) + f" | {origin} | {ssd} |")
            if any(r.get("estimated") for v in sides.values() for r in v["epochs"]):
                lines.append("\n~: the epoch was cut at --extents-epoch-seconds and its length "
                             "extrapolated from the rate of the window's second half "
                             "(workloads.py --seconds); origin MB are for the part read.")
            for side, ref, factor, e in part.get("targets", []):
                if side in sides and ref in sides:
                    got = sides[ref]["epochs"][e]["seconds"] / sides[side]["epochs"][e]["seconds"]
                    lines.append(f"\nTarget: {side} epoch {e + 1} >= {factor:g}x {ref}: "
                                 f"{got:.2f}x, {'met' if got >= factor else 'not met'}.")
        elif part["kind"] == "noise":
            names = list(next(iter(sides.values()))["randread"])
            lines += ["| origin | workload | " + " | ".join(names) + " | auto vs off |",
                      "|---|---|" + "---|" * len(names) + "---|"]
            for origin, figs in sides.items():
                for wl, key, unit in (("randread", "per_second", "files/s"),
                                      ("epoch", "seconds", "s")):
                    r = figs[wl]
                    base = r["native"][key]
                    cells = []
                    for nm in names:
                        x = r[nm][key]
                        ratio = x / base if key == "per_second" else base / x
                        digits = 0 if key == "per_second" else 2
                        runs = ", ".join(f"{y:.{digits}f}" for y in r[nm]["runs"])
                        cells.append(f"{x:.{digits}f} {unit} ({ratio:.2f}x; {runs})")
                    off, auto = (r[nm][key] for nm in names[1:3])
                    vs = auto / off if key == "per_second" else off / auto
                    lines.append(f"| {origin} | {wl} | " + " | ".join(cells) + f" | {vs:.2f}x |")
            lines.append("\nTarget: auto no slower than off, within noise (compare 'auto vs off' "
                         "with the spread of each side's runs).")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--throttle", action="store_true", help="also run the slow-origin profiles")
    ap.add_argument("--peers", default="native,squashfs,squashfuse_ll,mmfs,mmfs-overlay")
    ap.add_argument("--work", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--quick", action="store_true", help="fewer workloads (smoke test)")
    ap.add_argument("--epochs", action="store_true",
                    help="also run 3 epochs from the cloud-volume origin, page cache dropped "
                         "before each: the RAM tier's effect on epochs 2+")
    ap.add_argument("--million", action="store_true",
                    help="also measure mount time and listing at 1M entries")
    ap.add_argument("--memory", action="store_true",
                    help="also run 3 epochs at equal memory: one memory cgroup for the loader, "
                         "the daemon and all page cache, sized loader footprint + "
                         "--memory-fraction of the dataset (cloud-volume origin)")
    ap.add_argument("--memory-fraction", type=float, default=0.5,
                    help="with --memory: the dataset's share of memory beside the loader")
    ap.add_argument("--memory-mmfs", action="append",
                    help="with --memory: mount options of one mmfs side ('{data}': the data "
                         "share in bytes); repeatable; default '--memory {data}'")
    ap.add_argument("--readahead", action="store_true",
                    help="also compare readahead on/off from the hard-disk profile and the hint "
                         "against a warm cache")
    ap.add_argument("--hint", action="store_true",
                    help="only the hint's part of --readahead: a decoding epoch warm, cold with "
                         "the hint and cold without, --repeats runs each, interleaved")
    ap.add_argument("--cluster", action="store_true",
                    help="two hosts sharing a memcached cluster tier: the second host's cold "
                         "epoch against the first's (cloud-volume origin), without and with the hint")
    ap.add_argument("--cluster-profile", default="cloud-volume", choices=sorted(PROFILES),
                    help="the origin's throttle for --cluster")
    ap.add_argument("--no-peers", action="store_true",
                    help="skip the table of peers (with --readahead, --epochs, --million)")
    ap.add_argument("--mmfs-option", action="append", default=[],
                    help="an extra argument for mmfs mount in --million (repeat it): -o "
                         "opendir=on, ...")
    ap.add_argument("--extents", action="store_true",
                    help="only the extents figures, every run cold, ratios to the "
                         "native folder:\n"
                         "  a. hard-disk, random reads for --extents-seconds: native,\n"
                         "     squashfuse_ll, mmfs extents=off, extents=auto (files/s)\n"
                         "  b. hard-disk, a first shuffled loader-raw epoch, RAM tier 1.5x the\n"
                         "     dataset: native, off, auto\n"
                         "  c. hard-disk, epochs 1 and 2 with an SSD tier (--ssd-dir, or an\n"
                         "     emulated SSD) and the RAM tier at a tenth: native, auto\n"
                         "  d. cloud-volume and unthrottled, random reads and a first epoch:\n"
                         "     native, off, auto (auto must not be slower than off)\n"
                         "  e. slow-object-store, random reads: native, off, auto\n"
                         "about 15 minutes at --samples 20000")
    ap.add_argument("--extents-parts", default="a,b,c,d,e",
                    help="with --extents: which parts to run (comma-separated)")
    ap.add_argument("--extents-seconds", type=float, default=30,
                    help="with --extents: how long each random-read run lasts")
    ap.add_argument("--extents-epoch-seconds", type=float, default=60,
                    help="with --extents: where the native folder's and extents=off's "
                         "hard-disk epochs are cut and extrapolated from their late rate "
                         "(about steady); 0 reads them whole")
    ap.add_argument("--extents-repeats", type=int, default=1,
                    help="with --extents: runs per figure (the median); part d takes at least 2")
    ap.add_argument("--extents-mmfs", action="append", default=[], metavar="ROLE=OPTIONS",
                    help="with --extents: the mount options of role off or auto instead of "
                         "EXTENTS_MMFS's, e.g. --extents-mmfs 'auto=-o extents=1M'")
    ap.add_argument("--drop-extents-option", action="store_true",
                    help="with --extents: leave -o extents=... out of every mount, for a binary "
                         "without the option (a smoke test of the bench itself)")
    ap.add_argument("--ssd-dir",
                    help="with --extents: the SSD tier's directory for part c, on a local SSD "
                         "that is not the origin's device (default: an emulated SSD, ext4 on a "
                         "loop device over /dev/shm, throttled to LOCAL_SSD)")
    ap.add_argument("--report", help="only rewrite latest.md from this results .jsonl file")
    args = ap.parse_args()
    args.command = shlex.join([sys.executable] + sys.argv)
    if args.report:
        return report_from_jsonl(args.report)
    if os.geteuid() != 0:
        sys.exit("bench.py needs root (drop_caches, mounts, cgroups)")
    os.makedirs(args.work, exist_ok=True)
    if "mmfs-uring" in args.peers.split(","):
        ring = KernelRingOffer()
        ring.__enter__()
        atexit.register(ring.__exit__)
    if args.no_peers and not (args.epochs or args.readahead or args.hint or args.cluster
                              or args.memory):
        # --million alone needs none of the image dataset: --peers then picks its peers.
        if args.million:
            m = million(args)
            rows = [("mount, 1M entries", "", m["mount"]),
                    ("os.walk, 1M entries", "cold", m["list"]),
                    ("os.walk, 1M entries", "warm", m["list-warm"]),
                    ("ImageFolder, 1M entries", "warm", m["imagefolder"])]
            write_report(args, [_Recorded(name, None, 0) for name in m["mount"]], rows,
                         datetime.datetime.utcnow().strftime("%Y-%m-%dT%H%M%SZ"))
        return
    src, filelist, image, sq_seconds, dataset, mmfs_seconds = prepare(args, args.work)
    if args.extents:
        started = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H%M%SZ")
        if not shutil.which("squashfuse_ll") and "a" in args.extents_parts.split(","):
            sys.exit("--extents needs squashfuse_ll: bash tools/install-deps.sh --bench")
        origin = device_of(src)
        try:
            with open(f"/sys/dev/block/{origin}/queue/read_ahead_kb") as f:
                read_ahead = int(f.read())
        except OSError:
            read_ahead = None
        args.extents_meta = {"drop_extents_option": args.drop_extents_option,
                             "repeats": args.extents_repeats,
                             "origin_device": origin, "origin_read_ahead_kb": read_ahead}
        write_report(args, [], Extents(args, src, image, dataset, filelist).figures(), started)
        return
    all_peers = {
        "native": Native(args.work, src),
        "squashfs": KernelSquashfs(args.work, image, sq_seconds),
        "squashfuse_ll": SquashfuseLL(args.work, image, sq_seconds),
        "mmfs": Mmfs(args.work, dataset, mmfs_seconds),
        # The kernel answers Python's isatty() ioctl: warm reads never reach the daemon.
        "mmfs-overlay": Mmfs(args.work, dataset, mmfs_seconds, ["--overlay"], "mmfs --overlay"),
        # How requests reach the daemon (docs/architecture.md): FUSE over io_uring, which the
        # bench has the kernel offer for the run (KernelRingOffer), and /dev/fuse.
        "mmfs-uring": Mmfs(args.work, dataset, mmfs_seconds, ["-o", "transport=uring"],
                           "mmfs io_uring"),
        "mmfs-classic": Mmfs(args.work, dataset, mmfs_seconds, ["-o", "transport=classic"],
                             "mmfs /dev/fuse"),
        # The same mount without the per-reader accounting: what that accounting costs.
        "mmfs-noreaders": Mmfs(args.work, dataset, mmfs_seconds, ["-o", "readers=off"],
                               "mmfs readers=off"),
        # The smallest RAM tier beside the page cache: what the tier's copy of each cold read
        # costs (a fresh page of memory per 4 KiB, besides the page cache's own).
        "mmfs-ram64m": Mmfs(args.work, dataset, mmfs_seconds, ["--ram-cache", "64M"],
                            "mmfs --ram-cache 64M"),
        # The daemon's heap on small pages (tools/mmfs/huge_page_heap.h): what huge pages save
        # while the RAM tier fills.
        "mmfs-smallpages": Mmfs(args.work, dataset, mmfs_seconds, ["-o", "huge_pages=off"],
                                "mmfs huge_pages=off"),
    }
    peers = [all_peers[p] for p in args.peers.split(",")]
    rows = []
    started = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H%M%SZ")
    if args.no_peers:
        peers = []
    try:
        for p in peers:
            p.stop()
            p.start()
        if not peers:
            raise _SkipPeers()
        rows.append(("mount", "", {p.name: {"seconds": p.mount_seconds} for p in peers}))
        plan = [("list", False, ()), ("imagefolder", False, ()),
                ("randread", True, ("--procs", "1")), ("randread", False, ("--procs", "1")),
                ("randread", True, ("--procs", "4")), ("randread", False, ("--procs", "4")),
                ("seqread", True, ()),
                ("loader-raw", True, ()), ("loader-raw", False, ()),
                ("loader-decode", False, ("--repeats", "1"))]
        if args.quick:
            plan = [("list", False, ()), ("randread", True, ("--procs", "1")),
                    ("randread", False, ("--procs", "1"))]
        for name, cold, extra in plan:
            repeats = args.repeats
            if extra and extra[0] == "--repeats":  # decoding is slow: once is enough
                repeats, extra = int(extra[1]), ()
            label = name + (f" x{extra[1]}" if extra else "")
            rows.append((label, "cold" if cold else "warm",
                         measure(peers, name, filelist, repeats, cold, extra)))
        if args.throttle:
            for profile in PEER_TABLE_PROFILES:
                # The hard disk's 300 IOPS make random reads of every file take minutes: only
                # the in-order read there.
                work = [("seqread", ())] if profile == "hard-disk" else [
                    ("randread", ("--procs", "1")), ("seqread", ()), ("loader-raw", ())]
                for name, extra in work:
                    label = name + (f" x{extra[1]}" if extra else "")
                    rows.append((label, f"cold, {profile}",
                                 measure(peers, name, filelist, max(1, args.repeats - 2), True,
                                         extra, profile, src)))
    except _SkipPeers:
        pass
    finally:
        for p in peers:
            p.stop()
    if args.epochs:
        rows.append(("loader-raw epochs 2-3 (page cache dropped each epoch)", "cloud-volume",
                     cache_epochs(args, src, dataset, filelist)))
    if args.readahead:
        rows += readahead_figures(args, src, dataset, filelist)
    elif args.hint:
        rows += hint_figures(args, src, dataset, filelist)
    if args.cluster:
        rows.append(("loader-raw epoch", f"cluster, {args.cluster_profile}",
                     cluster_epochs(args, src, dataset, filelist, args.cluster_profile)))
        rows.append(("loader-raw epoch", f"cluster, {args.cluster_profile}, with the hint",
                     cluster_epochs(args, src, dataset, filelist, args.cluster_profile, True)))
    if args.million:
        m = million(args)
        rows.append(("mount, 1M entries", "", m["mount"]))
        rows.append(("os.walk, 1M entries", "cold", m["list"]))
        rows.append(("os.walk, 1M entries", "warm", m["list-warm"]))
        rows.append(("ImageFolder, 1M entries", "warm", m["imagefolder"]))
    if args.memory:
        args.memory_mmfs = args.memory_mmfs or ["--memory {data}"]
        rows.append(("loader-raw epochs 2-3", "equal memory, cloud-volume",
                     equal_memory_epochs(args, src, dataset, filelist, "cloud-volume")))
    write_report(args, peers, rows, started)


class _SkipPeers(Exception):
    pass


class _Recorded:
    """A peer as far as the report needs it, rebuilt from a results file."""

    def __init__(self, name, pack_seconds, pack_bytes):
        self.name, self.pack_seconds, self.pack_bytes = name, pack_seconds, pack_bytes


def report_from_jsonl(path):
    rows, meta = [], None
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            meta = r
            rows.append((r["workload"], r["mode"], r["results"]))
    peers = [_Recorded(p.get("name"), p.get("pack_seconds"), p.get("pack_bytes", 0))
             for p in meta.get("peers", [])] or [
        _Recorded(n, None, 0) for n in rows[0][2].keys()]
    if all(mode.startswith("extents") for _, mode, _ in rows):
        peers = []  # --extents: sides of its own tables, no peers
    args = argparse.Namespace(samples=meta["samples"], repeats=meta.get("repeats", 3),
                              command=meta.get("command"), extents_meta=meta.get("extents"))
    write_report(args, peers, rows, meta["started"])


def equal_memory_table(label, mode, res):
    d = res["dataset"]
    base = res.get("native", {}).get("seconds")
    lines = ["", f"{label}, {mode}: one memory cgroup of {d['memory_limit'] / 1e6:.0f} MB for "
             f"everything (loader footprint {d['loader_footprint'] / 1e6:.0f} MB + data share; "
             f"dataset {d['bytes'] / 1e6:.0f} MB):", "",
             "| side | epochs (s) | epochs 2-3 (samples/s) | vs native | origin MB per epoch | "
             "daemon's shard MB per epoch | cgroup peak | daemon peak RSS |",
             "|---|---|---|---|---|---|---|---|"]
    for k, v in res.items():
        if k == "dataset":
            continue
        if v.get("failed"):
            lines.append(f"| {k} | failed (OOM kills: {v.get('oom_kills')}) | | | | | | |")
            continue
        ep = ", ".join(f"{x:.1f}" for x in v["epoch_seconds"])
        ratio = f"{base / v['seconds']:.2f}x" if base and v["seconds"] else "-"
        origin = " / ".join(f"{x / 1e6:.0f}" for x in v.get("origin_bytes", []))
        # The daemon's own count of shard bytes (origin + readahead): without the blkio
        # counter's block rounding and index reads.
        shard = " / ".join(f"{x / 1e6:.0f}" for x in v.get("daemon_origin_bytes", [])) or "-"
        rss = v.get("daemon_peak_rss")
        lines.append(f"| {k} | {ep} | {v['samples_per_second']:.0f} | {ratio} | {origin} | "
                     f"{shard} | {v['cgroup_peak'] / 1e6:.0f} MB | "
                     + (f"{rss / 1e6:.0f} MB |" if rss else "- |"))
    causes = [(k, v["daemon_origin_causes"]) for k, v in res.items()
              if k != "dataset" and v.get("daemon_origin_causes")]
    if causes:
        # Where each shard byte the daemon read went, per epoch: the files asked for, their
        # samples' other members, extents' neighbours (and padding), readahead, warm-up; and
        # how much of it was fetched again before its last fetch was used (re-reads).
        lines += ["", "Shard MB the daemon read, by cause, per epoch (e1 / e2 / e3):", "",
                  "| side | asked | sample members | neighbours and padding | readahead | warm-up | "
                  "of which re-read |", "|---|---|---|---|---|---|---|"]
        for k, per_epoch in causes:
            cell = lambda key: " / ".join(f"{c.get(key, 0) / 1e6:.0f}" for c in per_epoch)
            lines.append(f"| {k} | {cell('asked')} | {cell('members')} | {cell('neighbours')} | "
                         f"{cell('readahead')} | {cell('warmup')} | {cell('rereads')} |")
    return lines


def write_report(args, peers, rows, started):
    out_dir = os.path.join(HERE, "results")
    os.makedirs(out_dir, exist_ok=True)
    machine = f"{platform.node()}, {os.cpu_count()} cores, Linux {platform.release()}"
    with open(os.path.join(out_dir, f"{started}.jsonl"), "w") as f:
        for label, mode, res in rows:
            f.write(json.dumps({"started": started, "machine": machine, "samples": args.samples,
                                "repeats": args.repeats, "workload": label, "mode": mode,
                                "results": res, "command": getattr(args, "command", None),
                                "extents": getattr(args, "extents_meta", None),
                                "peers": [{"name": p.name, "pack_seconds": p.pack_seconds,
                                           "pack_bytes": p.pack_bytes} for p in peers]}) + "\n")
    names = [p.name for p in peers]
    extents_rows = [row for row in rows if row[1].startswith("extents")]
    rows = [row for row in rows if not row[1].startswith("extents")]
    meta = getattr(args, "extents_meta", None) or {}
    repeats = (f"median of {meta.get('repeats')} (part d: of at least 2)" if extents_rows
               else f"median of {args.repeats}")
    lines = [f"Machine: {machine}. Date (UTC): {started}. Dataset: {args.samples} samples "
             f"(JPEG 160-640 px + caption), {repeats}."]
    if not extents_rows:
        lines.append("Cells: seconds (ratio to native: native time / peer time, above 1 is "
                     "faster).")
    if getattr(args, "command", None):
        lines.append(f"Command: `{args.command}`")
    if rows or not extents_rows:  # --extents alone has no peers' table
        lines += ["", "| workload | mode | " + " | ".join(names) + " |",
                  "|---|---|" + "---|" * len(names)]
    for label, mode, res in rows:
        if any(k not in names for k in res):
            continue  # a configuration table of its own, below
        base = res.get("native", {}).get("seconds")
        cells = []
        for n in names:
            s = res.get(n, {}).get("seconds")
            if s is None:
                cells.append("-")
            elif base and s > 0 and label != "mount":
                cells.append(f"{s:.3f} ({base / s:.2f}x)")
            else:
                cells.append(f"{s:.3f}")
        lines.append(f"| {label} | {mode} | " + " | ".join(cells) + " |")
    for label, mode, res in rows:
        if mode.startswith("equal memory"):
            lines += equal_memory_table(label, mode, res)
            continue
        if mode.startswith("readahead") or mode.startswith("hint") or mode.startswith("cluster"):
            continue
        if any(k not in names for k in res):
            base = res.get("native", {}).get("seconds")
            lines += ["", f"{label}, {mode}:", "", "| configuration | epochs (s) | epochs 2-3 mean (s) | vs native |",
                      "|---|---|---|---|"]
            for k, v in res.items():
                ep = ", ".join(f"{x:.1f}" for x in v.get("epoch_seconds", []))
                ratio = f"{base / v['seconds']:.2f}x" if base and v["seconds"] else "-"
                lines.append(f"| {k} | {ep} | {v['seconds']:.2f} | {ratio} |")
    ra_rows = [(label, mode, res) for label, mode, res in rows if mode.startswith("readahead")]
    if ra_rows:
        lines += ["", "Readahead, mmfs against itself, every run cold (" + ra_rows[0][1] + "):", "",
                  "| workload | readahead on (s) | readahead off (s) | on vs off |", "|---|---|---|---|"]
        for label, mode, res in ra_rows:
            a, b = res["readahead on"]["seconds"], res["readahead off"]["seconds"]
            lines.append(f"| {label} | {a:.2f} | {b:.2f} | {b / a:.2f}x |")
    for label, mode, res in rows:
        if not mode.startswith("hint"):
            continue
        w = res["warm"]["seconds"]
        lines += ["", f"{label}, one shuffled epoch, {mode.split(', ')[1]} origin for the cold runs:",
                  "", "| run | seconds (median) | runs | vs warm | daemon CPU (s, median run) |",
                  "|---|---|---|---|---|"]
        for k, v in res.items():
            each = ", ".join(f"{x:.2f}" for x in v.get("runs", [v["seconds"]]))
            cpu = v.get("daemon_cpu_seconds")
            lines.append(f"| {k} | {v['seconds']:.2f} | {each} | {v['seconds'] / w:.2f}x | "
                         + (f"{cpu:.2f} |" if cpu is not None else "- |"))
    for label, mode, res in rows:
        if not mode.startswith("cluster"):
            continue
        a, b = res["host A (first)"], res["host B (second)"]
        data = res["dataset_bytes"]["bytes"]
        hinted = mode.endswith("with the hint")
        lines += ["", "Two hosts sharing a memcached cluster tier (3 servers), each daemon's origin "
                  f"reads throttled ({mode.split(', ')[1]}), one cold shuffled DataLoader epoch each"
                  + (", both with the prefetch hint (HintedSampler):" if hinted else ":"), "",
                  "| host | epoch (s) | origin bytes read | of the dataset |", "|---|---|---|---|"]
        for name, r in (("first", a), ("second", b)):
            lines.append(f"| {name} | {r['seconds']:.2f} | {r['origin_bytes'] / 2**20:.0f} MiB | "
                         f"{100 * r['origin_bytes'] / data:.1f}% |")
        lines.append(f"| second vs first | {a['seconds'] / b['seconds']:.2f}x faster | | |")
        if "floor" in res:
            lines.append(f"| floor: the same epoch with every file in the RAM tier | "
                         f"{res['floor']['seconds']:.2f} | 0 | 0% |")
    if extents_rows:
        lines.append(f"Extents, every run cold; origin device {meta.get('origin_device')}"
                     f" (read_ahead_kb {meta.get('origin_read_ahead_kb')}); origin reads and MB "
                     "as the blkio cgroup counted them.")
        lines += extents_tables(extents_rows, meta)
    if not peers and extents_rows:
        text = "\n".join(lines) + "\n"
        with open(os.path.join(out_dir, "latest.md"), "w") as f:
            f.write(text)
        print(text)
        return
    lines += ["", "| peer | pack time (s) | size on disk | daemon CPU s/GB (cold randread x1) | "
              "daemon peak RSS |", "|---|---|---|---|---|"]
    cold_rr = next((res for label, mode, res in rows if label == "randread x1" and mode == "cold"),
                   {})
    for p in peers:
        r = cold_rr.get(p.name, {})
        cpu = r.get("daemon_cpu_seconds")
        gb = r.get("bytes", 0) / 1e9
        cpu_gb = f"{cpu / gb:.2f}" if cpu is not None and gb else "-"
        rss = r.get("daemon_peak_rss")
        pack = f"{p.pack_seconds:.1f}" if p.pack_seconds is not None else "(cached)"
        rss_text = f"{rss / 2**20:.1f} MiB" if rss else "-"
        lines.append(f"| {p.name} | {pack} | {p.pack_bytes / 2**20:.0f} MiB | {cpu_gb} | "
                     f"{rss_text} |")
    lines += daemon_cost_table(names, rows)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "latest.md"), "w") as f:
        f.write(text)
    print(text)


def daemon_cost_table(names, rows):
    """What each workload cost the mmfs daemons: CPU milliseconds per 1,000 requests (the figure
    `mmfs stats` shows) and requests per file, from the median run's counts."""
    names = [n for n in names if n.startswith("mmfs")]
    cells = []
    for label, mode, res in rows:
        row = []
        for n in names:
            r = res.get(n) if isinstance(res, dict) else None
            r = r if isinstance(r, dict) else {}
            req, cpu, files = r.get("daemon_requests"), r.get("daemon_cpu_seconds"), r.get("files")
            if not req or cpu is None:
                row.append("-")
                continue
            per_file = f", {req / files:.1f}/file" if files else ""
            row.append(f"{cpu * 1e6 / req:.1f}{per_file}")
        if any(c != "-" for c in row):
            cells.append(f"| {label} | {mode} | " + " | ".join(row) + " |")
    if not cells:
        return []
    return ["", "Daemon CPU per 1,000 requests (ms) and requests per file, median run:", "",
            "| workload | mode | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names)] + cells


if __name__ == "__main__":
    main()
