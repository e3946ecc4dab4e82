#!/usr/bin/python3
"""How many times is each hot byte held in memory? (docs/cache.md, "Memory")

Mounts a packed dataset with a RAM tier larger than it, reads every file twice (a cold epoch,
then a warm one), and reports daemon RSS, the page cache of the mount's files and the page cache
of the shard files (fincore) against the bytes of data read.

Usage (root): /usr/bin/python3 bench/memory_once.py DATASET.mmfs [--ram-cache 2G] [-o hold_once=on]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MMFS = os.environ.get("MMFS_BIN", os.path.join(REPO, "build", "release", "mmfs"))


def fincore_bytes(paths):
    total = 0
    for i in range(0, len(paths), 500):
        out = subprocess.run(["fincore", "-b", "-n", "-o", "RES"] + paths[i:i + 500],
                             capture_output=True, text=True).stdout
        total += sum(int(x) for x in out.split())
    return total


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--ram-cache", default="4G")
    ap.add_argument("-o", dest="options", action="append", default=[],
                    help="mount options passed on (e.g. hold_once=on)")
    args = ap.parse_args()
    dataset = os.path.abspath(args.dataset)
    mnt = tempfile.mkdtemp(prefix="mmfs-mem-")
    subprocess.run(["sync"])
    open("/proc/sys/vm/drop_caches", "w").write("3\n")
    extra = [x for o in args.options for x in ("-o", o)]
    subprocess.run([MMFS, "mount", dataset, mnt, "--ram-cache", args.ram_cache] + extra,
                   check=True)
    try:
        pid = int(subprocess.run(["pgrep", "-f", f"mount {dataset} {mnt}"],
                                 capture_output=True, text=True).stdout.split()[0])
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(mnt) for f in fs)
        data = 0
        for epoch in range(2):
            for p in files:
                with open(p, "rb") as fh:
                    n = len(fh.read())
                if epoch == 0:
                    data += n
        # Hold-once drops a pushed file's pages 2 s after the push: measure after that.
        time.sleep(3)
        shards = [os.path.join(dataset, f) for f in os.listdir(dataset)
                  if f.endswith(".mdb")]
        mount_cache = fincore_bytes(files)
        shard_cache = fincore_bytes(shards)
        daemon = rss(pid)
        total = mount_cache + shard_cache + daemon
        print(f"data read:                    {data / 2**20:9.1f} MiB")
        print(f"page cache of the mount:      {mount_cache / 2**20:9.1f} MiB")
        print(f"page cache of the shards:     {shard_cache / 2**20:9.1f} MiB")
        print(f"daemon RSS (RAM tier inside): {daemon / 2**20:9.1f} MiB")
        print(f"total / data:                 {total / data:9.2f}x")
    finally:
        subprocess.run([MMFS, "umount", mnt])
        os.rmdir(mnt)


if __name__ == "__main__":
    sys.exit(main())
