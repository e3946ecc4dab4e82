#!/usr/bin/python3
"""mmfs benchmarks: mmfs side by side with the native folder, kernel squashfs and squashfuse_ll.

Run as root from the repository (after `bash tools/install-deps.sh --bench` and a release build):
    /usr/bin/python3 bench/bench.py [--samples 20000] [--repeats 3] [--throttle] [--million]

Every figure is the median of --repeats runs, reported as seconds and as a ratio to the native
folder measured in the same run (ratio = native time / peer time: above 1 is faster than native).
"Cold" drops the page cache (and restarts FUSE daemons, emptying their caches) before each run;
"warm" runs right after an identical run. --throttle adds the slow-origin profiles, limiting reads
from the disk with the blkio cgroup (v1): the reader processes for the native folder and kernel
squashfs, the daemon for FUSE peers. Results: bench/results/<timestamp>.jsonl and latest.md.
"""
import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
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
}


def log(msg):
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


class Throttle(V1Cgroup):
    """Limits reads from the device holding `path` (blkio.throttle.*)."""

    def __init__(self, path, bps, iops):
        super().__init__("blkio")
        st = os.stat(path)
        self.dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        self.bps, self.iops = bps, iops

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        self.write("blkio.throttle.read_bps_device", f"{self.dev} {self.bps}")
        self.write("blkio.throttle.read_iops_device", f"{self.dev} {self.iops}")
        return self

    def __exit__(self, *exc):
        self.write("blkio.throttle.read_bps_device", f"{self.dev} 0")
        self.write("blkio.throttle.read_iops_device", f"{self.dev} 0")
        self.remove()


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
        self.pack_bytes = dir_bytes(src)
        self.mount_seconds = 0.0


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
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=(lambda: throttle.add(os.getpid())) if throttle else None)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{name} on {peer.name} failed: {err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    if pid:
        result["daemon_cpu_seconds"] = cpu_seconds(pid) - cpu0
        result["daemon_peak_rss"] = peak_rss(pid)
    return result


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

    Measured as the memory cgroup's peak while the same loader reads only the first 256 files,
    whose page cache is negligible next to the interpreter and its workers.
    """
    small = os.path.join(args.work, "filelist-footprint.txt")
    with open(filelist) as f, open(small, "w") as out:
        out.writelines(f.readlines()[:256])
    with MemoryLimit(1 << 40) as mem:
        subprocess.run([PY, WORKLOADS, "loader-raw", root, small], check=True,
                       capture_output=True, preexec_fn=lambda: mem.add(os.getpid()))
        with open(f"{mem.path}/memory.max_usage_in_bytes") as f:
            return int(f.read())


def memory_stat(cgroup_path, key):
    with open(f"{cgroup_path}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return int(v)
    return 0


def equal_memory_epochs(args, src, dataset, filelist, profile):
    """Three shuffled DataLoader epochs with the same memory for every side, origin throttled.

    One memory cgroup (v1) holds everything a side uses: the loader, its page cache and, for
    mmfs, the daemon (started inside it), its tiers and buffers and the page cache of the mount
    and of the shards, as in a container. Its size is the loader's own footprint (measured
    first) plus --memory-fraction of the dataset (half by default). mmfs is told what it may use
    with the mount options of --memory-mmfs ("{data}" stands for the data share in bytes). The
    origin's reads are throttled by the blkio cgroup (the reader for the native folder, the
    daemon for mmfs) and counted per epoch from that cgroup's io_service_bytes.
    """
    size = dir_bytes(src)
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
        sides.append((f"mmfs {' '.join(options)}",
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
                r = {"seconds": 0, "failed": proc.stderr[-500:], "oom_kills": int(oom)}
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
                                                             "cache", "tiers") if k in stats}
            results[label] = r
            log(f"  equal memory {label}: epochs {[round(x, 2) for x in r['epoch_seconds']]}, "
                f"origin MB {[round(x / 1e6) for x in r['origin_bytes']]}, "
                f"{r['samples_per_second']:.0f} samples/s in epochs 2-3, cgroup peak "
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


def million(args):
    """Mount time, cold and warm os.walk, ImageFolder construction (warm) and daemon memory at
    1,000,000 metadata-only entries (1,000 folders of 1,000 files), for the peers in --peers."""
    n = 1_000_000
    work = args.work
    src = os.path.join(work, f"meta-{n}")
    if not os.path.isdir(os.path.join(src, "train")):
        log(f"generating {n} metadata-only entries in {src}")
        run([GEN, src, "--samples", str(n), "--classes", "1000", "--metadata-only"])
    image = os.path.join(work, f"meta-{n}.sqfs")
    if not os.path.exists(image):
        run(["mksquashfs", src, image, "-noI", "-noD", "-noF", "-noX", "-no-progress", "-quiet"])
    dataset = os.path.join(work, f"meta-{n}.mmfs")
    if not os.path.exists(dataset):
        run([MMFS, "pack", "-q", src, dataset])
    known = {"native": lambda: Native(work, src),
             "squashfs": lambda: KernelSquashfs(work, image, None),
             "squashfuse_ll": lambda: SquashfuseLL(work, image, None),
             "mmfs": lambda: Mmfs(work, dataset, None, ["--ram-cache", "64M"] + args.mmfs_option)}
    peers = [known[p]() for p in args.peers.split(",") if p in known]
    res = {"mount": {}, "list": {}, "list-warm": {}, "imagefolder": {}}
    for p in peers:
        p.stop()
        drop_caches()
        p.start()
        try:
            res["mount"][p.name] = {"seconds": p.mount_seconds}
            pid = p.daemon_pid()
            cpu0 = cpu_seconds(pid) if pid else None
            cold, files = walk_seconds(p.root)
            cold_cpu = cpu_seconds(pid) - cpu0 if pid else None
            requests = mmfs_requests(p.root) if isinstance(p, Mmfs) else {}
            warm, _ = walk_seconds(p.root)
            r = run([PY, "-c", IMAGEFOLDER_1M, os.path.join(p.root, "train")])
            folder = json.loads(r.stdout.strip().splitlines()[-1])
            res["list"][p.name] = {"seconds": cold, "files": files}
            res["list-warm"][p.name] = {"seconds": warm}
            res["imagefolder"][p.name] = {"seconds": folder["seconds"]}
            if pid:
                res["list"][p.name].update(daemon_cpu_seconds=cold_cpu,
                                           daemon_peak_rss=peak_rss(pid))
            if requests:
                res["list"][p.name]["requests"] = requests
            log(f"  1M entries {p.name}: mount {p.mount_seconds:.3f} s, cold os.walk {cold:.2f} s "
                f"({files} files), warm {warm:.2f} s, ImageFolder {folder['seconds']:.2f} s "
                f"({folder['samples']}), daemon cpu {cold_cpu}, "
                f"rss {res['list'][p.name].get('daemon_peak_rss')}, requests {requests}")
        finally:
            p.stop()
    return res


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
    ap.add_argument("--report", help="only rewrite latest.md from this results .jsonl file")
    args = ap.parse_args()
    if args.report:
        return report_from_jsonl(args.report)
    if os.geteuid() != 0:
        sys.exit("bench.py needs root (drop_caches, mounts, cgroups)")
    os.makedirs(args.work, exist_ok=True)
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
    all_peers = {
        "native": Native(args.work, src),
        "squashfs": KernelSquashfs(args.work, image, sq_seconds),
        "squashfuse_ll": SquashfuseLL(args.work, image, sq_seconds),
        "mmfs": Mmfs(args.work, dataset, mmfs_seconds),
        # The kernel answers Python's isatty() ioctl: warm reads never reach the daemon.
        "mmfs-overlay": Mmfs(args.work, dataset, mmfs_seconds, ["--overlay"], "mmfs --overlay"),
        # The same mount without the per-reader accounting: what that accounting costs (issue 21).
        "mmfs-noreaders": Mmfs(args.work, dataset, mmfs_seconds, ["-o", "readers=off"],
                               "mmfs readers=off"),
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
            for profile in PROFILES:
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
    args = argparse.Namespace(samples=meta["samples"], repeats=meta.get("repeats", 3))
    write_report(args, peers, rows, meta["started"])


def equal_memory_table(label, mode, res):
    d = res["dataset"]
    base = res.get("native", {}).get("seconds")
    lines = ["", f"{label}, {mode}: one memory cgroup of {d['memory_limit'] / 1e6:.0f} MB for "
             f"everything (loader footprint {d['loader_footprint'] / 1e6:.0f} MB + data share; "
             f"dataset {d['bytes'] / 1e6:.0f} MB):", "",
             "| side | epochs (s) | epochs 2-3 (samples/s) | vs native | origin MB per epoch | "
             "cgroup peak | daemon peak RSS |", "|---|---|---|---|---|---|---|"]
    for k, v in res.items():
        if k == "dataset":
            continue
        if v.get("failed"):
            lines.append(f"| {k} | failed (OOM kills: {v.get('oom_kills')}) | | | | | |")
            continue
        ep = ", ".join(f"{x:.1f}" for x in v["epoch_seconds"])
        ratio = f"{base / v['seconds']:.2f}x" if base and v["seconds"] else "-"
        origin = " / ".join(f"{x / 1e6:.0f}" for x in v.get("origin_bytes", []))
        rss = v.get("daemon_peak_rss")
        lines.append(f"| {k} | {ep} | {v['samples_per_second']:.0f} | {ratio} | {origin} | "
                     f"{v['cgroup_peak'] / 1e6:.0f} MB | "
                     + (f"{rss / 1e6:.0f} MB |" if rss else "- |"))
    return lines


def write_report(args, peers, rows, started):
    out_dir = os.path.join(HERE, "results")
    os.makedirs(out_dir, exist_ok=True)
    machine = f"{platform.node()}, {os.cpu_count()} cores, Linux {platform.release()}"
    with open(os.path.join(out_dir, f"{started}.jsonl"), "w") as f:
        for label, mode, res in rows:
            f.write(json.dumps({"started": started, "machine": machine, "samples": args.samples,
                                "repeats": args.repeats, "workload": label, "mode": mode,
                                "results": res,
                                "peers": [{"name": p.name, "pack_seconds": p.pack_seconds,
                                           "pack_bytes": p.pack_bytes} for p in peers]}) + "\n")
    names = [p.name for p in peers]
    lines = [f"Machine: {machine}. Date: {started}. Dataset: {args.samples} samples "
             f"(JPEG 160-640 px + caption), median of {args.repeats}.",
             "Cells: seconds (ratio to native: native time / peer time, above 1 is faster).", "",
             "| workload | mode | " + " | ".join(names) + " |",
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
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "latest.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
