#!/usr/bin/env python3
"""Derived image views, measured in one run.

On a generated dataset whose JPEGs resemble web-scale caption data (sides 400-1200 px, a tenth
larger: 1200-2000 px; --large-share), this script
  1. packs it and times `mmfs view add DST 256 -j 2` (the view build, per 1,000 images),
  2. reports the view's extra bytes on disk as a share of the dataset,
  3. times a decoding DataLoader epoch (PIL open + convert('RGB') + RandomResizedCrop(224) +
     ToTensor, num_workers=2, batch 64) over MNT/@256/train, over MNT/train (the original tree
     through the same mount) and over the native folder, cold (page cache of the files evicted
     with fadvise, the mount restarted) and warm (the same epoch again),
  4. with --profile, splits one process's per-image time into read, PIL decode, crop, ToTensor
     for original and view images (no DataLoader, so what is left of an epoch is IPC/collate),
  5. with --build-check N, times the view build on N generated ~1000 px JPEGs.

  /usr/bin/python3 bench/view_epoch.py --work /tmp/viewbench -n 3000 --profile --build-check 600
  /usr/bin/python3 bench/view_epoch.py --mnt MNT --side 256      (only the warm epochs of an
                                                                   existing mount, as before)

Needs torch/torchvision (/usr/bin/python3 here) and the mmfs build (MMFS_BUILD, default
build/release). The cold epochs evict only this dataset's files (fadvise DONTNEED), never the
machine's whole page cache.
"""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import time

import torch
from PIL import Image, JpegImagePlugin
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("MMFS_BUILD", os.path.join(REPO, "build", "release"))
MMFS = os.path.join(BUILD, "mmfs")
GEN = os.path.join(BUILD, "mmfs-gen-dataset")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def loader(path):
    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


def epoch(root, seed=0):
    torch.manual_seed(seed)
    t = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    ds = datasets.ImageFolder(root, transform=t, loader=loader)
    dl = DataLoader(ds, batch_size=64, num_workers=2, shuffle=True)
    start = time.monotonic()
    n = 0
    for x, _ in dl:
        n += x.shape[0]
    return n, time.monotonic() - start


def read_all(root):
    for p, _ in datasets.ImageFolder(root).samples:
        with open(p, "rb") as f:
            f.read()


def evict(paths):
    """Drops these files' pages from the page cache (this dataset only)."""
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def files_under(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def dir_bytes(root):
    return sum(os.path.getsize(p) for p in files_under(root))


def generate(src, n, large_share):
    """n samples: sides 400-1200 px, a share `large_share` of them 1200-2000 px; one ImageFolder."""
    large = int(round(n * large_share))
    run([GEN, src, "-n", str(n - large), "--min-side", "400", "--max-side", "1200", "--seed", "1"])
    if large == 0:
        return
    extra = src + ".large"
    run([GEN, extra, "-n", str(large), "--min-side", "1200", "--max-side", "2000", "--seed", "2"])
    for d, _, fs in os.walk(os.path.join(extra, "train")):
        for f in fs:
            rel = os.path.relpath(os.path.join(d, f), extra)
            dst = os.path.join(src, os.path.dirname(rel), "L" + f)
            os.replace(os.path.join(d, f), dst)
    shutil.rmtree(extra)


def jpeg_sides(paths):
    shorter = sorted(min(Image.open(p).size) for p in paths if p.endswith(".jpg"))
    q = lambda f: shorter[min(len(shorter) - 1, int(f * len(shorter)))]
    return {"min": shorter[0], "p10": q(0.1), "median": q(0.5), "p90": q(0.9), "max": shorter[-1],
            "over_1200": sum(s > 1200 for s in shorter) / len(shorter)}


class Mount:
    def __init__(self, dataset, mnt):
        self.dataset, self.mnt = dataset, mnt
        os.makedirs(mnt, exist_ok=True)

    def __enter__(self):
        run([MMFS, "mount", self.dataset, self.mnt])
        return self

    def __exit__(self, *exc):
        run([MMFS, "umount", self.mnt])


def profile(orig_root, view_root, count=300):
    """Per-image seconds of each stage in this process, originals against the view."""
    crop = transforms.RandomResizedCrop(224)
    to_tensor = transforms.ToTensor()
    out = {}
    for name, root in (("original", orig_root), ("view", view_root)):
        paths = [p for p, _ in datasets.ImageFolder(root).samples][:count]
        t = {"read": 0.0, "decode": 0.0, "crop": 0.0, "to_tensor": 0.0}
        pixels = 0
        torch.manual_seed(0)
        for p in paths:
            a = time.perf_counter()
            with open(p, "rb") as f:
                data = f.read()
            b = time.perf_counter()
            img = Image.open(io.BytesIO(data)).convert("RGB")
            c = time.perf_counter()
            x = crop(img)
            d = time.perf_counter()
            to_tensor(x)
            e = time.perf_counter()
            t["read"] += b - a
            t["decode"] += c - b
            t["crop"] += d - c
            t["to_tensor"] += e - d
            pixels += img.size[0] * img.size[1]
        out[name] = {k: v / len(paths) * 1e3 for k, v in t.items()}  # ms per image
        out[name]["megapixels"] = pixels / len(paths) / 1e6
        # JpegImagePlugin.get_sampling: 0 = 4:4:4, 1 = 4:2:2, 2 = 4:2:0.
        out[name]["sampling"] = [JpegImagePlugin.get_sampling(Image.open(p)) for p in paths[:50]]
    return out


def full(args):
    work = os.path.abspath(args.work)
    src, dst, mnt = (os.path.join(work, x) for x in ("src", "ds.mmfs", "mnt"))
    os.makedirs(work, exist_ok=True)
    if not os.path.isdir(src):
        generate(src, args.samples, args.large_share)
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    run([MMFS, "pack", src, dst])
    start = time.monotonic()
    run([MMFS, "view", "add", dst, str(args.side), "-j", str(args.jobs)])
    build_s = time.monotonic() - start
    images = sum(1 for p in files_under(os.path.join(src, "train")) if p.endswith(".jpg"))
    view_dir = os.path.join(dst, "views", str(args.side))
    view_bytes = dir_bytes(view_dir)
    dataset_bytes = dir_bytes(dst) - view_bytes
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "images": images,
        "source_sides": jpeg_sides(files_under(os.path.join(src, "train"))),
        "source_bytes": dir_bytes(src),
        "dataset_bytes": dataset_bytes,
        "view_bytes": view_bytes,
        "view_share": view_bytes / dataset_bytes,
        "build_seconds": build_s,
        "build_seconds_per_1000": build_s / images * 1000,
        "build_images_per_second": images / build_s,
        "epochs": {},
    }
    print(f"{images} images; shorter sides {res['source_sides']}", flush=True)
    print(f"view build: {build_s:.1f} s with -j {args.jobs} ({images / build_s:.0f} images/s, "
          f"{res['build_seconds_per_1000']:.1f} s per 1,000 images)", flush=True)
    print(f"view bytes: {view_bytes / 2**20:.1f} MiB = {100 * res['view_share']:.1f}% of the "
          f"dataset's {dataset_bytes / 2**20:.1f} MiB", flush=True)
    trees = [("native", os.path.join(src, "train")), ("original", os.path.join(mnt, "train")),
             (f"@{args.side}", os.path.join(mnt, f"@{args.side}", "train"))]
    shards = files_under(dst)
    for name, root in trees:
        res["epochs"][name] = {}
        for state in ("cold", "warm"):
            best = None
            for r in range(args.repeats):
                # Cold: this dataset's pages out of the page cache, and a fresh daemon (empty
                # RAM tier). Warm: the same epoch right after one that read everything.
                if state == "cold":
                    evict(files_under(root) if name == "native" else shards)
                with (Mount(dst, mnt) if name != "native" else _Null()):
                    if state == "warm":
                        read_all(root)
                    n, s = epoch(root, seed=r)
                best = s if best is None else min(best, s)
            res["epochs"][name][state] = {"seconds": best, "images_per_second": n / best}
            print(f"{name:>9} {state}: {n} images in {best:.2f} s ({n / best:.0f} images/s)",
                  flush=True)
    for state in ("cold", "warm"):
        o = res["epochs"]["original"][state]["seconds"]
        v = res["epochs"][f"@{args.side}"][state]["seconds"]
        nat = res["epochs"]["native"][state]["seconds"]
        print(f"{state}: @{args.side} is {o / v:.2f}x faster than the original tree through the "
              f"mount, {nat / v:.2f}x faster than the native folder")
        res[f"speedup_{state}"] = o / v
    if args.profile:
        with Mount(dst, mnt):
            res["profile_ms_per_image"] = profile(trees[1][1], trees[2][1])
        for name, p in res["profile_ms_per_image"].items():
            print(f"profile {name:>8}: " + ", ".join(
                f"{k} {v:.2f}" for k, v in p.items() if isinstance(v, float)) +
                  f" (ms per image; Mpx); sampling {sorted(set(p['sampling']))}")
    if args.build_check > 0:
        res["build_1000px"] = build_check(work, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


def build_check(work, args):
    """The view build rate on ~1000 px JPEGs (sides 900-1100 px), the issue's target case."""
    src, dst = os.path.join(work, "src1000"), os.path.join(work, "ds1000.mmfs")
    if not os.path.isdir(src):
        run([GEN, src, "-n", str(args.build_check), "--min-side", "900", "--max-side", "1100",
             "--seed", "3"])
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    run([MMFS, "pack", src, dst])
    start = time.monotonic()
    run([MMFS, "view", "add", dst, str(args.side), "-j", str(args.jobs)])
    s = time.monotonic() - start
    n = args.build_check
    print(f"view build on ~1000 px JPEGs: {n} images in {s:.1f} s with -j {args.jobs} "
          f"({n / s:.0f} images/s, {s / n * 1000:.1f} s per 1,000 images)", flush=True)
    return {"images": n, "seconds": s, "images_per_second": n / s}


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def warm_only(mnt, side):
    trees = [("original", f"{mnt}/train"), (f"@{side}", f"{mnt}/@{side}/train")]
    for _, root in trees:
        read_all(root)
    results = {}
    for name, root in trees:
        n, s = epoch(root)
        results[name] = s
        print(f"{name:>9}: {n} images in {s:.1f} s ({n / s:.0f} images/s)")
    print(f"@{side} is {results['original'] / results[f'@{side}']:.1f}x faster")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", help="folder for the generated dataset, its pack and the mount")
    ap.add_argument("--mnt", help="an existing mount: warm epochs only")
    ap.add_argument("-n", "--samples", type=int, default=2000)
    ap.add_argument("--side", type=int, default=256)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="epochs per cell; the best is kept")
    ap.add_argument("--large-share", type=float, default=0.1,
                    help="share of images with sides 1200-2000 px (the rest 400-1200)")
    ap.add_argument("--build-check", type=int, default=0, metavar="N",
                    help="also time the view build on N generated ~1000 px JPEGs")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    if args.mnt:
        warm_only(args.mnt, args.side)
    elif args.work:
        full(args)
    else:
        ap.error("--work DIR (the full run) or --mnt MNT")


if __name__ == "__main__":
    main()
