#!/bin/sh
# ctest cleanup fixture: unmount any test mount left under the test temp folders, even after a
# test binary crashed hard (the daemons also die with their parent through PR_SET_PDEATHSIG).
tmp=${TMPDIR:-/tmp}
grep -o " $tmp/mmfs-test-[^ ]*" /proc/mounts 2>/dev/null | while read -r mnt; do
  echo "cleanup: unmounting leftover $mnt"
  fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
done
# The FUSE mounts under --overlay mounts whose daemons are gone.
grep -o ' /run/mmfs/mmfs-front-[0-9]*-[^ ]*/fuse ' /proc/mounts 2>/dev/null | while read -r m; do
  p=${m#/run/mmfs/mmfs-front-}
  kill -0 "${p%%-*}" 2>/dev/null || { echo "cleanup: unmounting leftover $m"; umount -l "$m"; }
done
# Memory and blkio cgroups that test binaries which died left behind
# (tests/integration/cgroup_helper):
# once their processes are gone they are empty; rmdir removes only empty ones (a running
# test's group is never touched).
for g in /sys/fs/cgroup/memory/mmfs-test-* /sys/fs/cgroup/blkio/mmfs-test-* /sys/fs/cgroup/mmfs-test-*; do
  [ -d "$g" ] && rmdir "$g" 2>/dev/null && echo "cleanup: removed leftover cgroup $g"
done
exit 0
