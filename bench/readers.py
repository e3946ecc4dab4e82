#!/usr/bin/python3
"""Is data loading the bottleneck? `mmfs stats`' verdict against what a DataLoader epoch measures.

usage: /usr/bin/python3 bench/readers.py [--samples N] [--delay-us US] [--workers N] [--work DIR]

Runs one DataLoader(num_workers=2, persistent_workers) epoch per scenario over an mmfs mount
(ImageFolder, PIL decode, Resize(256) + CenterCrop(224) + ToTensor, batch 64, shuffled) and, at
the end of the epoch while the workers are still alive, reads the mount's readers over exactly
that epoch (`.mmfs/stats?window=EPOCH_SECONDS`) and prints `mmfs stats --window` for it:

  cold            fresh mount, every shard read slowed by --delay-us (MMFS_TEST_ORIGIN_DELAY_US,
                  a remote origin), shuffled order unknown to mmfs
  cold + hint     the same with tools/python/mmfs_hint.HintedSampler: mmfs loads ahead
  warm            a second epoch on the cold mount: the page cache serves, workers decode
  slow consumer   warm, and the training step (here: a sleep) takes 0.4 s per batch

The epoch time of each says which one data loading limits; the verdict should agree.
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("MMFS_BUILD", os.path.join(REPO, "build", "release"))
MMFS = os.path.join(BUILD, "mmfs")
sys.path.insert(0, os.path.join(REPO, "tools", "python"))


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for " + what)
        time.sleep(0.05)


class Mount:
    def __init__(self, dst, mnt, delay_us):
        env = dict(os.environ)
        if delay_us:
            env["MMFS_TEST_ORIGIN_DELAY_US"] = str(delay_us)
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.proc = subprocess.Popen([MMFS, "mount", "-f", dst, mnt], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.ismount(mnt), 60, "the mount")

    def close(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=False)
        self.proc.wait(timeout=60)


def epoch(root, workers, hint, consumer_seconds, state):
    import torch
    from torch.utils.data import DataLoader, RandomSampler
    from torchvision import datasets, transforms
    if state.get("loader") is None:
        t = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                transforms.ToTensor()])
        ds = datasets.ImageFolder(root, transform=t)
        sampler = RandomSampler(ds)
        if hint:
            from mmfs_hint import HintedSampler
            sampler = HintedSampler(sampler, [p for p, _ in ds.samples])
        state["loader"] = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=workers,
                                     persistent_workers=True)
        state["n"] = len(ds)
    start = time.monotonic()
    for _ in state["loader"]:
        if consumer_seconds:
            time.sleep(consumer_seconds)  # the training step this loader feeds
    return time.monotonic() - start


def readers(mnt, seconds):
    with open(os.path.join(mnt, ".mmfs", f"stats?window={seconds:.1f}&top=8")) as f:
        return json.load(f)["readers"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--delay-us", type=int, default=8000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", default="/tmp/mmfs-bench-readers")
    ap.add_argument("--show", action="store_true", help="print `mmfs stats` for each scenario")
    args = ap.parse_args()
    src, dst = os.path.join(args.work, "src"), os.path.join(args.work, "data.mmfs")
    if not os.path.exists(dst):
        subprocess.run([os.path.join(BUILD, "mmfs-gen-dataset"), src, "-n", str(args.samples),
                        "-c", "10", "--seed", "21"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([MMFS, "pack", "-q", src, dst], check=True)
    mnt = os.path.join(args.work, "mnt")
    results = []

    def report(name, seconds, n, mount):
        r = readers(mount.mnt, seconds)
        results.append((name, seconds, n / seconds, r))
        if args.show:
            out = subprocess.run([MMFS, "stats", "--window", f"{seconds:.1f}", mount.mnt],
                                 capture_output=True, text=True)
            print(f"--- {name}: epoch {seconds:.1f} s\n$ mmfs stats --window {seconds:.1f} MNT")
            lines = out.stdout.splitlines()
            at = next((i for i, l in enumerate(lines) if l.lstrip().startswith("Readers")), 0)
            print("\n".join(lines[at:at + 12]), flush=True)

    for name, hint in (("cold", False), ("cold + hint", True)):
        m = Mount(dst, mnt, args.delay_us)
        try:
            state = {}
            s = epoch(os.path.join(mnt, "train"), args.workers, hint, 0, state)
            report(name, s, state["n"], m)
            if not hint:
                s = epoch(os.path.join(mnt, "train"), args.workers, hint, 0, state)
                report("warm", s, state["n"], m)
                s = epoch(os.path.join(mnt, "train"), args.workers, hint, 0.4, state)
                report("slow consumer", s, state["n"], m)
            del state["loader"]
        finally:
            m.close()
    print(f"\n{args.samples} samples, {args.workers} workers, origin delay {args.delay_us} us/read")
    print(f"{'scenario':<15} {'epoch':>8} {'samples/s':>10} {'stall':>7} {'cpu':>7}  verdict")
    for name, s, rate, r in results:
        t = r["total"]
        print(f"{name:<15} {s:>7.1f}s {rate:>10.0f} {100 * t['stall_share']:>6.1f}% "
              f"{100 * t['cpu_share']:>6.1f}%  {r['verdict']}")


if __name__ == "__main__":
    main()
