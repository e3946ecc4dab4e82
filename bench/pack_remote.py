#!/usr/bin/python3
"""Packing from a bucket into a bucket, against downloading the tars once.

Run as root from the repository after a release build (s3rver and awscli installed):
    /usr/bin/python3 bench/pack_remote.py --samples 20000 --tars 20

The store is bench/remote.py's (s3rver on 127.0.0.1, read through bench/delay_proxy.py: 20 ms
before each answer, 200 MB/s shared). It holds the dataset of bench.py (--samples real JPEGs with
captions) as --tars WebDataset tars under tars-N/ (sample i as i.jpg and i.txt, in key order),
made here and uploaded straight to the store. Measured in one run, through the proxy:

  download   `aws s3 cp --recursive` of tars-N/: the tars fetched once at the link's speed, the
             reference (the proxy caps the store-to-client bytes only: uploads are not slowed)
  bucket     `mmfs pack s3://bkt/tars-N/ s3://bkt/from-tars-N/ds.mmfs`, under /usr/bin/time -v
             (its memory peak), its --staging-dir's size polled every 50 ms (its local disk peak)
  from-bucket `mmfs pack s3://bkt/tars-N/ LOCAL_DIR`: the download and the packing without the
             upload
  local      `mmfs pack` of the same tars from local disk into a local directory: the packing
             alone, and the memory peak of a local pack
  upload     `aws s3 cp --recursive` of that packed dataset into the store, through the proxy:
             the upload once
  verify     `mmfs verify` of the bucket's dataset, straight from the store (not timed): every
             file read back and checked against its checksum

Targets (docs/performance.md): bucket <= 1.6x download; local disk peak <= 3 shards; memory
peak as a local pack's.

Ownership: every process it starts (s3rver, the proxy, mmfs) is ended by PID in finally blocks,
on exit, on an error and on Ctrl-C or SIGTERM; its temporary directory is removed. Results:
bench/results/pack-remote-<timestamp>.json and a table on stdout.
"""
import argparse
import contextlib
import datetime
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import bench
import remote
from bench import log


def make_tars(src, filelist, out, tars):
    """The samples of `filelist` as `tars` WebDataset tars in `out` (kept when made before)."""
    marker = os.path.join(out, "done.json")
    rel = [l.strip() for l in open(filelist) if l.strip()]
    params = {"samples": len(rel), "tars": tars}
    if os.path.exists(marker) and json.load(open(marker)) == params:
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    per = (len(rel) + tars - 1) // tars
    for t in range(tars):
        with tarfile.open(os.path.join(out, f"{t:05d}.tar"), "w", format=tarfile.USTAR_FORMAT) as tf:
            for i in range(t * per, min(len(rel), (t + 1) * per)):
                base = os.path.join(src, rel[i][:-len(".jpg")])
                for ext in (".jpg", ".txt"):
                    data = open(base + ext, "rb").read()
                    info = tarfile.TarInfo(f"{i:08d}{ext}")
                    info.size, info.mtime, info.mode = len(data), 1700000000, 0o644
                    tf.addfile(info, io.BytesIO(data))
    json.dump(params, open(marker, "w"))


def timed(cmd, env):
    """Runs `cmd` under /usr/bin/time -v: (wall seconds, peak RSS bytes, completed process)."""
    t = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, text=True, capture_output=True, env=env,
                       preexec_fn=remote._child_setup)
    wall = time.monotonic() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return wall, (int(m.group(1)) * 1024 if m else None), r


class DiskPeak:
    """The largest size a directory tree reaches, polled every 50 ms on a thread."""

    def __init__(self, path):
        self.path, self.peak, self.stop = path, 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.wait(0.05):
            self.peak = max(self.peak, bench.dir_bytes(self.path) if os.path.isdir(self.path) else 0)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--tars", type=int, default=20)
    ap.add_argument("--shard-size", default="64M",
                    help="mmfs pack --shard-size (default 64M: several shards, so the staging "
                    "bound is visible)")
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--bandwidth", default="200M")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (the bench's store and proxy are shared with bench/remote.py)")
    signal.signal(signal.SIGTERM, remote._on_sigterm)
    work = os.path.join(bench.HERE, ".cache")
    os.makedirs(work, exist_ok=True)
    src, filelist, _, _, _, _ = bench.prepare(
        argparse.Namespace(samples=args.samples, no_peers=True), work)
    n = args.samples
    tars_dir = os.path.join(work, f"tars-{n}-{args.tars}")
    make_tars(src, filelist, tars_dir, args.tars)
    tar_bytes = sum(os.path.getsize(os.path.join(tars_dir, f)) for f in os.listdir(tars_dir)
                    if f.endswith(".tar"))
    started = datetime.datetime.now(datetime.timezone.utc)
    meta = {"samples": n, "tars": args.tars, "tar_bytes": tar_bytes, "delay_ms": args.delay_ms,
            "bandwidth": remote.bench_bytes(args.bandwidth), "shard_size": args.shard_size,
            "started": started.isoformat(), "command": " ".join([sys.executable] + sys.argv),
            "kernel": os.uname().release}
    res = {}
    tmp = tempfile.mkdtemp(prefix="mmfs-pack-remote-")
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(shutil.rmtree, tmp, ignore_errors=True)
            store, proxy = remote.start_store(stack, work, ["pack=0", "awscp=0"], args.delay_ms,
                                              args.bandwidth)
            env = remote.child_env()
            env.update(AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null",
                       AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="")
            prefix = f"tars-{n}-{args.tars}"
            log(f"uploading {args.tars} tars ({tar_bytes / 1e6:.0f} MB) to s3://bkt/{prefix}/")
            bench.run([remote.AWS, "s3", "sync", "--only-show-errors", "--exclude", "done.json",
                       "--endpoint-url", store.url, tars_dir, f"s3://{remote.BUCKET}/{prefix}"],
                      env=env)

            remote.aws_copy(proxy, store, prefix, tmp, res)
            res["download"] = res.pop("aws_cp", None)

            dest = f"s3://{remote.BUCKET}/from-{prefix}/ds.mmfs"
            staging = os.path.join(tmp, "staging")
            snap = remote.Snapshot(proxy, store, "pack")
            with DiskPeak(staging) as disk:
                wall, rss, r = timed([bench.MMFS, "pack", "--force", "-q", "--json",
                                      "--shard-size", args.shard_size, "--endpoint",
                                      proxy.endpoint("pack"), "--staging-dir", staging,
                                      f"s3://{remote.BUCKET}/{prefix}/", dest], env)
            if r.returncode != 0:
                raise RuntimeError(f"mmfs pack into the bucket failed: {r.stderr[-2000:]}")
            d = snap.delta()
            summary = json.loads(r.stdout)
            res["bucket"] = {"seconds": wall, "max_rss": rss, "staging_peak": disk.peak,
                             "bytes_in": d["origin_bytes"], "requests": d["origin_requests"],
                             "summary": summary}
            log(f"pack bucket to bucket: {wall:.2f} s, peak RSS {rss / 2**20:.0f} MiB, "
                f"staging peak {disk.peak / 2**20:.0f} MiB, {summary['shards']} shards")

            wall, rss, r = timed([bench.MMFS, "pack", "--force", "-q", "--json",
                                  "--shard-size", args.shard_size, "--endpoint",
                                  proxy.endpoint("pack"), f"s3://{remote.BUCKET}/{prefix}/",
                                  os.path.join(tmp, "from-bucket.mmfs")], env)
            if r.returncode != 0:
                raise RuntimeError(f"mmfs pack from the bucket failed: {r.stderr[-2000:]}")
            res["from_bucket"] = {"seconds": wall, "max_rss": rss}
            log(f"pack bucket to local: {wall:.2f} s, peak RSS {rss / 2**20:.0f} MiB")

            local = os.path.join(tmp, "local.mmfs")
            wall, rss, r = timed([bench.MMFS, "pack", "--force", "-q", "--json",
                                  "--shard-size", args.shard_size, tars_dir, local], env)
            if r.returncode != 0:
                raise RuntimeError(f"local mmfs pack failed: {r.stderr[-2000:]}")
            res["local"] = {"seconds": wall, "max_rss": rss}
            log(f"pack local to local: {wall:.2f} s, peak RSS {rss / 2**20:.0f} MiB")

            # The other half of the link: the packed dataset uploaded once, as a user would.
            t = time.monotonic()
            r = subprocess.run([remote.AWS, "s3", "cp", "--recursive", "--only-show-errors",
                                "--endpoint-url", proxy.endpoint("awscp"), local,
                                f"s3://{remote.BUCKET}/upload-{prefix}/ds.mmfs"],
                               text=True, capture_output=True, env=env)
            if r.returncode == 0:
                res["upload"] = {"seconds": time.monotonic() - t}
                log(f"aws s3 cp of the packed dataset up: {res['upload']['seconds']:.2f} s")

            t = time.monotonic()
            # Straight to the store: verify checks file by file (a request each), which the
            # proxy's 20 ms would make a bench of its own.
            r = subprocess.run([bench.MMFS, "verify", "--endpoint", store.url,
                                "--cache-dir", os.path.join(tmp, "verify-cache"), dest],
                               text=True, capture_output=True, env=env)
            res["verify"] = {"seconds": time.monotonic() - t, "ok": r.returncode == 0,
                             "output": (r.stdout + r.stderr)[-500:]}
            log(f"verify: {'passed' if r.returncode == 0 else 'FAILED'} "
                f"({res['verify']['seconds']:.1f} s)")
    except (KeyboardInterrupt, remote.Interrupted) as e:
        log(f"interrupted ({str(e) or 'Ctrl-C'}): everything started was stopped")
        sys.exit(130)
    text = table(res, meta)
    os.makedirs(os.path.join(bench.HERE, "results"), exist_ok=True)
    path = os.path.join(bench.HERE, "results",
                        f"pack-remote-{started.strftime('%Y%m%dT%H%M%SZ')}.json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": res, "table": text}, f, indent=1)
    print(text)
    log(f"results: {path}")
    if not res["verify"]["ok"]:
        sys.exit(1)


def table(res, meta):
    dl, b, loc = res.get("download"), res["bucket"], res["local"]
    shard = b["summary"]["dataset_bytes"] / max(1, b["summary"]["shards"])
    lines = [f"{meta['samples']:,} samples in {meta['tars']} tars ({meta['tar_bytes'] / 1e6:.0f} MB), "
             f"{meta['delay_ms']} ms / {meta['bandwidth'] / 1e6:.0f} MB/s",
             "| what | seconds | vs download | peak RSS | local disk peak |",
             "|---|---|---|---|---|"]
    if dl:
        lines.append(f"| aws s3 cp of the tars | {dl['wall_seconds']:.2f} | 1.00x | | |")
    ratio = f"{b['seconds'] / dl['wall_seconds']:.2f}x" if dl else "-"
    lines.append(f"| mmfs pack bucket to bucket | {b['seconds']:.2f} | **{ratio}** | "
                 f"{b['max_rss'] / 2**20:.0f} MiB | {b['staging_peak'] / 2**20:.0f} MiB "
                 f"({b['staging_peak'] / shard:.1f} shards) |")
    fb = res.get("from_bucket")
    if fb:
        lines.append(f"| mmfs pack bucket to local disk | {fb['seconds']:.2f} | "
                     f"{fb['seconds'] / dl['wall_seconds']:.2f}x | {fb['max_rss'] / 2**20:.0f} MiB | |")
    lines.append(f"| mmfs pack local to local | {loc['seconds']:.2f} | | "
                 f"{loc['max_rss'] / 2**20:.0f} MiB | |")
    if res.get("upload"):
        lines.append(f"| aws s3 cp of the packed dataset up | {res['upload']['seconds']:.2f} | | | |")
    lines.append(f"store bytes read by the pack: {b['bytes_in'] / meta['tar_bytes']:.3f}x the tars; "
                 f"verify of the bucket's dataset: {'passed' if res['verify']['ok'] else 'FAILED'}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
