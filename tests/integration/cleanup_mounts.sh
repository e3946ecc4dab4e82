#!/bin/sh
# ctest cleanup fixture: unmount any test mount left under the test temp folders, even after a
# test binary crashed hard (the daemons also die with their parent through PR_SET_PDEATHSIG).
tmp=${TMPDIR:-/tmp}
grep -o " $tmp/mmfs-test-[^ ]*" /proc/mounts 2>/dev/null | while read -r mnt; do
  echo "cleanup: unmounting leftover $mnt"
  fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
done
exit 0
