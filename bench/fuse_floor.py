#!/usr/bin/python3
"""What FUSE itself costs on this machine, below any work of mmfs's: bench/fuse_floor.c, a
filesystem that serves COUNT files of SIZE bytes from one buffer in memory and answers every
request at once, timed on each transport against a native folder of as many files of the same
size, in one run (medians of --repeats, interleaved):

  open loop    one file opened, read whole and closed by Python (buffered open(): one isatty()
               round trip each) --loops times, warm: what a warm raw DataLoader epoch pays a file
  cold read    every file once in a shuffled order, unbuffered, page cache dropped before each
               pass: the floor under bench.py's cold random reads (the native folder reads the
               disk; the floor daemon already holds its bytes)

An mmfs mount cannot beat these figures on the same machine: the difference between them and
bench.py's mmfs rows is mmfs's own work. Run as root from the repository (drop_caches, mounts,
the kernel's enable_uring setting, put back after):

    /usr/bin/python3 bench/fuse_floor.py [--count 10000] [--size 20480] [--repeats 3]

Builds the floor with gcc against tools/build-libfuse-uring.sh's libfuse when it is installed
(/opt/mmfs-libfuse: the io_uring transport), else the system's libfuse 3 (/dev/fuse only).
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import KernelRingOffer, drop_caches  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RING_LIBFUSE = "/opt/mmfs-libfuse/lib/pkgconfig"


def build(out):
    env = dict(os.environ)
    ring = os.path.isdir(RING_LIBFUSE)
    pc = ["pkg-config", "--cflags", "--libs"]
    if ring:
        env["PKG_CONFIG_PATH"] = RING_LIBFUSE
        pc.append("--static")
    flags = subprocess.run(pc + ["fuse3"], env=env, check=True, capture_output=True,
                           text=True).stdout.split()
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", out,
                    os.path.join(HERE, "fuse_floor.c")] + flags, check=True)
    return ring


def wait_mounted(path, proc):
    deadline = time.monotonic() + 10
    while not os.path.ismount(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"fuse_floor did not mount at {path}")
        time.sleep(0.02)


def open_loop(path, loops):
    for _ in range(200):
        with open(path, "rb") as f:
            f.read()
    start = time.perf_counter()
    for _ in range(loops):
        with open(path, "rb") as f:
            f.read()
    return (time.perf_counter() - start) / loops * 1e6


def cold_read(folder, names):
    drop_caches()
    start = time.perf_counter()
    for n in names:
        with open(os.path.join(folder, n), "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass
    return (time.perf_counter() - start) / len(names) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--size", type=int, default=20480)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loops", type=int, default=20000)
    ap.add_argument("--work", default=os.path.join(HERE, ".cache", "fuse-floor"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("fuse_floor.py needs root (drop_caches, mounts, enable_uring)")
    native = os.path.join(args.work, f"native-{args.count}x{args.size}")
    if not os.path.isdir(native):
        os.makedirs(native + ".tmp", exist_ok=True)
        body = os.urandom(args.size)
        for i in range(args.count):
            with open(os.path.join(native + ".tmp", f"f{i}"), "wb") as f:
                f.write(body)
        os.rename(native + ".tmp", native)
    names = [f"f{i}" for i in range(args.count)]
    random.Random(0).shuffle(names)
    tmp = tempfile.mkdtemp(prefix="mmfs-fuse-floor-")
    try:
        binary = os.path.join(tmp, "fuse_floor")
        transports = ["classic", "uring"] if build(binary) else ["classic"]
        if "uring" in transports and not os.path.exists(KernelRingOffer.PATH):
            transports.remove("uring")
        mnt = os.path.join(tmp, "mnt")
        os.mkdir(mnt)
        figures = {}  # (row, side) -> [us]
        for _ in range(args.repeats):
            figures.setdefault(("open loop", "native"), []).append(
                open_loop(os.path.join(native, "f0"), args.loops))
            figures.setdefault(("cold read", "native"), []).append(cold_read(native, names))
            for transport in transports:
                ring = KernelRingOffer() if transport == "uring" else None
                if ring:
                    ring.__enter__()
                extra = ["-o", "io_uring"] if ring else []
                proc = subprocess.Popen([binary, str(args.count), str(args.size), "-o", "ro"]
                                        + extra + [mnt])
                try:
                    wait_mounted(mnt, proc)
                    figures.setdefault(("open loop", transport), []).append(
                        open_loop(os.path.join(mnt, "f0"), args.loops))
                    figures.setdefault(("cold read", transport), []).append(
                        cold_read(mnt, names))
                finally:
                    subprocess.run(["fusermount3", "-u", mnt], check=False)
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    if ring:
                        ring.__exit__(None, None, None)
        sides = ["native"] + [f"floor {t}" for t in transports]
        print(f"FUSE floor: {args.count} files of {args.size} bytes, median of {args.repeats}, "
              f"kernel {os.uname().release}")
        print("| per file | " + " | ".join(sides) + " |")
        print("|---|" + "---|" * len(sides))
        for row in ("open loop", "cold read"):
            base = statistics.median(figures[(row, "native")])
            cells = []
            for side in ["native"] + transports:
                us = statistics.median(figures[(row, side)])
                cells.append(f"{us:.1f} us ({base / us:.2f}x)")
            print(f"| {row} | " + " | ".join(cells) + " |")
    finally:
        mnt = os.path.join(tmp, "mnt")
        if os.path.ismount(mnt):
            subprocess.run(["fusermount3", "-u", mnt], check=False)
        if os.path.ismount(mnt):
            print(f"fuse_floor.py: {mnt} is still mounted; left in place", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
