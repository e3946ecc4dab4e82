#!/usr/bin/python3
"""Reads an mmfs mount with real Python loaders and compares it with the source folder.

Usage: loader_check.py SRC MNT

Checks, each printing one line and failing with exit code 1 on a mismatch:
  os.walk        same directories and files (names and sizes) under SRC and MNT
  ImageFolder    torchvision.datasets.ImageFolder over SRC/train and MNT/train: same classes,
                 same (path, target) samples, and the same decoded pixels for a subset
  DataLoader     DataLoader(num_workers=2, shuffle) reads every file of MNT/train twice;
                 every sha256 matches the source
"""
import hashlib
import os
import sys


def fail(msg):
    print(f"loader_check: FAIL: {msg}", flush=True)
    sys.exit(1)


def walk(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out[rel] = (sorted(dirnames),
                    sorted((f, os.path.getsize(os.path.join(dirpath, f))) for f in filenames))
    return out


def check_walk(src, mnt):
    a, b = walk(src), walk(mnt)
    if a != b:
        only_src = sorted(set(a) - set(b))[:5]
        only_mnt = sorted(set(b) - set(a))[:5]
        differ = [k for k in a if k in b and a[k] != b[k]][:5]
        fail(f"os.walk differs: only in SRC {only_src}, only in MNT {only_mnt}, differ {differ}")
    files = sum(len(v[1]) for v in a.values())
    print(f"loader_check: os.walk OK ({len(a)} directories, {files} files)", flush=True)


def check_imagefolder(src, mnt):
    import torch
    from torchvision import datasets

    ds_src = datasets.ImageFolder(os.path.join(src, "train"))
    ds_mnt = datasets.ImageFolder(os.path.join(mnt, "train"))
    if ds_src.classes != ds_mnt.classes:
        fail(f"ImageFolder classes differ: {ds_src.classes[:5]} vs {ds_mnt.classes[:5]}")
    rel_src = [(os.path.relpath(p, src), t) for p, t in ds_src.samples]
    rel_mnt = [(os.path.relpath(p, mnt), t) for p, t in ds_mnt.samples]
    if rel_src != rel_mnt:
        fail("ImageFolder samples differ")
    if len(ds_mnt) == 0:
        fail("ImageFolder found no samples")
    import numpy as np
    step = max(1, len(ds_src) // 100)
    for i in range(0, len(ds_src), step):
        a = np.asarray(ds_src[i][0])
        b = np.asarray(ds_mnt[i][0])
        if a.shape != b.shape or not np.array_equal(a, b):
            fail(f"decoded image {ds_mnt.samples[i][0]} differs")
    print(f"loader_check: ImageFolder OK ({len(ds_mnt.classes)} classes, {len(ds_mnt)} samples, "
          f"{len(range(0, len(ds_src), step))} decoded and compared)", flush=True)


class RawFiles:
    """Every file under a folder, returned as (relative path, sha256 of its bytes)."""

    def __init__(self, root):
        self.root = root
        self.paths = sorted(os.path.relpath(os.path.join(d, f), root)
                            for d, _, fs in os.walk(root) for f in fs)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(os.path.join(self.root, self.paths[i]), "rb") as f:
            return self.paths[i], hashlib.sha256(f.read()).hexdigest()


def check_dataloader(src, mnt):
    import torch
    from torch.utils.data import DataLoader

    expected = {}
    for d, _, fs in os.walk(os.path.join(src, "train")):
        for f in fs:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                expected[os.path.relpath(p, os.path.join(src, "train"))] = \
                    hashlib.sha256(fh.read()).hexdigest()
    data = RawFiles(os.path.join(mnt, "train"))
    if len(data) != len(expected):
        fail(f"DataLoader dataset has {len(data)} files, source {len(expected)}")
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=2,
                        generator=torch.Generator().manual_seed(0))
    for epoch in range(2):
        seen = 0
        for paths, digests in loader:
            for p, h in zip(paths, digests):
                if expected.get(p) != h:
                    fail(f"epoch {epoch}: sha256 of {p} differs from the source")
                seen += 1
        if seen != len(expected):
            fail(f"epoch {epoch}: read {seen} files, expected {len(expected)}")
    print(f"loader_check: DataLoader OK (2 epochs x {len(expected)} files, num_workers=2, "
          f"sha256 match)", flush=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    src, mnt = sys.argv[1], sys.argv[2]
    check_walk(src, mnt)
    check_imagefolder(src, mnt)
    check_dataloader(src, mnt)
    print("loader_check: all OK")


if __name__ == "__main__":
    main()
