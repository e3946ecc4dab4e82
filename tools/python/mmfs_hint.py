"""Tell an mmfs mount the order a shuffled DataLoader will read, so mmfs prefetches it.

    import sys; sys.path.insert(0, "/path/to/mmfs/tools/python")
    from mmfs_hint import HintedSampler
    ds = torchvision.datasets.ImageFolder("/mnt/data/train")
    sampler = HintedSampler(torch.utils.data.RandomSampler(ds), [p for p, _ in ds.samples])
    loader = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=8)

Each epoch the wrapped sampler's order is drawn up front and written, as one path per line, to
MNT/.mmfs/hint; the daemon then loads samples just ahead of the workers. Off an mmfs mount (or
with -o hint=off) the sampler behaves exactly like the one it wraps.
"""
import os
import threading

try:
    from torch.utils.data import Sampler
except ImportError:  # usable without torch, e.g. for a hand-written loop
    Sampler = object


def find_mount_root(path):
    """The mmfs mount containing `path` (the directory holding .mmfs/hint), or None."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.lexists(os.path.join(d, ".mmfs", "hint")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class HintedSampler(Sampler):
    def __init__(self, sampler, paths):
        self.sampler, self.paths = sampler, paths
        self.root = find_mount_root(paths[0]) if len(paths) else None
        self._writer = None

    def __len__(self):
        return len(self.sampler)

    def __iter__(self):
        order = list(self.sampler)
        if self.root is not None:
            if self._writer is not None:
                self._writer.join()
            # Written from a thread: a long order must not delay the first batch.
            self._writer = threading.Thread(target=self._write, args=(order,), daemon=True)
            self._writer.start()
        return iter(order)

    def _write(self, order):
        text = "".join(os.path.relpath(os.path.abspath(self.paths[i]), self.root) + "\n"
                       for i in order)
        try:
            with open(os.path.join(self.root, ".mmfs", "hint"), "w") as f:
                f.write(text)
        except OSError:
            pass  # a hint is only advice; training goes on without it
