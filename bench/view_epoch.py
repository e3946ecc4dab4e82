#!/usr/bin/env python3
"""A decoding DataLoader epoch over a view (MNT/@N/train) against the original tree
(MNT/train) through the same mount (issue 18).

Each epoch: PIL open + convert('RGB') + RandomResizedCrop(224) + ToTensor, DataLoader
num_workers=2, batch 64. Both trees are read once before timing (warm: the bytes are in the
mount's caches), so the figure is the decoding cost the view saves.

  python3 bench/view_epoch.py MNT 256
"""
import sys
import time

import torch
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def loader(path):
    with open(path, 'rb') as f:
        return Image.open(f).convert('RGB')


def epoch(root):
    t = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    ds = datasets.ImageFolder(root, transform=t, loader=loader)
    dl = DataLoader(ds, batch_size=64, num_workers=2, shuffle=True)
    start = time.monotonic()
    n = 0
    for x, _ in dl:
        n += x.shape[0]
    return n, time.monotonic() - start


def read_all(root):
    ds = datasets.ImageFolder(root)
    for p, _ in ds.samples:
        with open(p, 'rb') as f:
            f.read()


def main():
    mnt, side = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    trees = [('original', f'{mnt}/train'), (f'@{side}', f'{mnt}/@{side}/train')]
    for _, root in trees:
        read_all(root)  # warm
    results = {}
    for name, root in trees:
        n, s = epoch(root)
        results[name] = s
        print(f'{name:>9}: {n} images in {s:.1f} s ({n / s:.0f} images/s)')
    print(f'@{side} is {results["original"] / results[f"@{side}"]:.1f}x faster')


if __name__ == '__main__':
    main()
