#!/usr/bin/python3
"""A job of H hosts training from one bucket: the store's bytes per job, and the epochs.

Run as root from the repository after a release build (s3rver and memcached installed):
    /usr/bin/python3 bench/hosts.py --samples 20000 --hosts 1,2,4

The store is bench/remote.py's (s3rver on 127.0.0.1, the packed dataset under packed-N/, read
through bench/delay_proxy.py: 20 ms before each answer, 200 MB/s shared). For each H in --hosts,
H "hosts" run on this machine at the same time, each as its own mount of the same s3:// URL with
its own cache directory (its SSD tier) and its own memcached server with extstore (values on
disk, as on a host's NVMe); every mount names all the servers (--cluster-cache) and its own
(--cluster-self), so the hosts share the fill. H = 1 runs without a cluster tier.

Each epoch is a DistributedSampler epoch: a new shuffle of all samples (seed = epoch), host h
reading positions h, h+H, h+2H... with a raw DataLoader (2 workers, bench/workloads.py
loader-raw); the H loaders run at once, and the job's epoch ends when the last host's does.
Three epochs per H, then the store's bytes for the whole job against the packed dataset's.
The reference, as in bench/remote.py: `aws s3 cp --recursive` of the packed dataset through the
same proxy, in the same run.

All the hosts share this machine's 2 CPUs: with H = 4 eight loader workers and four daemons
compete for them, so epochs 2-3 measure the machine, not the hosts; the store's bytes per job
are what this bench is for.

Ownership: every process it starts (s3rver, the proxy, memcached, the mmfs daemons) and every
mount it makes are ended and unmounted in finally blocks, by PID, on exit, on an error and on
Ctrl-C or SIGTERM. Results: bench/results/hosts-<timestamp>.json and a table on stdout.
"""
import argparse
import contextlib
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import tempfile
import time

import bench
import remote
from bench import PY, log, wait_for

MEMCACHED = "/usr/bin/memcached"


class Memcached:
    """memcached with extstore on 127.0.0.1: `memory_mb` of RAM, values on a file of `disk`."""

    def __init__(self, work, name, memory_mb, disk):
        self.path = os.path.join(work, f"ext-{name}")
        self.memory_mb, self.disk = memory_mb, disk
        self.proc = None

    def start(self):
        self.port = remote.free_port()
        # -u root: a bench run as root; -I 2m: items up to 2 MiB; extstore keeps every value of
        # more than ext_item_size bytes on disk once memory fills.
        self.proc = subprocess.Popen(
            [MEMCACHED, "-u", "root", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0",
             "-m", str(self.memory_mb), "-t", "2", "-I", "2m",
             "-o", f"ext_path={self.path}:{self.disk},ext_wbuf_size=8,ext_threads=2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=remote._child_setup)
        if not wait_for(lambda: self.proc.poll() is not None or remote.port_open(self.port), 20) \
                or self.proc.poll() is not None:
            raise RuntimeError(f"memcached did not start: {self.proc.stderr.read()[-500:]}")
        self.address = f"127.0.0.1:{self.port}"

    def stop(self):
        remote.end_process(self.proc, "memcached")
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)


class Host(remote.MmfsPeer):
    """One host's mount: its cache directory, the job's memcached servers and its own."""

    def __init__(self, index, url, tmp, endpoint, servers, self_server, cache_args=()):
        super().__init__(f"host {index}", url, os.path.join(tmp, f"mnt-{index}"),
                         os.path.join(tmp, f"cache-{index}"), endpoint, "job")
        self.servers, self.self_server = servers, self_server
        self.cache_args = list(cache_args)

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        os.makedirs(self.cache_dir, exist_ok=True)
        cmd = [bench.MMFS, "mount", self.dataset, self.root, "--endpoint", self.endpoint,
               "--cache-dir", self.cache_dir] + self.cache_args
        if self.servers:
            cmd += ["--cluster-cache", ",".join(self.servers), "--cluster-self", self.self_server]
        r = bench.run(cmd, check=False, env=remote.child_env())
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def fill(self):
        try:
            with open(os.path.join(self.root, ".mmfs", "stats")) as f:
                return json.load(f).get("fill", {})
        except (OSError, ValueError):
            return {}


def epoch_lists(rel, hosts, epoch, tmp):
    """The epoch's shuffle of every sample, split as DistributedSampler splits it."""
    order = list(rel)
    random.Random(1000 + epoch).shuffle(order)
    paths = []
    for h in range(hosts):
        path = os.path.join(tmp, f"epoch{epoch}-host{h}.txt")
        with open(path, "w") as f:
            f.write("\n".join(order[h::hosts]) + "\n")
        paths.append(path)
    return paths


class FillTimeline:
    """Each host's fill, sampled every half second while an epoch runs: how many requests it
    kept in flight against its target, and its rate (why an epoch took what it took)."""

    FIELDS = ("state", "in_flight", "in_flight_target", "bytes_per_second")

    def __init__(self, hosts):
        self.hosts, self.samples, self.stop = hosts, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        t0 = time.monotonic()
        while not self.stop.wait(0.5):
            row = {"t": round(time.monotonic() - t0, 2), "hosts": []}
            for host in self.hosts:
                f = host.fill()
                sample = {k: f.get(k) for k in self.FIELDS}
                sample["fetched_bytes"] = (f.get("fetched") or {}).get("bytes")
                row["hosts"].append(sample)
            self.samples.append(row)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def run_epoch(hosts, lists, epoch, hint=False):
    """The hosts' loaders at once; (job seconds, per-host results). `hint`: each loader's
    sampler writes its epoch's order to the mount's hint first."""
    procs = []
    t = time.monotonic()
    for host, path in zip(hosts, lists):
        procs.append(subprocess.Popen(
            [PY, bench.WORKLOADS, "loader-raw", host.root, path, "--seed", str(epoch)]
            + (["--hint"] if hint else []),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p, host in zip(procs, hosts):
            out, err = p.communicate()
            if p.returncode != 0:
                raise RuntimeError(f"the loader on {host.name} failed: {err[-1500:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return time.monotonic() - t, results


def run_job(h, args, url, proxy, store, rel, tmp, shard_bytes):
    """H hosts, three epochs; the job's figures."""
    servers, hosts = [], []
    job = {"hosts": h, "epochs": []}
    with contextlib.ExitStack() as stack:
        if h > 1:
            for i in range(h):
                m = Memcached(tmp, f"{h}-{i}", args.memcached_mb, args.memcached_disk)
                stack.callback(m.stop)
                m.start()
                servers.append(m)
        addresses = [m.address for m in servers]
        cache_args = args.mount_args.split()
        if args.cache_fraction < 1:
            # A cache of that share of the dataset: the SSD tier that size, and a RAM tier too
            # small to hold more than a sliver of it.
            cache_args += ["--ssd-cache", str(int(args.cache_fraction * shard_bytes)),
                          "--ram-cache", "64M"]
            job["cache_fraction"] = args.cache_fraction
        for i in range(h):
            host = Host(i, url, tmp, proxy.endpoint("job"), addresses,
                        addresses[i] if addresses else "", cache_args)
            stack.callback(host.clear)
            stack.callback(host.stop)
            host.clear()
            hosts.append(host)
        bench.drop_caches()
        snap = remote.Snapshot(proxy, store, "job")
        for host in hosts:
            host.start()
        for e in range(1, args.epochs + 1):
            lists = epoch_lists(rel, h, e, tmp)
            before = remote.Snapshot(proxy, store, "job")
            with FillTimeline(hosts) as timeline:
                seconds, results = run_epoch(hosts, lists, e, args.hint)
            d = before.delta()
            files = sum(r["files"] for r in results)
            job["epochs"].append({"seconds": seconds, "files": files,
                                  "samples_per_second": files / seconds,
                                  "store_bytes": d["origin_bytes"],
                                  "store_requests": d["origin_requests"],
                                  "hosts": results, "fill_timeline": timeline.samples})
            log(f"  H={h} epoch {e}: {seconds:.2f} s, {files / seconds:.0f} samples/s, store "
                f"{d['origin_bytes'] / 1e6:.1f} MB in {d['origin_requests']} requests")
        total = snap.delta()
        job["store_bytes"] = total["origin_bytes"]
        job["store_share"] = total["origin_bytes"] / shard_bytes
        job["fills"] = [host.fill() for host in hosts]
        for i, f in enumerate(job["fills"]):
            most = max((row["hosts"][i].get("in_flight_target") or 0
                        for e in job["epochs"] for row in e["fill_timeline"]), default=0)
            log(f"  H={h} host {i}: fill {f.get('state')} in {f.get('seconds', 0):.1f} s, "
                f"{f.get('requests', 0)} requests, at most {most} in flight")
        log(f"  H={h}: the job read {total['origin_bytes'] / 1e6:.1f} MB from the store, "
            f"{job['store_share']:.3f}x the packed dataset")
    return job


def table(res, meta):
    ref = res.get("aws_cp", {}).get("wall_seconds")
    lines = [f"| hosts | epoch 1 | epoch 2 | epoch 3 | store bytes, 3 epochs | epoch 1 / aws s3 cp |",
             "|---|---|---|---|---|---|"]
    for job in res["jobs"]:
        e = job["epochs"]
        cells = [f"{x['seconds']:.1f} s ({x['samples_per_second']:.0f}/s)" for x in e]
        cells += [""] * (3 - len(cells))
        lines.append(f"| {job['hosts']} | " + " | ".join(cells[:3]) +
                     f" | {job['store_share']:.3f}x | " +
                     (f"{e[0]['seconds'] / ref:.2f}x |" if ref and e else "|"))
    if ref:
        lines.append(f"\naws s3 cp --recursive of the packed dataset: {ref:.1f} s; "
                     f"{meta['samples']} samples, {meta['shard_bytes'] / 1e6:.0f} MB packed, "
                     f"{meta['delay_ms']:g} ms, {meta['bandwidth'] / 1e6:.0f} MB/s"
                     + (f"; each host's cache {meta['cache_fraction']:g}x the dataset"
                        if meta.get("cache_fraction", 1) < 1 else ""))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--hosts", default="1,2,4", help="comma-separated numbers of hosts")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--bandwidth", default="200M")
    ap.add_argument("--memcached-mb", type=int, default=256,
                    help="each server's RAM; its values beyond go to extstore")
    ap.add_argument("--memcached-disk", default="2G", help="each server's extstore file")
    ap.add_argument("--no-aws-cp", action="store_true")
    ap.add_argument("--mount-args", default="",
                    help="more arguments for every mmfs mount, e.g. '--overlay' or '-o fill=on'")
    ap.add_argument("--hint", action="store_true",
                    help="the loaders write each epoch's order to MNT/.mmfs/hint (HintedSampler)")
    ap.add_argument("--cache-fraction", type=float, default=1.0,
                    help="each host's cache (SSD tier) as a share of the packed dataset; "
                         "below 1, a RAM tier of 64 MiB")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (drop_caches, FUSE mounts)")
    signal.signal(signal.SIGTERM, remote._on_sigterm)
    work = os.path.join(bench.HERE, ".cache")
    os.makedirs(work, exist_ok=True)
    log(f"preparing {args.samples} samples in {work}")
    src, filelist, _, _, dataset, _ = bench.prepare(
        argparse.Namespace(samples=args.samples, no_peers=True), work)
    rel = [l.rstrip("\n") for l in open(filelist) if l.strip()]
    n = len(rel)
    started = datetime.datetime.now(datetime.timezone.utc)
    meta = {"samples": n, "delay_ms": args.delay_ms, "cache_fraction": args.cache_fraction,
            "bandwidth": remote.bench_bytes(args.bandwidth), "epochs": args.epochs,
            "hint": args.hint, "mount_args": args.mount_args, "started": started.isoformat(), "command": " ".join([sys.executable] + sys.argv),
            "shard_bytes": bench.dir_bytes(dataset), "kernel": os.uname().release}
    res = {"jobs": []}
    tmp = tempfile.mkdtemp(prefix="mmfs-hosts-")
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(shutil.rmtree, tmp, ignore_errors=True)
            store, proxy = remote.start_store(stack, work, ["job=0", "awscp=0"], args.delay_ms,
                                              args.bandwidth)
            config = os.path.join(tmp, "rclone.conf")
            remote.write_rclone_config(config, store.url, proxy.endpoint("job"))
            remote.upload(store, config, [(dataset, f"packed-{n}")],
                          os.path.join(work, "s3rver", "stamp-hosts"))
            if not args.no_aws_cp:
                remote.aws_copy(proxy, store, f"packed-{n}", tmp, res)
            url = f"s3://{remote.BUCKET}/packed-{n}"
            for h in [int(x) for x in args.hosts.split(",") if x.strip()]:
                log(f"{h} host(s), {args.epochs} epochs")
                res["jobs"].append(run_job(h, args, url, proxy, store, rel, tmp,
                                           meta["shard_bytes"]))
    except (KeyboardInterrupt, remote.Interrupted) as e:
        log(f"interrupted ({str(e) or 'Ctrl-C'}): everything started was stopped")
        sys.exit(130)
    os.makedirs(os.path.join(bench.HERE, "results"), exist_ok=True)
    path = os.path.join(bench.HERE, "results",
                        f"hosts-{started.strftime('%Y%m%dT%H%M%SZ')}.json")
    text = table(res, meta)
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": res, "table": text}, f, indent=1)
    print(text)
    log(f"results: {path}")


if __name__ == "__main__":
    main()
