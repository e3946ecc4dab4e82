#!/usr/bin/python3
"""One benchmark workload over one dataset root; prints a JSON line with its timing.

Usage: workloads.py WORKLOAD ROOT FILELIST [options]

ROOT is the dataset root as a peer shows it (a native folder or a mount); FILELIST holds the
relative paths of the image files (one per line, pack order). Workloads:
  list           os.walk over ROOT
  imagefolder    torchvision ImageFolder(ROOT/train) construction
  randread       every image read whole in a seeded random order, --procs reader processes
                 (--seconds T: stop after T seconds; files_per_second is then the figure)
  seqread        every image and its caption read whole in path order
  seqread-alt    the same split over 2 reader processes taking alternate batches of 64 samples
  loader-raw     one DataLoader epoch (num_workers=2, batch 64, shuffle): image bytes + caption
  loader-decode  the same, decoding with PIL and resizing to 224x224
                 (--hint: the sampler writes each epoch's order to ROOT/.mmfs/hint;
                 --list-first: os.walk ROOT/train before the timer starts, as
                 torchvision's ImageFolder does when the dataset is built;
                 --seconds T: stop each epoch after T seconds and estimate its full length)
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import time


def read_whole(path):
    with open(path, "rb", buffering=0) as f:
        n = 0
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return n
            n += len(chunk)


def caption_of(path):
    return os.path.splitext(path)[0] + ".txt"


def _reader(paths, deadline=None):
    """(files, bytes) read; stops at the monotonic `deadline` so that an origin too slow to read
    every file within a benchmark's time (300 IOPS: minutes) still gives a rate."""
    files = total = 0
    for p in paths:
        if deadline is not None and time.monotonic() >= deadline:
            break
        total += read_whole(p)
        files += 1
    return files, total


def _sample_reader(paths):
    total = 0
    for p in paths:
        total += read_whole(p)
        c = caption_of(p)
        if os.path.exists(c):
            total += read_whole(c)
    return total


def read_bytes(io_stat, dev):
    """Bytes read from device `dev` so far, per a blkio v1 io_service_bytes file."""
    with open(io_stat) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == dev and parts[1] == "Read":
                return int(parts[2])
    return 0


def daemon_origin_bytes(root):
    """For an mmfs mount: the bytes its daemon read from the shards so far (for READs and ahead
    of them), from ROOT/.mmfs/stats; None for anything else. Beside the blkio counter, which
    also counts the O_DIRECT reads' rounding to blocks and the index, it shows what the cache
    let through."""
    path = os.path.join(root, ".mmfs", "stats")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        s = json.load(f)
    return s["origin"]["bytes"] + s.get("readahead", {}).get("bytes", 0)


def daemon_origin_causes(root):
    """For an mmfs mount: the bytes its daemon read from the shards so far by cause (the files
    asked for, their samples' other members, extents' neighbours, readahead, warm-up) and the
    re-reads among them, from ROOT/.mmfs/stats; None for anything else."""
    path = os.path.join(root, ".mmfs", "stats")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        s = json.load(f)
    o = s["origin"]
    demand = o.get("by_cause", {}).get("demand", {})
    return {"asked": demand.get("asked_bytes", demand.get("bytes", 0)),
            "members": demand.get("member_bytes", 0),
            "neighbours": demand.get("neighbour_bytes", 0),
            "readahead": s.get("readahead", {}).get("bytes", 0),
            "warmup": o.get("by_cause", {}).get("warmup", {}).get("bytes", 0),
            "rereads": o.get("rereads", {}).get("bytes", 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("root")
    ap.add_argument("filelist")
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--hint", action="store_true")
    ap.add_argument("--list-first", action="store_true")
    ap.add_argument("--seconds", type=float,
                    help="randread, loader-*: stop after this many seconds (each epoch)")
    ap.add_argument("--io-stat", help="a blkio cgroup's blkio.throttle.io_service_bytes: the bytes "
                    "read from --io-dev in each epoch are reported (origin_bytes)")
    ap.add_argument("--io-dev", help="MAJOR:MINOR of the origin's device, with --io-stat")
    args = ap.parse_args()
    with open(args.filelist) as f:
        rel = [line.rstrip("\n") for line in f if line.strip()]
    images = [os.path.join(args.root, r) for r in rel]
    if args.list_first:
        listed = sum(len(fs) for _, _, fs in os.walk(os.path.join(args.root, "train")))
        if listed < len(images):
            sys.exit(f"--list-first: {listed} files under {args.root}/train, fewer than the list")
    result = {"workload": args.workload}
    start = time.monotonic()
    if args.workload == "list":
        files = sum(len(fs) for _, _, fs in os.walk(args.root))
        result.update(files=files)
    elif args.workload == "imagefolder":
        from torchvision import datasets
        ds = datasets.ImageFolder(os.path.join(args.root, "train"))
        result.update(files=len(ds))
    elif args.workload == "randread":
        order = list(images)
        random.Random(args.seed).shuffle(order)
        deadline = start + args.seconds if args.seconds else None
        if args.procs == 1:
            files, total = _reader(order, deadline)
        else:
            parts = [order[i::args.procs] for i in range(args.procs)]
            with mp.get_context("fork").Pool(args.procs) as pool:
                done = pool.starmap(_reader, [(part, deadline) for part in parts])
            files, total = sum(d[0] for d in done), sum(d[1] for d in done)
        elapsed = time.monotonic() - start
        result.update(files=files, bytes=total, files_per_second=files / elapsed,
                      complete=files == len(order))
    elif args.workload == "seqread":
        result.update(files=len(images), bytes=_sample_reader(images))
    elif args.workload == "seqread-alt":
        batches = [images[i:i + 64] for i in range(0, len(images), 64)]
        parts = [[p for b in batches[r::2] for p in b] for r in range(2)]
        with mp.get_context("fork").Pool(2) as pool:
            total = sum(pool.map(_sample_reader, parts))
        result.update(files=len(images), bytes=total)
    elif args.workload in ("loader-raw", "loader-decode"):
        import torch
        from torch.utils.data import DataLoader, Dataset
        decode = args.workload == "loader-decode"

        class Samples(Dataset):
            def __len__(self):
                return len(images)

            def __getitem__(self, i):
                p = images[i]
                with open(caption_of(p), "rb") as f:
                    caption = f.read()
                if decode:
                    from PIL import Image
                    with Image.open(p) as im:
                        t = torch.from_numpy(__import__("numpy").asarray(
                            im.convert("RGB").resize((224, 224))).copy())
                    return t, len(caption)
                with open(p, "rb") as f:
                    return len(f.read()), len(caption)

        epochs, origin, partial, daemon, causes, progress = [], [], [], [], [], []
        for e in range(args.epochs):
            io0 = read_bytes(args.io_stat, args.io_dev) if args.io_stat else 0
            d0 = daemon_origin_bytes(args.root)
            c0 = daemon_origin_causes(args.root)
            t0 = time.monotonic()
            g = torch.Generator().manual_seed(args.seed + e)
            if args.hint:
                from torch.utils.data import RandomSampler
                sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                "..", "tools", "python"))
                from mmfs_hint import HintedSampler
                sampler = HintedSampler(RandomSampler(range(len(images)), generator=g), images)
                loader = DataLoader(Samples(), batch_size=64, sampler=sampler, num_workers=2)
            else:
                loader = DataLoader(Samples(), batch_size=64, shuffle=True, num_workers=2,
                                    generator=g)
            n = 0
            marks = []  # (seconds, samples) at each batch
            for batch in loader:
                n += len(batch[1])
                marks.append((time.monotonic() - t0, n))
                # At least two batches, so that a rate can be taken between them.
                if args.seconds and marks[-1][0] >= args.seconds and len(marks) > 2 \
                        and n < len(images):
                    break
            epochs.append(time.monotonic() - t0)
            # Samples done at each half second of the epoch: how far the loader got while a
            # fill was still fetching, and how long its tail took.
            step, k, prev = 0.5, 0, 0
            curve = []
            for t, done in marks:
                while t >= (k + 1) * step:
                    k += 1
                    curve.append(prev)
                prev = done
            curve.append(n)
            progress.append(curve)
            if n < len(images):
                # Cut short: the rest of the epoch at the rate of the window's second half.
                # Not from the start: the workers' start-up and, for the native folder, the
                # first reads of ext4's inode tables and directories make the early rate lower
                # than the rest of the epoch's. For a reader that gains nothing from what it
                # has read (the native folder from a cold origin, today's mmfs with its
                # one read per sample) the late rate is close to steady; for one that gets
                # faster as it goes (neighbours kept) this would underestimate it, so such a
                # reader is not cut.
                half = next(m for m in marks if m[0] >= marks[-1][0] / 2)
                if half == marks[-1]:
                    half = marks[-2]
                rate = (n - half[1]) / (marks[-1][0] - half[0])
                estimate = marks[-1][0] + (len(images) - n) / rate
                partial.append({"samples": n, "seconds": epochs[-1], "estimate": estimate})
                epochs[-1] = estimate
            else:
                partial.append(None)
            if args.io_stat:
                origin.append(read_bytes(args.io_stat, args.io_dev) - io0)
            if d0 is not None:
                daemon.append(daemon_origin_bytes(args.root) - d0)
                c1 = daemon_origin_causes(args.root)
                causes.append({k: c1[k] - c0[k] for k in c1})
        result.update(files=n, epoch_seconds=epochs, progress_every_half_second=progress)
        if daemon:
            result.update(daemon_origin_bytes=daemon, daemon_origin_causes=causes)
        if any(partial):
            result.update(partial_epochs=partial)
        if args.io_stat:
            result.update(origin_bytes=origin)
    else:
        sys.exit(f"unknown workload {args.workload}")
    result["seconds"] = time.monotonic() - start
    print(json.dumps(result))


if __name__ == "__main__":
    main()
