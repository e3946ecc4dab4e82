#!/usr/bin/python3
"""Reads shuffled epochs of an mmfs mount through tools/python/mmfs_hint.HintedSampler.

Usage: hint_check.py SRC MNT EPOCHS

A DataLoader(num_workers=2, batch 16) over the images of MNT/train, each item the image's bytes
and its caption's bytes (k.jpg then k.txt, as an image-caption loader reads them). Checks every
sha256 against SRC and that the sampler wrote its order to MNT/.mmfs/hint; prints "hint_check: OK"
and the number of images per epoch.
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "python"))
from mmfs_hint import HintedSampler, find_mount_root  # noqa: E402


def fail(msg):
    print(f"hint_check: FAIL: {msg}", flush=True)
    sys.exit(1)


class ImageCaption:
    def __init__(self, root):
        self.paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root)
                            for f in fs if f.endswith(".jpg"))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            image = f.read()
        with open(self.paths[i][:-4] + ".txt", "rb") as f:
            caption = f.read()
        return self.paths[i], hashlib.sha256(image + caption).hexdigest()


def main():
    import torch
    from torch.utils.data import DataLoader, RandomSampler

    src, mnt, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = ImageCaption(os.path.join(mnt, "train"))
    if find_mount_root(data.paths[0]) != os.path.abspath(mnt):
        fail(f"no hint file found above {data.paths[0]}")
    sampler = HintedSampler(RandomSampler(data, generator=torch.Generator().manual_seed(1)),
                            data.paths)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=2)
    for epoch in range(epochs):
        seen = 0
        for paths, digests in loader:
            for p, h in zip(paths, digests):
                rel = os.path.relpath(p, mnt)
                with open(os.path.join(src, rel), "rb") as f:
                    image = f.read()
                with open(os.path.join(src, rel[:-4] + ".txt"), "rb") as f:
                    caption = f.read()
                if hashlib.sha256(image + caption).hexdigest() != h:
                    fail(f"epoch {epoch}: {rel} or its caption differs from the source")
                seen += 1
        if seen != len(data):
            fail(f"epoch {epoch}: read {seen} samples, expected {len(data)}")
    print(f"hint_check: OK {len(data)} images x {epochs} epochs", flush=True)


if __name__ == "__main__":
    main()
