#!/bin/sh
# run_fuzzer.sh FUZZER SEED_DIR SECONDS: fuzzes from the seeds for SECONDS; fails on any crash,
# leak, sanitizer report or timeout, leaving the reproducer in ./crashes.
set -eu
fuzzer=$1 seeds=$2 seconds=$3
name=$(basename "$fuzzer")
mkdir -p "corpus-$name" crashes
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix=crashes/ "corpus-$name" "$seeds"
