#!/usr/bin/python3
"""Reads a folder the way a training job does: torchvision ImageFolder + DataLoader.

Usage: demo_loader.py ROOT [--epochs N] [--workers N]

Each sample is decoded and resized to 224x224 (the usual ImageNet transform), the caption next to
the image is read too, and the epoch's throughput is printed.
"""
import argparse
import os
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class ImageCaptionFolder(datasets.ImageFolder):
    """ImageFolder that also returns the caption in KEY.txt next to each KEY.jpg."""

    def __getitem__(self, index):
        image, target = super().__getitem__(index)
        path = self.samples[index][0]
        caption_path = os.path.splitext(path)[0] + ".txt"
        caption = ""
        if os.path.exists(caption_path):
            with open(caption_path, encoding="utf-8") as f:
                caption = f.read().strip()
        return image, target, caption


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    transform = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                    transforms.ToTensor()])
    data = ImageCaptionFolder(args.root, transform=transform)
    print(f"ImageFolder: {len(data)} samples in {len(data.classes)} classes under {args.root}")
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=args.workers)
    for epoch in range(args.epochs):
        start = time.monotonic()
        n = 0
        caption_bytes = 0
        for images, targets, captions in loader:
            n += images.shape[0]
            caption_bytes += sum(len(c) for c in captions)
        seconds = time.monotonic() - start
        print(f"epoch {epoch + 1}: {n} images decoded and resized, {caption_bytes} caption bytes, "
              f"{seconds:.2f} s ({n / seconds:.0f} samples/s)")


if __name__ == "__main__":
    main()
