#!/usr/bin/python3
"""The million-sample bench: mmfs beside the native folder at 1,000,000 real image-caption
samples (JPEGs of 160-300 px sides, ~20 KB, and captions, 1,000 classes) and at 10,000,000
metadata-only entries, each figure with its ratio to the native folder, in one run.

Run as root from the repository after a release build (not in CI: about two and a half hours and
~55 GB of disk at the defaults; see bench/README.md, "A million real samples"):
    /usr/bin/python3 bench/million.py [--samples 1000000] [--meta-entries 10000000]
        [--steps gen,pack,mount,epoch1,memory,verify,view,meta10m]

Steps (each can be run alone; a step that needs the tree or the pack makes it when missing):
  gen      mmfs-gen-dataset into WORK/real-N/tree, one process per core over disjoint ranges of
           samples (--first), cached: kept when WORK/real-N/generated.json (written last) says
           it was finished with the same parameters; a size check on 2,000 samples first
  pack     mmfs pack against mksquashfs (uncompressed, all cores) and tar (reading only), page
           cache dropped before each; the squashfs image is deleted once measured
  mount    mount time, cold os.walk and cold ImageFolder construction, mmfs against native
  epoch1   a first shuffled raw DataLoader epoch from the cloud-volume and hard-disk throttles,
           timed on a seeded prefix of the shuffled order (--epoch1-samples), the same samples
           for both sides
  memory   epochs 1-3 at equal memory (bench.py's equal_memory_epochs): one memory cgroup for
           loader, daemon and page cache, sized the loader's footprint + a quarter of the data;
           mmfs mounted with no memory option; cloud-volume throttle
  verify   mmfs verify (against reading the shards with cat), and the daemon's RSS beyond its
           RAM tier after a mount, a walk and an epoch
  view     mmfs view add DST 256: on a --view-samples subset first, then the whole dataset if
           that would take at most --view-max-minutes (else the subset's rate, extrapolated)
  meta10m  bench.py's million() at --meta-entries entries (1,000 files per folder; empty files
           unless --meta-with-captions): mount, cold and warm walk, ImageFolder, daemon RSS

Results: every figure as a JSON line in bench/results/million-<timestamp>.jsonl as soon as its
step ends, and a markdown table (stdout and bench/results/million-latest.md) with each figure's
command line; steps not run this time are shown from the latest earlier run of the same sizes.
The helpers (peers, throttles, cgroups, workloads) are bench.py's; this script owns only its data
under WORK/real-N/ and its results. Single-threaded; every mount and process it starts is
stopped before it exits, on errors and SIGTERM too.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import bench
from bench import (GEN, HERE, MMFS, PY, WORKLOADS, Mmfs, Native, drop_caches, generate, log,
                   measure, run)

STEPS = ("gen", "pack", "mount", "epoch1", "memory", "verify", "view", "meta10m")
RESULTS = os.path.join(HERE, "results")
# Bytes on disk per sample of the default sides (JPEG + caption, each rounded up to 4 KB
# blocks): 26 KB at 160-300 px (1.04 GB for 40,000 samples), with a margin.
DISK_PER_SAMPLE = 28_000
# Times ImageFolder(ROOT/train) alone: torchvision imported before the clock starts (bench's
# imagefolder workload counts the import, about a second on this VM).
IMAGEFOLDER = r"""
import json, sys, time
from torchvision.datasets import ImageFolder
t = time.monotonic()
ds = ImageFolder(sys.argv[1])
print(json.dumps({"seconds": time.monotonic() - t, "samples": len(ds)}))
"""
# The figure that holds a step's wall time: shown in the step's heading, not as a row.
WALL = "_wall_seconds"


def fmt(v):
    if isinstance(v, str):
        return v
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:,}"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def timed(cmd, what, watch, shell=False):
    """Runs cmd to its end, logging every minute how long it has run and how much the
    filesystem of `watch` filled meanwhile; returns (seconds, stdout). Fails on a non-zero exit
    status."""
    used0 = shutil.disk_usage(watch).used
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, shell=shell, executable="/bin/bash" if shell else None,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            try:
                out, err = proc.communicate(timeout=60)
                break
            except subprocess.TimeoutExpired:
                grown = (shutil.disk_usage(watch).used - used0) / 1e9
                log(f"  {what}: {time.monotonic() - t0:.0f} s so far, {grown:+.1f} GB on disk")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {err.strip()[-1500:]}")
    return seconds, out


def need(path, what, disk=0, inodes=0):
    """Stops the run, before it starts writing, when the filesystem of `path` lacks the bytes
    or inodes `what` needs."""
    st = os.statvfs(path)
    free, ifree = st.f_bavail * st.f_frsize, st.f_favail
    if disk > free or inodes > ifree:
        sys.exit(f"{what} needs about {disk / 1e9:.1f} GB and {inodes:,} inodes on {path}: "
                 f"{free / 1e9:.1f} GB and {ifree:,} inodes are free")


def memory_of(root):
    """The daemon's RSS and what its RAM tier and read buffer hold, from `mmfs stats --json`.

    beyond_tiers is VmRSS less the tier; own_beyond_tiers also leaves out the mapped files'
    pages (the libraries' code and the index: page cache the daemon maps)."""
    s = json.loads(run([MMFS, "stats", "--json", root]).stdout)
    ram = next((t.get("bytes_used", 0) for t in s["cache"]["tiers"] if t.get("name") == "ram"), 0)
    rss = s["memory"]["rss_bytes"]
    mapped = s["memory"].get("rss_file_bytes", 0)
    return {"rss": rss, "ram_tier": ram, "mapped_files": mapped,
            "read_buffer": s["cache"].get("read_buffer", {}).get("bytes_held", 0),
            "beyond_tiers": rss - ram, "own_beyond_tiers": max(0, rss - mapped - ram)}


class Bench:
    def __init__(self, args):
        self.args = args
        self.n = args.samples
        self.real = os.path.join(args.work, f"real-{self.n}")
        self.tree = os.path.join(self.real, "tree")
        self.marker = os.path.join(self.real, "generated.json")
        self.dataset = os.path.join(self.real, "data.mmfs")
        self.filelist = os.path.join(self.real, "filelist.txt")
        self.stamp = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
        self.out = os.path.join(RESULTS, f"million-{self.stamp}.jsonl")
        self.rows = []
        self.nproc = os.cpu_count() or 1
        self.peers = []  # every peer started, stopped at the end whatever happened

    # -- results -------------------------------------------------------------------------------

    def emit(self, step, figure, values, unit="s", better="lower", refs=("native",),
             commands=None, note=None, extra=None):
        """One figure: values by side; the table gives mmfs's ratio to each side in refs
        present (better: "lower" for times, "higher" for rates, None for no ratio)."""
        row = {"run": self.stamp, "samples": self.n, "meta_entries": self.args.meta_entries,
               "step": step, "figure": figure, "unit": unit, "better": better,
               "refs": list(refs), "values": values, "commands": commands or {}, "note": note,
               "extra": extra or {}}
        self.rows.append(row)
        os.makedirs(RESULTS, exist_ok=True)
        with open(self.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        if figure != WALL:
            shown = ", ".join(f"{k} {fmt(v)}" for k, v in values.items())
            log(f"  [{step}] {figure}: {shown}")

    # -- data ----------------------------------------------------------------------------------

    def gen_args(self):
        return ["--min-side", str(self.args.min_side), "--max-side", str(self.args.max_side),
                "--seed", "1"]

    def generated(self):
        """The generation marker's contents when the tree is complete with today's parameters."""
        try:
            with open(self.marker) as f:
                done = json.load(f)
        except (OSError, ValueError):
            return None
        want = {"samples": self.n, "classes": self.args.classes, "args": self.gen_args()}
        return done if done.get("params") == want and os.path.isdir(self.tree) else None

    def size_check(self):
        """2,000 samples with the same sides in a temporary folder: the mean JPEG size the full
        generation will have (about 20 KB wanted: a 256 px web dataset)."""
        tmp = tempfile.mkdtemp(prefix="million-size-", dir=self.args.work)
        try:
            run([GEN, tmp, "--samples", "2000", "--classes", "100"] + self.gen_args())
            sizes = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp)
                     for f in fs if f.endswith(".jpg")]
        finally:
            shutil.rmtree(tmp)
        mean = statistics.mean(sizes)
        log(f"  size check: 2,000 samples at {self.args.min_side}-{self.args.max_side} px: mean "
            f"JPEG {mean / 1e3:.1f} KB, median {statistics.median(sizes) / 1e3:.1f} KB")
        if not 15_000 <= mean <= 25_000:
            log("  (outside 15-25 KB: --min-side/--max-side do not make a ~20 KB dataset)")
        return mean

    def ensure_tree(self):
        done = self.generated()
        if done:
            return done
        mean = self.size_check()
        os.makedirs(self.real, exist_ok=True)
        if not os.path.exists(self.tree):
            need(self.real, f"generating {self.n:,} samples", self.n * DISK_PER_SAMPLE,
                 2 * self.n + self.args.classes)
        done = generate(self.tree, self.n, self.args.classes, self.gen_args(),
                        procs=self.args.gen_procs, marker=self.marker)
        done["size_check_mean_jpeg"] = mean
        return done

    def ensure_filelist(self):
        """The images' relative paths, sorted (pack order), as bench.py's prepare() lists them;
        made from the generator's naming rather than a walk of a million files."""
        if (os.path.exists(self.filelist)
                and os.path.getmtime(self.filelist) >= os.path.getmtime(self.marker)):
            return self.filelist
        c = self.args.classes
        rel = sorted(f"train/class_{i % c:03d}/{i:08d}.jpg" for i in range(self.n))
        missing = [r for r in (rel[0], rel[-1]) if not os.path.exists(os.path.join(self.tree, r))]
        if missing:
            sys.exit(f"{self.tree} lacks {missing}: generated with another naming?")
        with open(self.filelist + ".tmp", "w") as f:
            f.write("\n".join(rel) + "\n")
        os.replace(self.filelist + ".tmp", self.filelist)
        return self.filelist

    def ensure_pack(self):
        self.ensure_tree()
        self.ensure_filelist()
        manifest = os.path.join(self.dataset, "manifest.json")
        if os.path.exists(manifest) and os.path.getmtime(manifest) >= os.path.getmtime(self.marker):
            return
        log(f"packing {self.tree} (not timed: the pack step times it)")
        need(self.real, "packing", int(self.generated().get("mib", 0) * 2**20 * 1.1))
        timed([MMFS, "pack", "--force", "-q", self.tree, self.dataset], "mmfs pack", self.real)

    def subset_list(self, name, paths):
        path = os.path.join(self.real, name)
        with open(path, "w") as f:
            f.write("\n".join(paths) + "\n")
        return path

    def lines(self):
        with open(self.ensure_filelist()) as f:
            return [line.rstrip("\n") for line in f if line.strip()]

    def peer_pair(self):
        native = Native(self.real, self.tree)
        mmfs = Mmfs(self.real, self.dataset, None)
        self.peers += [native, mmfs]
        return native, mmfs

    # -- steps ---------------------------------------------------------------------------------

    def step_gen(self):
        fresh = self.generated() is None
        done = self.ensure_tree()
        self.ensure_filelist()
        cmd = (f"{GEN} {self.tree} --classes {self.args.classes} {shlex.join(self.gen_args())} "
               f"--first A --samples B-A  (x{done.get('procs', 1)} processes)")
        note = None if fresh else f"cached: generated {done.get('finished')}"
        disk = int(run(["du", "-s", "-B1", self.tree]).stdout.split()[0])
        bytes_ = int(done.get("mib", 0) * 2**20)
        self.emit("gen", "generation (s)", {"mmfs-gen-dataset": done.get("seconds")},
                  refs=(), commands={"mmfs-gen-dataset": cmd}, note=note)
        self.emit("gen", "samples/s", {"mmfs-gen-dataset": self.n / done["seconds"]},
                  unit="samples/s", better=None)
        self.emit("gen", "mean sample, JPEG + caption (KB)",
                  {"mmfs-gen-dataset": bytes_ / self.n / 1e3}, unit="KB", better=None,
                  note=f"2,000-sample size check: mean JPEG "
                       f"{done.get('size_check_mean_jpeg', 0) / 1e3:.1f} KB" if fresh else None)
        self.emit("gen", "tree: bytes of files / on disk (GB)",
                  {"mmfs-gen-dataset": f"{bytes_ / 1e9:.2f} / {disk / 1e9:.2f}"}, unit="GB",
                  better=None, commands={"mmfs-gen-dataset": f"du -s -B1 {self.tree}"})

    def step_pack(self):
        self.ensure_tree()
        self.ensure_filelist()
        if os.path.exists(self.dataset):
            # Room for the squashfs image, then for the new pack: the tree, one of them and
            # nothing else at a time.
            log(f"removing the previous pack {self.dataset}")
            shutil.rmtree(self.dataset)
        data = int(self.generated().get("mib", 0) * 2**20)
        files = 2 * self.n
        image = os.path.join(self.real, "data.sqfs")
        sides, cmds = {}, {}
        tar = (f"set -o pipefail; tar cf - -C {shlex.quote(self.real)} tree | cat >/dev/null")
        drop_caches()
        log("pack: tar (reading the tree only)")
        sides["native (tar)"], _ = timed(tar, "tar", self.real, shell=True)
        cmds["native (tar)"] = tar
        need(self.real, "the squashfs image", int(data * 1.1))
        sq = ["mksquashfs", self.tree, image, "-noI", "-noD", "-noF", "-noX", "-processors",
              str(self.nproc), "-noappend", "-no-progress", "-quiet"]
        drop_caches()
        log("pack: mksquashfs")
        try:
            sides["mksquashfs"], _ = timed(sq, "mksquashfs", self.real)
            sq_bytes = os.path.getsize(image)
        finally:
            if os.path.exists(image):
                os.remove(image)
        cmds["mksquashfs"] = shlex.join(sq)
        need(self.real, "the pack", int(data * 1.1))
        pk = [MMFS, "pack", "--force", "--json", "-q", self.tree, self.dataset]
        drop_caches()
        log("pack: mmfs pack")
        sides["mmfs"], out = timed(pk, "mmfs pack", self.real)
        cmds["mmfs"] = shlex.join(pk)
        summary = json.loads(out)
        data, files = summary["bytes"], summary["files"]
        note = ("tar only reads the tree (its output piped to cat: tar skips reading into "
                "/dev/null); page cache dropped before each; the squashfs image was deleted once "
                "measured")
        refs = ("native (tar)", "mksquashfs")
        self.emit("pack", "time (s)", dict(sides), refs=refs, commands=cmds, note=note)
        self.emit("pack", "MB/s (bytes of the files)", {k: data / 1e6 / v for k, v in sides.items()},
                  unit="MB/s", better="higher", refs=refs)
        self.emit("pack", "files/s", {k: files / v for k, v in sides.items()}, unit="files/s",
                  better="higher", refs=refs)
        self.emit("pack", "output size (GB)",
                  {"mmfs": summary["dataset_bytes"] / 1e9, "mksquashfs": sq_bytes / 1e9,
                   "native (tar)": data / 1e9}, unit="GB", better=None,
                  note="native (tar): the files' bytes", extra={"pack": summary})

    def step_mount(self):
        self.ensure_pack()
        native, mmfs = self.peer_pair()
        reps = self.args.repeats
        mounts = []
        for _ in range(reps):
            mmfs.stop()
            drop_caches()
            mmfs.start()
            mounts.append(mmfs.mount_seconds)
        mmfs.stop()
        self.emit("mount", "mount (s), page cache dropped", {"mmfs": statistics.median(mounts)},
                  refs=(), commands={"mmfs": f"{MMFS} mount {self.dataset} {mmfs.root}"},
                  extra={"runs": mounts})
        res = measure([native, mmfs], "list", self.filelist, reps, True)
        mmfs.stop()
        cold = f"(page cache dropped, daemon restarted; median of {reps})"
        self.emit("mount", "cold os.walk (s)", {k: v["seconds"] for k, v in res.items()},
                  commands={"both": f"{PY} {WORKLOADS} list ROOT {self.filelist}  {cold}"},
                  extra={k: {x: v.get(x) for x in ("runs", "files", "daemon_cpu_seconds",
                                                   "daemon_peak_rss")}
                         for k, v in res.items()})
        res = {}
        for peer in (native, mmfs):
            runs = []
            for _ in range(reps):
                peer.restart()
                run([PY, "-c", "import torch, torchvision, numpy, PIL.Image"])
                out = run([PY, "-c", IMAGEFOLDER, os.path.join(peer.root, "train")]).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            peer.stop()
            res[peer.name] = {"seconds": statistics.median(r["seconds"] for r in runs),
                              "runs": [r["seconds"] for r in runs],
                              "samples": runs[0]["samples"]}
            log(f"  cold ImageFolder {peer.name}: {[round(r['seconds'], 3) for r in runs]}")
        self.emit("mount", "cold ImageFolder construction (s)",
                  {k: v["seconds"] for k, v in res.items()},
                  commands={"both": f"{PY} -c IMAGEFOLDER ROOT/train  {cold}; the torchvision "
                            "import before the clock"}, extra=res)

    def step_epoch1(self):
        self.ensure_pack()
        k = min(self.args.epoch1_samples, self.n)
        order = self.lines()
        random.Random(1).shuffle(order)
        flist = self.subset_list(f"filelist-epoch1-{k}.txt", order[:k])
        native, mmfs = self.peer_pair()
        extra = ("--seconds", str(self.args.epoch_seconds)) if self.args.epoch_seconds else ()
        part = k < self.n
        note = (f"the first {k:,} samples of a seeded shuffle of the {self.n:,} (the same list "
                f"for both sides), not a whole epoch: a full native epoch from the hard-disk "
                f"profile would take hours; full epoch = {self.n:,} / rate" if part else None)
        for profile in ("cloud-volume", "hard-disk"):
            res = measure([native, mmfs], "loader-raw", flist, 1, True, extra, profile, self.tree)
            mmfs.stop()
            rate = {s: k / r["epoch_seconds"][0] for s, r in res.items()}
            est = any(r.get("partial_epochs") for r in res.values())
            bps, iops = bench.PROFILES[profile]
            cmd = (f"{PY} {WORKLOADS} loader-raw ROOT {flist} {shlex.join(extra)}  (cold; blkio "
                   f"throttle {bps // 10**6} MB/s, {iops} IOPS on the reader for native, on the "
                   "daemon for mmfs)")
            self.emit("epoch1", f"{profile}: samples/s" + (" (~: cut at --epoch-seconds)"
                                                          if est else ""),
                      rate, unit="samples/s", better="higher", commands={"both": cmd}, note=note,
                      extra={s: {x: r.get(x) for x in ("epoch_seconds", "partial_epochs",
                                                       "daemon_cpu_seconds", "daemon_peak_rss")}
                             for s, r in res.items()})
            if part:
                self.emit("epoch1", f"{profile}: a whole epoch, extrapolated (min)",
                          {s: self.n / v / 60 for s, v in rate.items()}, unit="min")

    def step_memory(self):
        self.ensure_pack()
        names = self.lines()
        size = None
        flist = self.filelist
        limit = self.args.epoch_limit
        if limit and limit < self.n:
            names = names[:limit]
            flist = self.subset_list(f"filelist-limit-{limit}.txt", names)
            size = sum(os.path.getsize(os.path.join(self.tree, p))
                       + os.path.getsize(os.path.join(self.tree, p[:-4] + ".txt"))
                       for p in names)
        ns = argparse.Namespace(work=self.real, memory_fraction=self.args.memory_fraction,
                                memory_mmfs=[""])
        res = bench.equal_memory_epochs(ns, self.tree, self.dataset, flist, "cloud-volume", size)
        for line in bench.equal_memory_table("loader-raw epochs 1-3", "equal memory, "
                                             "cloud-volume", res):
            log(line)
        d = res.pop("dataset")
        sides = {("mmfs" if k.startswith("mmfs") else k): v for k, v in res.items()}
        lim = (f"{len(names):,} samples: the first {limit:,} in pack order"
               if flist != self.filelist else f"all {self.n:,} samples")
        note = (f"{lim}; one memory cgroup (v1) of {d['memory_limit'] / 2**20:,.0f} MiB for loader,"
                f" daemon and page cache: loader footprint {d['loader_footprint'] / 2**20:,.0f} "
                f"MiB + {self.args.memory_fraction:g} of {d['bytes'] / 2**20:,.0f} MiB of data")
        cmd = (f"{PY} {WORKLOADS} loader-raw ROOT {flist} --epochs 3 --io-stat ... (cloud-volume "
               f"throttle; mmfs: {MMFS} mount {self.dataset} MNT, no memory option, started "
               "inside the cgroup)")

        def ok(v):
            return not v.get("failed")
        for e in range(3):
            self.emit("memory", f"epoch {e + 1} (s)",
                      {k: (v["epoch_seconds"][e] if ok(v) else "failed")
                       for k, v in sides.items()},
                      commands={"both": cmd} if e == 0 else None, note=note if e == 0 else None)
        self.emit("memory", "epochs 2-3 (samples/s)",
                  {k: (v["samples_per_second"] if ok(v) else "failed") for k, v in sides.items()},
                  unit="samples/s", better="higher")
        self.emit("memory", "origin MB per epoch (blkio)",
                  {k: (" / ".join(f"{x / 1e6:,.0f}" for x in v["origin_bytes"]) if ok(v)
                       else "failed") for k, v in sides.items()}, unit="MB", better=None)
        self.emit("memory", "OOM kills", {k: v.get("oom_kills", 0) for k, v in sides.items()},
                  unit="", better=None, commands={"both": "memory.oom_control's oom_kill"})
        self.emit("memory", "cgroup peak / daemon peak RSS (MiB)",
                  {k: (f"{v['cgroup_peak'] / 2**20:,.0f}"
                       + (f" / {v['daemon_peak_rss'] / 2**20:,.0f}" if v.get("daemon_peak_rss")
                          else "") if ok(v) else "failed") for k, v in sides.items()},
                  unit="MiB", better=None, extra={"dataset": d, "sides": sides})

    def step_verify(self):
        self.ensure_pack()
        shard_bytes = bench.dir_bytes(self.dataset)
        vf = [MMFS, "verify", "--json", self.dataset]
        drop_caches()
        log("verify: mmfs verify")
        seconds, out = timed(vf, "mmfs verify", self.real)
        result = json.loads(out)
        if not result.get("ok"):
            sys.exit(f"mmfs verify found problems: {result.get('problems')}")
        shards = sorted(glob.glob(os.path.join(self.dataset, "**", "*.mdb"), recursive=True))
        cat = "cat " + " ".join(shlex.quote(s) for s in shards) + " >/dev/null"
        drop_caches()
        log("verify: cat of the shards (the disk's sequential read)")
        cat_seconds, _ = timed(cat, "cat", self.real, shell=True)
        self.emit("verify", "time (s)", {"mmfs verify": seconds, "cat shards": cat_seconds},
                  refs=("cat shards",),
                  commands={"mmfs verify": shlex.join(vf),
                            "cat shards": f"cat {self.dataset}/**/*.mdb >/dev/null"},
                  note="page cache dropped before each; cat: the disk's sequential read rate",
                  extra={"verify": result, "shard_bytes": shard_bytes})
        self.emit("verify", "MB/s (shard bytes)",
                  {"mmfs verify": shard_bytes / 1e6 / seconds,
                   "cat shards": shard_bytes / 1e6 / cat_seconds}, unit="MB/s", better="higher",
                  refs=("cat shards",))
        # The daemon's memory beyond its RAM tier: after the mount, after a cold walk and
        # ImageFolder, after an epoch (--epoch-limit: over its prefix).
        _, mmfs = self.peer_pair()
        names = self.lines()
        flist = self.filelist
        if self.args.epoch_limit and self.args.epoch_limit < self.n:
            flist = self.subset_list(f"filelist-limit-{self.args.epoch_limit}.txt",
                                     names[:self.args.epoch_limit])
        mem = {}
        try:
            mmfs.restart()
            mem["after the mount"] = memory_of(mmfs.root)
            bench.walk_seconds(mmfs.root)
            bench.workload(mmfs, "imagefolder", flist)
            mem["after a cold os.walk and ImageFolder"] = memory_of(mmfs.root)
            r = bench.workload(mmfs, "loader-raw", flist)
            mem["after a raw DataLoader epoch"] = memory_of(mmfs.root)
        finally:
            mmfs.stop()
        epoch = (f"a raw DataLoader epoch over {flist} ({r['files']:,} samples, unthrottled, "
                 f"{r['epoch_seconds'][0]:.0f} s)")
        how = {"after the mount": f"{MMFS} mount {self.dataset} MNT (page cache dropped); "
                                  f"{MMFS} stats --json MNT: memory.rss_bytes less the ram tier's "
                                  "bytes_used",
               "after a cold os.walk and ImageFolder": f"os.walk(MNT); {PY} {WORKLOADS} "
                                                       f"imagefolder MNT {flist}",
               "after a raw DataLoader epoch": epoch}
        for when, m in mem.items():
            self.emit("verify", f"daemon RSS beyond its RAM tier, {when} (MiB)",
                      {"mmfs": m["beyond_tiers"] / 2**20}, unit="MiB", refs=(),
                      commands={"mmfs": how[when]},
                      note=(f"RSS {m['rss'] / 2**20:,.0f} MiB, RAM tier {m['ram_tier'] / 2**20:,.0f}"
                            f" MiB, read buffer {m['read_buffer'] / 2**20:,.0f} MiB, mapped files "
                            f"(code, the index) {m['mapped_files'] / 2**20:,.0f} MiB"),
                      extra=m)
            self.emit("verify", f"daemon memory of its own beyond its RAM tier, {when} (MiB)",
                      {"mmfs": m["own_beyond_tiers"] / 2**20}, unit="MiB", refs=(),
                      commands={"mmfs": how[when] + "; less memory.rss_file_bytes"},
                      note="VmRSS less the mapped files' pages (statm's shared: the libraries' "
                           "code, the index) and the RAM tier", extra=m)

    def step_view(self):
        self.ensure_pack()
        side = str(self.args.view_side)
        k = self.args.view_samples
        jobs = str(self.nproc)

        def build(dataset, what):
            if os.path.isdir(os.path.join(dataset, "views", side)):
                run([MMFS, "view", "rm", "-q", dataset, side])
            cmd = [MMFS, "view", "add", "--json", "-q", dataset, side, "-j", jobs]
            drop_caches()
            log(f"view: {what}")
            seconds, out = timed(cmd, f"view {side} of {what}", self.real)
            return seconds, json.loads(out), shlex.join(cmd)

        full = k <= 0 or k >= self.n
        if not full:
            sub = os.path.join(self.real, f"view-subset-{k}")
            shutil.rmtree(sub, ignore_errors=True)
            tree = os.path.join(sub, "tree")
            c = self.args.classes
            for i in range(k):  # samples 0..k-1: every class, as in the whole tree
                d = os.path.join(tree, "train", f"class_{i % c:03d}")
                os.makedirs(d, exist_ok=True)
                for ext in (".jpg", ".txt"):
                    name = f"{i:08d}{ext}"
                    os.link(os.path.join(self.tree, "train", f"class_{i % c:03d}", name),
                            os.path.join(d, name))
            subset = os.path.join(sub, "data.mmfs")
            run([MMFS, "pack", "-q", tree, subset])
            try:
                seconds, summary, cmd = build(subset, f"the first {k:,} samples")
            finally:
                shutil.rmtree(sub)
            rate = summary["images"] / seconds
            estimate = self.n / rate
            self.emit("view", f"@{side} of the first {k:,} samples: build (s)", {"mmfs": seconds},
                      refs=(), commands={"mmfs": cmd + "  (a pack of those samples' files, "
                                         "hard-linked from the tree)"}, extra=summary)
            self.emit("view", f"@{side}: images/s ({k:,}-sample subset)", {"mmfs": rate},
                      unit="images/s", better=None)
            self.emit("view", f"@{side} of all {self.n:,} samples, extrapolated (min)",
                      {"mmfs": estimate / 60}, unit="min", refs=(),
                      note=f"{self.n:,} / the subset's rate")
            full = estimate <= self.args.view_max_minutes * 60
            if not full:
                log(f"view: the whole dataset would take about {estimate / 60:.0f} min, over "
                    f"--view-max-minutes {self.args.view_max_minutes:g}: subset only")
        if full:
            try:
                seconds, summary, cmd = build(self.dataset, f"all {self.n:,} samples")
            finally:
                # Gone once measured, so that the dataset the other steps see does not depend
                # on whether this step ran (mmfs verify checks views too).
                if os.path.isdir(os.path.join(self.dataset, "views", side)):
                    run([MMFS, "view", "rm", "-q", self.dataset, side])
            self.emit("view", f"@{side} of all {self.n:,} samples: build (s)", {"mmfs": seconds},
                      refs=(), commands={"mmfs": cmd},
                      note=(f"{summary['resized']:,} of {summary['images']:,} images resized, "
                            f"view {summary['view_bytes_on_disk'] / 1e6:,.0f} MB on disk; "
                            "removed once measured"), extra=summary)
            self.emit("view", f"@{side}: images/s", {"mmfs": summary["images"] / seconds},
                      unit="images/s", better=None)

    def step_meta10m(self):
        n = self.args.meta_entries
        empty = not self.args.meta_with_captions
        src = os.path.join(self.args.work, f"meta-{n}" + ("-empty" if empty else ""))
        if not os.path.exists(src + ".complete"):
            need(self.args.work, f"{n:,} metadata-only entries",
                 (0 if empty else 4096 * n) + 100 * n, n + n // 1000 + 1000)
        ns = argparse.Namespace(work=self.args.work, peers="native,mmfs",
                                repeats=self.args.repeats, mmfs_option=[])
        m = bench.million(ns, n, empty, procs=self.args.gen_procs)
        with open(src + ".complete") as f:
            gen = json.load(f)
        what = f"{n:,} {'empty' if empty else 'caption'} files in {max(1, n // 1000):,} folders"
        cmd = f"bench.py million(): {MMFS} mount {src}.mmfs MNT --ram-cache 64M"
        reps = f"median of {self.args.repeats} rounds, the peers interleaved"
        self.emit("meta10m", "mount (s), page cache dropped",
                  {k: v["seconds"] for k, v in m["mount"].items() if k != "native"}, refs=(),
                  commands={"mmfs": cmd}, note=f"{what}; {reps}",
                  extra={"generated": gen, "pack_seconds": m.get("pack")})
        self.emit("meta10m", "cold os.walk (s)", {k: v["seconds"] for k, v in m["list"].items()},
                  commands={"both": "os.walk(ROOT) after drop_caches and a daemon restart"},
                  extra=m["list"])
        self.emit("meta10m", "warm os.walk (s)",
                  {k: v["seconds"] for k, v in m["list-warm"].items()})
        self.emit("meta10m", "warm ImageFolder construction (s)",
                  {k: v["seconds"] for k, v in m["imagefolder"].items()},
                  commands={"both": "ImageFolder(ROOT/train, is_valid_file=lambda p: True)"})
        rss = m["list"].get("mmfs", {}).get("daemon_peak_rss")
        self.emit("meta10m", "daemon peak RSS (MiB)", {"mmfs": rss / 2**20 if rss else None},
                  unit="MiB", refs=(), commands={"mmfs": "VmHWM after the walks and ImageFolder"})
        if m.get("pack") is not None:
            self.emit("meta10m", "mmfs pack (s)", {"mmfs": m["pack"]}, refs=(),
                      commands={"mmfs": f"{MMFS} pack --force -q {src} {src}.mmfs"})
        if gen.get("seconds"):
            p = gen["params"]
            self.emit("meta10m", "generation (s)", {"mmfs-gen-dataset": gen["seconds"]}, refs=(),
                      commands={"mmfs-gen-dataset": f"{GEN} {src} --classes {p['classes']} "
                                f"{shlex.join(p['args'])} --first A --samples B-A  "
                                f"(x{gen.get('procs', 1)} processes)"},
                      note=f"generated {gen.get('finished')}")

    def stop_all(self):
        for p in self.peers:
            try:
                p.stop()
            except Exception as e:  # keep stopping the others
                log(f"stopping {p.name}: {e}")


# -- the table ---------------------------------------------------------------------------------

def load_rows(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def latest_per_step(rows, samples, meta_entries):
    """For each step, the rows of the latest run that has it at these sizes."""
    keep = {}
    for r in rows:
        if r["step"] == "meta10m":
            if r["meta_entries"] != meta_entries:
                continue
        elif r["samples"] != samples:
            continue
        if r["step"] not in keep or r["run"] > keep[r["step"]][0]["run"]:
            keep[r["step"]] = [r]
        elif r["run"] == keep[r["step"]][0]["run"]:
            keep[r["step"]].append(r)
    return keep


def step_title(step, samples, meta):
    return {"gen": f"Generating {samples:,} samples",
            "pack": "Packing: mmfs pack against mksquashfs and tar",
            "mount": "Mount, cold os.walk, cold ImageFolder",
            "epoch1": "A first shuffled raw DataLoader epoch from slow origins",
            "memory": "Epochs 1-3 at equal memory, cloud-volume origin",
            "verify": "mmfs verify, and the daemon's memory beyond its RAM tier",
            "view": "Building a view",
            "meta10m": f"{meta:,} metadata-only entries"}[step]


def ratio(r, ref):
    v = r["values"]
    main = "mmfs" if "mmfs" in v else next((k for k in v if k.startswith("mmfs")), None)
    a, b = v.get(main), v.get(ref)
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not a or not b:
        return "-"
    x = b / a if r["better"] == "lower" else a / b
    return f"{x:.2f}x"


def render(keep, samples, meta, header):
    lines = [header, "",
             "Ratios: mmfs against the side named, above 1 is mmfs better (times: their time / "
             "mmfs's; rates: mmfs's / theirs).", ""]
    for step in STEPS:
        rows = keep.get(step)
        if not rows:
            continue
        wall = next((r["values"]["wall"] for r in rows if r["figure"] == WALL), None)
        rows = [r for r in rows if r["figure"] != WALL]
        took = f", {wall / 60:.1f} min" if wall is not None else ""
        lines += [f"### {step}: {step_title(step, samples, meta)} (run {rows[0]['run']}{took})",
                  ""]
        sides = []
        for r in rows:
            sides += [k for k in r["values"] if k not in sides]
        refs = []
        for r in rows:
            if r["better"]:
                refs += [x for x in r["refs"] if x not in refs and x in r["values"]]
        lines.append("| figure | " + " | ".join(sides) + "".join(f" | mmfs vs {x}" for x in refs)
                     + " |")
        lines.append("|---|" + "---|" * (len(sides) + len(refs)))
        for r in rows:
            cells = [fmt(r["values"].get(s)) for s in sides]
            rc = [ratio(r, x) if r["better"] and x in r["refs"] else "-" for x in refs]
            lines.append(f"| {r['figure']} | " + " | ".join(cells + rc) + " |")
        lines.append("")
        for r in rows:
            for side, cmd in r["commands"].items():
                # Paths relative to the repository, where the bench runs.
                cmd = cmd.replace(bench.REPO + "/", "")
                lines.append(f"- {r['figure']}, {side}: `{cmd}`")
            if r.get("note"):
                lines.append(f"- {r['figure']}: {r['note']}")
        lines.append("")
    return "\n".join(lines)


def write_table(samples, meta, header, paths):
    keep = latest_per_step(load_rows(paths), samples, meta)
    text = render(keep, samples, meta, header)
    with open(os.path.join(RESULTS, "million-latest.md"), "w") as f:
        f.write(text + "\n")
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--meta-entries", type=int, default=10_000_000)
    ap.add_argument("--steps", default=",".join(STEPS), help="comma-separated, of: "
                    + ",".join(STEPS))
    ap.add_argument("--work", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of the mount step's figures and rounds of meta10m (medians)")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--min-side", type=int, default=160,
                    help="with --max-side 300: a mean JPEG of 20.1 KB on 2,000 samples")
    ap.add_argument("--max-side", type=int, default=300)
    ap.add_argument("--gen-procs", type=int, default=os.cpu_count() or 1,
                    help="generator processes (over disjoint ranges of samples)")
    ap.add_argument("--epoch1-samples", type=int, default=20_000,
                    help="epoch1: the prefix of the shuffled order both sides read")
    ap.add_argument("--epoch-seconds", type=float, default=0,
                    help="epoch1: also cut each run after this many seconds and extrapolate "
                         "(workloads.py --seconds); 0: read the whole prefix")
    ap.add_argument("--epoch-limit", type=int, default=0,
                    help="memory and verify: epochs over the first N samples in pack order "
                         "(0: all)")
    ap.add_argument("--memory-fraction", type=float, default=0.25,
                    help="memory: the data's share of the cgroup beside the loader's footprint")
    ap.add_argument("--view-side", type=int, default=256)
    ap.add_argument("--view-samples", type=int, default=20_000,
                    help="view: build on this many samples first (0: straight to the whole "
                         "dataset)")
    ap.add_argument("--view-max-minutes", type=float, default=30,
                    help="view: build the whole dataset's view only when the subset's rate says "
                         "it takes at most this long")
    ap.add_argument("--meta-with-captions", action="store_true",
                    help="meta10m: caption files (4 KB of disk each: 40 GB at 10M) instead of "
                         "empty ones")
    ap.add_argument("--report", nargs="+", metavar="JSONL",
                    help="only write the table from these results files")
    args = ap.parse_args()
    steps = [s for s in args.steps.split(",") if s]
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        sys.exit(f"unknown steps {unknown}; the steps are {','.join(STEPS)}")
    machine = (f"{platform.node()}, {os.cpu_count()} cores, "
               f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
               f"Linux {platform.release()}")
    header = (f"Million-sample bench: {args.samples:,} samples (JPEG {args.min_side}-"
              f"{args.max_side} px + caption, {args.classes} classes), {args.meta_entries:,} "
              f"metadata-only entries. Machine: {machine}.")
    if args.report:
        os.makedirs(RESULTS, exist_ok=True)
        return write_table(args.samples, args.meta_entries, header, args.report)
    if os.geteuid() != 0:
        sys.exit("million.py needs root (drop_caches, mounts, cgroups)")
    for binary in (MMFS, GEN):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} missing: build the release tree first")
    if "pack" in steps and not shutil.which("mksquashfs"):
        sys.exit("the pack step needs mksquashfs: bash tools/install-deps.sh --bench")
    bench.LOG_TIMES = True
    os.makedirs(args.work, exist_ok=True)
    # SIGTERM unwinds like Ctrl-C, so that mounts and cgroups are cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    b = Bench(args)
    command = shlex.join([sys.executable] + sys.argv)
    log(f"million.py: steps {','.join(steps)}; results {b.out}")
    durations = {}
    try:
        for step in steps:
            log(f"== step {step} ==")
            t = time.monotonic()
            getattr(b, f"step_{step}")()
            durations[step] = time.monotonic() - t
            log(f"== step {step} done in {durations[step]:.0f} s ==")
            b.emit(step, WALL, {"wall": durations[step]}, refs=())
    finally:
        b.stop_all()
    paths = sorted(glob.glob(os.path.join(RESULTS, "million-*.jsonl")))
    write_table(args.samples, args.meta_entries, header + f" Command: `{command}`.", paths)
    print("\nStep wall times: " + ", ".join(f"{k} {v:.0f} s" for k, v in durations.items()))


if __name__ == "__main__":
    main()
