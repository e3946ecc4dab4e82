#!/usr/bin/python3
"""The remote profile: mmfs over S3 against s3fs and rclone mount, behind a delaying proxy.

Run as root from the repository after a release build (s3rver, s3fs and rclone installed):
    /usr/bin/python3 bench/remote.py --samples 20000

One s3rver (127.0.0.1, a free port, data in bench/.cache/s3rver, kept between runs and uploaded
again only when the datasets change) holds the packed dataset (manifest, index, shards) under
packed-N/, the source folder as one object per file under files-N/ and the packed 1M-entry
metadata dataset under meta-1000000/. Every peer reads it through bench/delay_proxy.py (20 ms
before each response's first byte, 200 MB/s shared; each peer on its own port, so the bytes it
pulls are counted apart):

  native        the source folder on local disk (the reference)
  mmfs local    mmfs mount of the packed dataset on local disk
  mmfs s3       mmfs mount s3://bkt/packed-N --endpoint PROXY --cache-dir TMP (SSD tier on)
  s3fs          s3fs bkt:/files-N, path-style, through the proxy
  rclone        rclone mount --vfs-cache-mode full, its cache in TMP, through the proxy

The reference in every run (unless --no-aws-cp): `aws s3 cp --recursive` of the packed dataset
through the same proxy (the AWS CLI, Debian's awscli), what a user does without mmfs; a first
epoch of mmfs s3 is measured against its time and its bytes.

Workloads (bench/workloads.py): a first raw DataLoader epoch (2 workers, batch 64, shuffled;
cold: a fresh mount, empty cache directories, page cache dropped), a second epoch on the same
mount, cold random whole-image reads by one process for --random-seconds, and the mount time of
the remote 1M-entry metadata dataset, fresh (empty cache directory) and again from the cache
directory. s3fs and rclone read a seeded random subset of --slow-subset samples (they take
tens of minutes for a 20,000-sample epoch), and their epoch times are scaled to the whole
dataset (marked ~). Results: bench/results/remote-<timestamp>.json and a table on stdout.

Ownership: every process this script starts (s3rver, the proxy, s3fs, rclone, the mmfs daemons)
and every mount it makes are ended and unmounted in finally blocks, by PID, on exit, on an
error and on Ctrl-C or SIGTERM. Thread-safety: single-threaded.
"""
import argparse
import contextlib
import ctypes
import datetime
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import bench
from bench import PY, cpu_seconds, drop_caches, is_mounted, log, run, wait_for

S3RVER = "/opt/mmfs-test-servers/node_modules/.bin/s3rver"
# Debian's AWS CLI (awscli), not one another Python on the PATH may have.
AWS = "/usr/bin/aws"
PROXY = os.path.join(bench.HERE, "delay_proxy.py")
BUCKET = "bkt"
KEY, SECRET, REGION = "S3RVER", "S3RVER", "us-east-1"
META = 1_000_000
# The SHA-256 of an empty payload (an S3 PUT of a directory marker signs it).
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

TARGETS = [  # (figure key, description, predicate on the value, shown as)
    ("epoch1_vs_s3fs", "first epoch, mmfs s3 vs s3fs", lambda v: v >= 10, ">= 10x"),
    ("epoch1_vs_rclone", "first epoch, mmfs s3 vs rclone", lambda v: v >= 5, ">= 5x"),
    ("epoch1_origin_share", "epoch-1 origin bytes / dataset, mmfs s3", lambda v: v <= 1.15,
     "<= 1.15x"),
    ("epoch1_vs_aws_cp", "first epoch, mmfs s3 / aws s3 cp of the packed dataset (time)",
     lambda v: v <= 1.25, "<= 1.25x"),
    ("epoch1_origin_vs_packed", "epoch-1 origin bytes, mmfs s3 / aws s3 cp's",
     lambda v: v <= 1.02, "<= 1.02x"),
    ("epoch2_vs_local", "epoch 2, mmfs s3 vs mmfs local", lambda v: v >= 0.9, ">= 0.9x"),
    ("random_vs_s3fs", "cold random reads x1, mmfs s3 vs s3fs", lambda v: v >= 10, ">= 10x"),
    ("meta_mount_fresh", "1M-entry remote mount, fresh (s)", lambda v: v < 5, "< 5 s"),
    ("meta_mount_again", "1M-entry remote remount from the cache (s)", lambda v: v < 0.5,
     "< 0.5 s"),
]


class Interrupted(Exception):
    pass


def _on_sigterm(signum, frame):
    raise Interrupted(f"signal {signum}")


_libc = ctypes.CDLL(None, use_errno=True)


def _child_setup():
    """In a child before exec: its own session (a terminal's Ctrl-C reaches only this script,
    which then stops the children in order) and SIGTERM when this script dies."""
    os.setsid()
    _libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def child_env():
    """The environment for the tools: AWS_* of the caller left out (a CA bundle there breaks
    rclone's plain-HTTP client; keys would pick the wrong account), s3rver's keys put in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION=REGION)
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def end_process(proc, name, grace=10):
    """Ends a child this script started, by its PID: SIGTERM, then SIGKILL after `grace`."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        log(f"  {name} (pid {proc.pid}) ignored SIGTERM; killing it")
        proc.kill()
        proc.wait()


def unmount(path):
    if is_mounted(path):
        if run(["fusermount3", "-u", path], check=False).returncode != 0:
            run(["fusermount3", "-u", "-z", path], check=False)


class S3Server:
    """s3rver on 127.0.0.1 with its data in `data_dir`; the bucket is made at start."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.proc = None
        self.port = None

    def start(self):
        os.makedirs(self.data_dir, exist_ok=True)
        self.port = free_port()
        self.log = open(os.path.join(self.data_dir, "..", "s3rver.log"), "w")
        self.proc = subprocess.Popen(
            [S3RVER, "-d", self.data_dir, "-a", "127.0.0.1", "-p", str(self.port), "--silent",
             "--no-vhost-buckets", "--configure-bucket", BUCKET],
            stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=_child_setup, env=child_env())
        if not wait_for(lambda: self.proc.poll() is not None or port_open(self.port), 30) \
                or self.proc.poll() is not None:
            raise RuntimeError(f"s3rver did not start (see {self.log.name})")
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        end_process(self.proc, "s3rver")
        if self.proc is not None:
            self.log.close()

    def cpu(self):
        return cpu_seconds(self.proc.pid)

    def put_empty(self, key):
        """PUTs an empty object, a directory marker, with curl's SigV4."""
        # application/x-directory: what s3fs writes for a folder, and reads as one (any other
        # type makes s3fs take the marker for a file).
        run(["curl", "-sf", "-X", "PUT", "--data-binary", "", "-H",
             "Content-Type: application/x-directory", "--aws-sigv4",
             f"aws:amz:{REGION}:s3", "--user", f"{KEY}:{SECRET}",
             "-H", f"x-amz-content-sha256: {EMPTY_SHA256}", f"{self.url}/{BUCKET}/{key}"],
            env=child_env())


class DelayProxy:
    """bench/delay_proxy.py in front of the store: one listening port (group) per peer."""

    def __init__(self, upstream_port, groups, delay_ms, bandwidth):
        self.args = [PY, PROXY, "--upstream", f"127.0.0.1:{upstream_port}",
                     "--delay-ms", str(delay_ms), "--bandwidth", bandwidth]
        for g in groups:
            self.args += ["--listen", g]
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True,
                                     preexec_fn=_child_setup)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the delaying proxy did not start")
        ready = json.loads(line)
        self.control, self.ports = ready["control"], ready["groups"]

    def stop(self):
        end_process(self.proc, "delay proxy")

    def stats(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.control}/stats", timeout=10) as r:
            return json.load(r)

    def endpoint(self, group):
        return f"http://127.0.0.1:{self.ports[group]}"


def start_store(stack, work, groups, delay_ms, bandwidth):
    """s3rver over work/s3rver/data and the delaying proxy in front of it with `groups`
    ("name=port"), each stopped by `stack` (a contextlib.ExitStack) however the bench ends."""
    store = S3Server(os.path.join(work, "s3rver", "data"))
    stack.callback(store.stop)
    store.start()
    proxy = DelayProxy(store.port, groups, delay_ms, bandwidth)
    stack.callback(proxy.stop)
    proxy.start()
    return store, proxy


class Snapshot:
    """Counters around a workload: the proxy's per group and CPU, s3rver's CPU."""

    def __init__(self, proxy, store, group):
        self.proxy, self.store, self.group = proxy, store, group
        self.t = time.monotonic()
        self.s = proxy.stats()
        self.store_cpu = store.cpu()

    def delta(self):
        s = self.proxy.stats()
        wall = time.monotonic() - self.t
        g1, g0 = s["groups"][self.group], self.s["groups"][self.group]
        return {"origin_bytes": g1["bytes_down"] - g0["bytes_down"],
                "origin_requests": g1["responses"] - g0["responses"],
                "origin_connections": g1["connections"] - g0["connections"],
                "proxy_cpu_seconds": s["cpu_seconds"] - self.s["cpu_seconds"],
                "store_cpu_seconds": self.store.cpu() - self.store_cpu,
                "wall_seconds": wall}


class Peer(bench.Peer):
    """A dataset root as a reader sees it; start() gives a fresh (cold) mount."""
    group = None  # the proxy group it reads through, if remote
    subset = False  # reads the --slow-subset list

    def __init__(self, name, root):
        super().__init__(work=None)
        self.name, self.root = name, root

    def cold_start(self):
        self.stop()
        self.clear()
        drop_caches()
        self.start()

    def clear(self):
        pass


class MmfsPeer(Peer):
    def __init__(self, name, dataset, root, cache_dir=None, endpoint=None, group=None):
        super().__init__(name, root)
        self.dataset, self.cache_dir, self.endpoint, self.group = dataset, cache_dir, endpoint, \
            group

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        cmd = [bench.MMFS, "mount", self.dataset, self.root]
        if self.endpoint:
            cmd += ["--endpoint", self.endpoint]
        if self.cache_dir:
            os.makedirs(self.cache_dir, exist_ok=True)
            cmd += ["--cache-dir", self.cache_dir]
        t = time.monotonic()
        r = run(cmd, check=False, env=child_env())
        self.mount_seconds = time.monotonic() - t
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def daemon_pid(self):
        pids = bench.pids_of(f"mount {self.dataset} {self.root}( |$)")
        return pids[0] if pids else None

    def stop(self):
        pid = self.daemon_pid()
        if is_mounted(self.root):
            r = run([bench.MMFS, "umount", self.root], check=False)
            if r.returncode != 0:
                log(f"  mmfs umount {self.root}: {r.stderr.strip()}")
                unmount(self.root)
        if pid and not wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 20):
            log(f"  the mmfs daemon {pid} outlived its unmount; killing it")
            os.kill(pid, signal.SIGKILL)

    def clear(self):
        if self.cache_dir:
            shutil.rmtree(self.cache_dir, ignore_errors=True)

    def stats_text(self):
        return run([bench.MMFS, "stats", self.root], check=False).stdout


class FusePeer(Peer):
    """A FUSE daemon run in the foreground as this script's child (s3fs, rclone)."""
    subset = True
    cache_dir = None

    def command(self):
        raise NotImplementedError

    def __init__(self, name, root, group):
        super().__init__(name, root)
        self.group = group
        self.proc = None

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        if self.cache_dir:
            os.makedirs(self.cache_dir, exist_ok=True)
        self.logf = open(self.root + ".log", "w")
        t = time.monotonic()
        self.proc = subprocess.Popen(self.command(), stdout=self.logf, stderr=subprocess.STDOUT,
                                     preexec_fn=_child_setup, env=child_env())
        if not wait_for(lambda: self.proc.poll() is not None or is_mounted(self.root), 60) \
                or self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} did not mount (see {self.logf.name})")
        self.mount_seconds = time.monotonic() - t

    def stop(self):
        if self.proc is None:
            return
        unmount(self.root)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            end_process(self.proc, self.name)
        self.proc = None
        self.logf.close()

    def daemon_pid(self):
        return self.proc.pid if self.proc and self.proc.poll() is None else None

    def clear(self):
        if self.cache_dir:
            shutil.rmtree(self.cache_dir, ignore_errors=True)


class S3fsPeer(FusePeer):
    def __init__(self, root, prefix, endpoint, passwd):
        super().__init__("s3fs", root, "s3fs")
        self.prefix, self.endpoint, self.passwd = prefix, endpoint, passwd

    def command(self):
        # Defaults otherwise: no local data cache (use_cache is off), its stat cache on.
        return ["s3fs", f"{BUCKET}:/{self.prefix}", self.root, "-f", "-o",
                f"use_path_request_style,url={self.endpoint},passwd_file={self.passwd}"]


class RclonePeer(FusePeer):
    def __init__(self, root, prefix, config, cache_dir):
        super().__init__("rclone", root, "rclone")
        self.prefix, self.config, self.cache_dir = prefix, config, cache_dir

    def command(self):
        return ["rclone", "mount", "--config", self.config, f"proxied:{BUCKET}/{self.prefix}",
                self.root, "--vfs-cache-mode", "full", "--cache-dir", self.cache_dir]


def sample_bytes(src, rel):
    """Bytes of the samples (image + caption) listed in `rel`."""
    total = 0
    for r in rel:
        p = os.path.join(src, r)
        total += os.path.getsize(p) + os.path.getsize(os.path.splitext(p)[0] + ".txt")
    return total


def tree_stamp(paths):
    """A digest of the trees under `paths`, to tell whether the store needs them again: a packed
    dataset by its manifest (which has the checksums of the index and every shard) less its
    creation time, as bench.prepare() packs again at every run; a folder by its files' names,
    sizes and mtimes."""
    h = hashlib.sha256()
    for top in paths:
        manifest = os.path.join(top, "manifest.json")
        if os.path.exists(manifest):
            with open(manifest) as f:
                m = json.load(f)
            m.pop("created", None)
            h.update(json.dumps(m, sort_keys=True).encode())
            continue
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for f in sorted(files):
                st = os.stat(os.path.join(d, f))
                h.update(f"{os.path.relpath(os.path.join(d, f), top)} {st.st_size} "
                         f"{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def write_rclone_config(path, store_url, proxy_url):
    common = (f"type = s3\nprovider = Other\naccess_key_id = {KEY}\n"
              f"secret_access_key = {SECRET}\nregion = {REGION}\nforce_path_style = true\n")
    with open(path, "w") as f:
        f.write(f"[store]\n{common}endpoint = {store_url}\n\n"
                f"[proxied]\n{common}endpoint = {proxy_url}\n")
    os.chmod(path, 0o600)


def upload(store, config, uploads, stamp_file):
    """Copies each (local dir, prefix) into the bucket with rclone, straight to the store (not
    through the proxy), unless the stamp says the store holds these exact trees already."""
    stamp = tree_stamp([d for d, _ in uploads]) + " " + " ".join(p for _, p in uploads)
    if os.path.exists(stamp_file) and open(stamp_file).read() == stamp:
        log("  the store holds these datasets already")
        return 0.0
    if os.path.exists(stamp_file):
        os.remove(stamp_file)
    t = time.monotonic()
    for local, prefix in uploads:
        log(f"  uploading {local} to s3://{BUCKET}/{prefix}")
        # s3rver lists a common prefix only when an object sits right under it: a folder that
        # holds only folders (files-N/train/) would be missing from its parent's listing, so
        # s3fs and rclone would show an empty root, and rclone sync would find nothing in the
        # store and upload everything again. A directory marker, as S3 consoles make, puts it
        # back; made first, for the sync's own listing.
        for d, dirs, files in os.walk(local):
            if dirs and not files and d != local:
                store.put_empty(f"{prefix}/{os.path.relpath(d, local)}/")
        # Now and then an object rclone has just put into s3rver reads back with a size of 0
        # (rclone reports it corrupted on transfer, and it is missing afterwards): 5-15 of
        # 40,000 per pass. Each retry uploads only what is missing (the markers let the sync
        # list the store), and a size check must then find nothing missing.
        cmd = ["--config", config, local, f"store:{BUCKET}/{prefix}"]
        r = run(["rclone", "sync"] + cmd + ["--transfers", "8", "--checkers", "8",
                                            "--s3-upload-cutoff", "5G", "--retries", "10"],
                check=False, env=child_env())
        check = run(["rclone", "check", "--size-only", "--one-way"] + cmd, check=False,
                    env=child_env())
        if check.returncode != 0:
            raise RuntimeError(f"uploading {local}: {r.stderr[-1500:]}\n{check.stderr[-1500:]}")
    with open(stamp_file, "w") as f:
        f.write(stamp)
    return time.monotonic() - t


def workload(peer, name, filelist, extra, proxy, store):
    snap = Snapshot(proxy, store, peer.group) if peer.group else None
    cpu0 = (proxy.stats()["cpu_seconds"], store.cpu())
    r = bench.workload(peer, name, filelist, extra)
    if snap:
        r.update(snap.delta())
    else:
        s = proxy.stats()
        r.update(proxy_cpu_seconds=s["cpu_seconds"] - cpu0[0],
                 store_cpu_seconds=store.cpu() - cpu0[1])
    return r


def run_peer(peer, args, lists, proxy, store, result):
    """Epochs 1 and 2 on a fresh mount, then cold random reads on another; into result[name]."""
    filelist, n, data_bytes = lists["subset"] if peer.subset else lists["full"]
    out = result.setdefault(peer.name, {})
    out.update(samples=n, sample_bytes=data_bytes, scale=lists["full"][1] / n)
    log(f"{peer.name}: epochs over {n} samples")
    peer.cold_start()
    out["mount_seconds"] = peer.mount_seconds
    for e in (1, 2):
        r = workload(peer, "loader-raw", filelist, ["--seed", str(e - 1)], proxy, store)
        out[f"epoch{e}"] = r
        log(f"  epoch {e}: {r['epoch_seconds'][0]:.2f} s for {r['files']} samples"
            + (f", origin {r['origin_bytes'] / 1e6:.1f} MB in {r['origin_requests']} requests, "
               f"proxy cpu {r['proxy_cpu_seconds']:.2f} s" if peer.group else ""))
        if isinstance(peer, MmfsPeer) and peer.group:
            out[f"epoch{e}"]["mmfs_stats"] = peer.stats_text()
    log(f"{peer.name}: cold random reads, 1 process, at most {args.random_seconds} s")
    peer.cold_start()
    r = workload(peer, "randread", lists["full"][0],
                 ["--seconds", str(args.random_seconds)], proxy, store)
    out["randread"] = r
    log(f"  {r['files_per_second']:.1f} files/s ({r['files']} files)"
        + (f", origin {r['origin_bytes'] / 1e6:.1f} MB" if peer.group else ""))
    if isinstance(peer, MmfsPeer) and peer.group:
        out["randread"]["mmfs_stats"] = peer.stats_text()
    peer.stop()


def meta_mounts(args, proxy, store, tmp, meta_dataset, result):
    """Mount of the remote 1M-entry dataset with an empty cache directory, then again from it
    (page cache dropped), then again (page cache warm); --meta-rounds rounds, medians."""
    with open(os.path.join(meta_dataset, "manifest.json")) as f:
        index_bytes = json.load(f)["index"]["size"]
    url = f"s3://{BUCKET}/meta-{META}"
    cache = os.path.join(tmp, "mmfs-meta-cache")
    peer = MmfsPeer("mmfs s3 meta", url, os.path.join(tmp, "mnt-meta"), cache,
                    proxy.endpoint("mmfs"), "mmfs")
    fresh, again, warm, fetched = [], [], [], []
    for _ in range(args.meta_rounds):
        peer.stop()
        peer.clear()
        drop_caches()
        snap = Snapshot(proxy, store, "mmfs")
        peer.start()
        fresh.append(peer.mount_seconds)
        fetched.append(snap.delta())
        peer.stop()
        drop_caches()
        snap = Snapshot(proxy, store, "mmfs")
        peer.start()
        again.append(peer.mount_seconds)
        fetched.append(snap.delta())
        files = sum(1 for _ in os.scandir(os.path.join(peer.root, "train")))
        peer.stop()
        peer.start()
        warm.append(peer.mount_seconds)
        peer.stop()
        log(f"  1M entries: fresh mount {fresh[-1]:.3f} s, remount {again[-1]:.3f} s, "
            f"warm {warm[-1]:.3f} s ({files} folders under train)")
    peer.clear()
    result["meta"] = {"fresh_seconds": statistics.median(fresh), "fresh_runs": fresh,
                      "again_seconds": statistics.median(again), "again_runs": again,
                      "warm_seconds": statistics.median(warm), "warm_runs": warm,
                      "index_bytes": index_bytes, "origin": fetched}


def proxy_check(proxy, store, dataset, prefix, result):
    """The proxy alone: one large object (the biggest shard) through it with curl; its rate
    against the cap and the proxy's CPU, so that the figures are the peers' and not the proxy's."""
    shard = max((f for f in os.listdir(dataset) if f.startswith("shard-")),
                key=lambda f: os.path.getsize(os.path.join(dataset, f)))
    size = os.path.getsize(os.path.join(dataset, shard))
    key = f"{prefix}/{shard}"
    snap = Snapshot(proxy, store, "check")
    run(["curl", "-sf", "-o", "/dev/null", "--aws-sigv4", f"aws:amz:{REGION}:s3", "--user",
         f"{KEY}:{SECRET}", "-H", f"x-amz-content-sha256: {EMPTY_SHA256}",
         f"{proxy.endpoint('check')}/{BUCKET}/{key}"], env=child_env())
    d = snap.delta()
    d.update(object_bytes=size, mb_per_second=d["origin_bytes"] / d["wall_seconds"] / 1e6)
    result["proxy_check"] = d
    log(f"proxy check: {size / 1e6:.0f} MB in {d['wall_seconds']:.2f} s "
        f"({d['mb_per_second']:.0f} MB/s), proxy cpu {d['proxy_cpu_seconds']:.2f} s, "
        f"s3rver cpu {d['store_cpu_seconds']:.2f} s")


def aws_copy(proxy, store, prefix, tmp, result):
    """The reference a user has without mmfs: `aws s3 cp --recursive` of the packed dataset
    through the same proxy (AWS CLI's default 10 requests at once), timed, its bytes counted."""
    dest = os.path.join(tmp, "aws-cp")
    shutil.rmtree(dest, ignore_errors=True)
    snap = Snapshot(proxy, store, "awscp")
    env = child_env()
    env.update(AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null",
               AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="")
    r = run([AWS, "s3", "cp", "--recursive", "--only-show-errors", "--endpoint-url",
             proxy.endpoint("awscp"), f"s3://{BUCKET}/{prefix}", dest], check=False, env=env)
    d = snap.delta()
    shutil.rmtree(dest, ignore_errors=True)
    if r.returncode != 0:
        log(f"aws s3 cp failed: {r.stderr.strip()[-500:]}")
        return
    result["aws_cp"] = d
    log(f"aws s3 cp --recursive: {d['origin_bytes'] / 1e6:.0f} MB in {d['wall_seconds']:.2f} s "
        f"({d['origin_bytes'] / d['wall_seconds'] / 1e6:.0f} MB/s), "
        f"{d['origin_requests']} requests")


def epoch_time(res, name, e):
    """(seconds scaled to the whole dataset, scaled or not) of epoch e of a peer."""
    r = res[name]
    return r[f"epoch{e}"]["epoch_seconds"][0] * r["scale"], r["scale"] != 1


def figures(res):
    f = {}
    s3, s3fs, rcl, loc = "mmfs s3", "s3fs", "rclone", "mmfs local"
    have = lambda *names: all(n in res for n in names)
    if have(s3, s3fs):
        f["epoch1_vs_s3fs"] = epoch_time(res, s3fs, 1)[0] / epoch_time(res, s3, 1)[0]
        f["random_vs_s3fs"] = (res[s3]["randread"]["files_per_second"]
                               / res[s3fs]["randread"]["files_per_second"])
    if have(s3, rcl):
        f["epoch1_vs_rclone"] = epoch_time(res, rcl, 1)[0] / epoch_time(res, s3, 1)[0]
    if have(s3):
        f["epoch1_origin_share"] = res[s3]["epoch1"]["origin_bytes"] / res[s3]["sample_bytes"]
    if have(s3, "aws_cp"):
        f["epoch1_vs_aws_cp"] = epoch_time(res, s3, 1)[0] / res["aws_cp"]["wall_seconds"]
        f["epoch1_origin_vs_packed"] = (res[s3]["epoch1"]["origin_bytes"]
                                        / res["aws_cp"]["origin_bytes"])
    if have(s3, loc):
        f["epoch2_vs_local"] = epoch_time(res, loc, 2)[0] / epoch_time(res, s3, 2)[0]
    if "meta" in res:
        f["meta_mount_fresh"] = res["meta"]["fresh_seconds"]
        f["meta_mount_again"] = res["meta"]["again_seconds"]
    return f


def table(res, meta):
    lines = [f"## Remote profile ({meta['samples']} samples, {meta['dataset_bytes'] / 1e6:.0f} MB;"
             f" {meta['delay_ms']:g} ms before each response, {meta['bandwidth'] / 1e6:g} MB/s "
             "shared)", "",
             "| peer | samples read | mount (s) | epoch 1 (s) | epoch 2 (s) |"
             " origin / data, epoch 1 | origin / data, epoch 2 | requests, epoch 1 | random reads x1 (files/s) |"
             " proxy CPU, epoch 1 | store CPU, epoch 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in ("native", "mmfs local", "mmfs s3", "s3fs", "rclone"):
        if name not in res:
            continue
        r = res[name]
        mark = "~" if r["scale"] != 1 else ""
        e1, e2 = r["epoch1"], r["epoch2"]
        share = lambda e: (f"{e['origin_bytes'] / r['sample_bytes']:.3f}"
                           if "origin_bytes" in e else "-")
        cpu = lambda e, k: (f"{e[k]:.1f} s ({e[k] / e['epoch_seconds'][0]:.0%})"
                            if "origin_bytes" in e else "-")
        lines.append(
            f"| {name} | {r['samples']} | "
            f"{'-' if r['mount_seconds'] is None else format(r['mount_seconds'], '.3f')} | "
            f"{mark}{epoch_time(res, name, 1)[0]:.2f} | {mark}{epoch_time(res, name, 2)[0]:.2f} | "
            f"{share(e1)} | {share(e2)} | {e1.get('origin_requests', '-')} | "
            f"{r['randread']['files_per_second']:.1f} | {cpu(e1, 'proxy_cpu_seconds')} | "
            f"{cpu(e1, 'store_cpu_seconds')} |")
    if any(res[n]["scale"] != 1 for n in res if n in ("s3fs", "rclone")):
        sub = next(res[n] for n in ("s3fs", "rclone") if n in res)
        lines += ["", f"~ read a seeded random subset of {sub['samples']} samples "
                  f"({sub['sample_bytes'] / 1e6:.0f} MB) and scaled by {sub['scale']:.1f} to the "
                  "whole dataset; origin / data is against the subset's bytes."]
    if "meta" in res:
        m = res["meta"]
        runs = lambda k: ", ".join(f"{x:.3f}" for x in m[k])
        lines += ["", f"1M-entry remote dataset (mmfs s3, index {m['index_bytes'] / 1e6:.0f} MB): "
                  f"fresh mount {m['fresh_seconds']:.3f} s (runs {runs('fresh_runs')}), remount "
                  f"from the cache directory {m['again_seconds']:.3f} s (runs "
                  f"{runs('again_runs')}; page cache dropped before each), and with the page "
                  f"cache warm {m['warm_seconds']:.3f} s (runs {runs('warm_runs')})"]
    if "aws_cp" in res:
        c = res["aws_cp"]
        lines += ["", f"aws s3 cp --recursive of the packed dataset through the proxy: "
                  f"{c['origin_bytes'] / 1e6:.0f} MB in {c['wall_seconds']:.2f} s "
                  f"({c['origin_bytes'] / c['wall_seconds'] / 1e6:.0f} MB/s), "
                  f"{c['origin_requests']} requests"]
    if "proxy_check" in res:
        c = res["proxy_check"]
        lines += ["", f"Proxy alone: {c['object_bytes'] / 1e6:.0f} MB in {c['wall_seconds']:.2f} s "
                  f"({c['mb_per_second']:.0f} MB/s against the cap), proxy CPU "
                  f"{c['proxy_cpu_seconds']:.2f} s, s3rver CPU {c['store_cpu_seconds']:.2f} s"]
    figs = figures(res)
    lines += ["", "| target | figure | wanted | met |", "|---|---|---|---|"]
    for key, what, ok, wanted in TARGETS:
        if key in figs:
            v = figs[key]
            lines.append(f"| {what} | {v:.2f} | {wanted} | {'yes' if ok(v) else 'NO'} |")
    return "\n".join(lines)


def prepare_meta():
    return bench.meta_dataset(os.path.join(bench.HERE, ".cache"), META)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--slow-subset", type=int, default=1000,
                    help="samples s3fs and rclone read per epoch (scaled to --samples)")
    ap.add_argument("--random-seconds", type=float, default=30.0,
                    help="cold random reads stop after this long")
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--bandwidth", default="200M")
    ap.add_argument("--meta-rounds", type=int, default=3)
    ap.add_argument("--peers", default="native,mmfs local,mmfs s3,s3fs,rclone",
                    help="comma-separated, of: native, mmfs local, mmfs s3, s3fs, rclone")
    ap.add_argument("--no-meta", action="store_true", help="skip the 1M-entry mount")
    ap.add_argument("--no-aws-cp", action="store_true",
                    help="skip the aws s3 cp reference (the AWS CLI, Debian's awscli)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (drop_caches, FUSE mounts)")
    wanted = [p.strip() for p in args.peers.split(",")]
    work = os.path.join(bench.HERE, ".cache")
    os.makedirs(work, exist_ok=True)
    signal.signal(signal.SIGTERM, _on_sigterm)

    log(f"preparing {args.samples} samples in {work}")
    src, filelist, _, _, dataset, _ = bench.prepare(
        argparse.Namespace(samples=args.samples, no_peers=True), work)
    meta_dataset = None if args.no_meta else prepare_meta()
    rel = [l.rstrip("\n") for l in open(filelist) if l.strip()]
    n = len(rel)
    k = min(n, args.slow_subset)
    subset = sorted(random.Random(7).sample(rel, k))
    tmp = tempfile.mkdtemp(prefix="mmfs-remote-")
    subset_list = os.path.join(tmp, f"subset-{k}.txt")
    with open(subset_list, "w") as f:
        f.write("\n".join(subset) + "\n")
    lists = {"full": (filelist, n, sample_bytes(src, rel)),
             "subset": (subset_list, k, sample_bytes(src, subset))}
    started = datetime.datetime.now(datetime.timezone.utc)
    res = {}
    meta = {"samples": n, "dataset_bytes": lists["full"][2], "delay_ms": args.delay_ms,
            "bandwidth": bench_bytes(args.bandwidth), "slow_subset": k,
            "random_seconds": args.random_seconds, "started": started.isoformat(),
            "command": " ".join([sys.executable] + sys.argv),
            "shard_bytes": bench.dir_bytes(dataset), "kernel": os.uname().release}
    store = proxy = None
    peers = []
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(shutil.rmtree, tmp, ignore_errors=True)
            store = S3Server(os.path.join(work, "s3rver", "data"))
            stack.callback(store.stop)
            store.start()
            proxy = DelayProxy(store.port, ["s3fs=0", "rclone=0",
                                            "mmfs=0", "check=0", "awscp=0"],
                               args.delay_ms, args.bandwidth)
            stack.callback(proxy.stop)
            proxy.start()
            config = os.path.join(tmp, "rclone.conf")
            write_rclone_config(config, store.url, proxy.endpoint("rclone"))
            passwd = os.path.join(tmp, "s3fs.passwd")
            with open(passwd, "w") as f:
                f.write(f"{KEY}:{SECRET}\n")
            os.chmod(passwd, 0o600)
            uploads = [(dataset, f"packed-{n}"), (src, f"files-{n}")]
            if meta_dataset:
                uploads.append((meta_dataset, f"meta-{META}"))
            meta["upload_seconds"] = upload(store, config, uploads,
                                            os.path.join(work, "s3rver", "stamp"))
            proxy_check(proxy, store, dataset, f"packed-{n}", res)
            if not args.no_aws_cp:
                aws_copy(proxy, store, f"packed-{n}", tmp, res)

            known = {
                "native": lambda: Peer("native", src),
                "mmfs local": lambda: MmfsPeer("mmfs local", dataset,
                                               os.path.join(tmp, "mnt-mmfs-local")),
                "mmfs s3": lambda: MmfsPeer("mmfs s3", f"s3://{BUCKET}/packed-{n}",
                                            os.path.join(tmp, "mnt-mmfs-s3"),
                                            os.path.join(tmp, "mmfs-cache"),
                                            proxy.endpoint("mmfs"), "mmfs"),
                "s3fs": lambda: S3fsPeer(os.path.join(tmp, "mnt-s3fs"), f"files-{n}",
                                         proxy.endpoint("s3fs"), passwd),
                "rclone": lambda: RclonePeer(os.path.join(tmp, "mnt-rclone"), f"files-{n}",
                                             config, os.path.join(tmp, "rclone-cache")),
            }
            for name in wanted:
                if name not in known:
                    sys.exit(f"--peers: unknown peer {name!r}")
                peer = known[name]()
                peers.append(peer)
                stack.callback(peer.stop)
                run_peer(peer, args, lists, proxy, store, res)
            if meta_dataset:
                log("1M-entry dataset: mount from the store")
                meta_mounts(args, proxy, store, tmp, meta_dataset, res)
    except (KeyboardInterrupt, Interrupted) as e:
        log(f"interrupted ({str(e) or 'Ctrl-C'}): everything started was stopped")
        sys.exit(130)
    os.makedirs(os.path.join(bench.HERE, "results"), exist_ok=True)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(bench.HERE, "results", f"remote-{stamp}.json")
    text = table(res, meta)
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": res, "figures": figures(res), "table": text}, f,
                  indent=1)
    print(text)
    log(f"results: {path}")


def bench_bytes(text):
    units = {"k": 10**3, "m": 10**6, "g": 10**9}
    t = text.strip().lower().rstrip("b")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


if __name__ == "__main__":
    main()
