#!/usr/bin/env python3
"""A reader of an mmfs mount for tests/integration/reader_mount_test.cc.

usage: reader_check.py MNT MODE SECONDS RESULT

Runs one workload for SECONDS, measuring itself the time it spends inside open() and read() of
the mount's files and the CPU time it uses, writes {"pid", "wall", "io", "cpu", "files"} to
RESULT, then waits for EOF on stdin (the test reads `mmfs stats` meanwhile; the reader must still
be alive to have a row of its own).

  io       a second thread reads cold files one after another (the main thread lists the tree
           first) and then waits on stdin: the thread's TID is not the process's, which the
           accounting must map back
  compute  reads 60 images once (warming the page cache), then reads one (warm) and decodes it
           with PIL several times, file after file
  idle     reads a file, sleeps 0.2 s, reads the next
"""
import io
import json
import os
import sys
import threading
import time

mnt, mode, seconds, result = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]

files = []
for d, _, names in os.walk(os.path.join(mnt, "train")):
    files.extend(os.path.join(d, n) for n in sorted(names))
files.sort()
images = [f for f in files if f.endswith(".jpg")]


def timed_read(path):
    t0 = time.monotonic()
    with open(path, "rb") as f:
        data = f.read()
    return data, time.monotonic() - t0


out = {"pid": os.getpid(), "io": 0.0, "files": 0}


def io_workload():
    start = time.monotonic()
    for p in files:
        if time.monotonic() - start >= seconds:
            break
        _, dt = timed_read(p)
        out["io"] += dt
        out["files"] += 1


if mode == "compute":
    from PIL import Image
    warm = images[:60]
    for p in warm:
        timed_read(p)

t_cpu = time.process_time()
t0 = time.monotonic()
if mode == "io":
    # The thread outlives the workload (it waits on stdin) so that the stats show both threads.
    done = threading.Event()
    worker = threading.Thread(target=lambda: (io_workload(), done.set(), sys.stdin.read()))
    worker.start()
    done.wait()
elif mode == "compute":
    i = 0
    while time.monotonic() - t0 < seconds:
        data, dt = timed_read(warm[i % len(warm)])
        out["io"] += dt
        out["files"] += 1
        i += 1
        for _ in range(5):
            Image.open(io.BytesIO(data)).convert("RGB").resize((64, 64))
elif mode == "idle":
    i = 0
    while time.monotonic() - t0 < seconds:
        _, dt = timed_read(files[i % len(files)])
        out["io"] += dt
        out["files"] += 1
        i += 1
        time.sleep(0.2)  # the workload: a consumer that takes a file every 0.2 s
else:
    sys.exit("unknown mode " + mode)
out["wall"] = time.monotonic() - t0
out["cpu"] = time.process_time() - t_cpu

with open(result + ".tmp", "w") as f:
    json.dump(out, f)
os.rename(result + ".tmp", result)
if mode == "io":
    worker.join()
else:
    sys.stdin.read()
