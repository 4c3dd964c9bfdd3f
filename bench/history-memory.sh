#!/usr/bin/env bash
# Peak memory of `btsim run` against the length of the run: plays
# bench/history-memory.textproto (1,000 client operations per second of
# virtual time over 100,000 keys) for SHORT and LONG of virtual time and
# prints each run's peak resident memory (GNU time's maxrss), its wall
# time, and the ratio long / short. Issue 42's target: a 6 h run within
# 1.3x of a 1 h run (memory bounded by live keys, not by the run's
# length), and 24 h under 2 GB.
#
#   bench/history-memory.sh              SHORT=10m LONG=60m
#   SHORT=1h LONG=6h bench/history-memory.sh
#
# Uses build/btsim (BTSIM=... for another binary). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
btsim="${BTSIM:-build/btsim}"
short="${SHORT:-10m}"
long="${LONG:-60m}"
[[ -x $btsim ]] || { echo "no $btsim: build first (./dev.sh build)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }

declare -A rss
for duration in "$short" "$long"; do
  out=$( { /usr/bin/time -f "maxrss_kb %M wall_s %e" "$btsim" run \
    bench/history-memory.textproto --duration "$duration" --quiet; } 2>&1)
  kb=$(sed -n 's/^maxrss_kb \([0-9]*\) .*/\1/p' <<<"$out")
  wall=$(sed -n 's/.* wall_s \([0-9.]*\)$/\1/p' <<<"$out")
  rss[$duration]=$kb
  printf '%-6s peak %6d MB  wall %6.1f s  %s\n' "$duration" $((kb / 1024)) \
    "$wall" "$(grep fingerprint <<<"$out")"
done
awk -v s="${rss[$short]}" -v l="${rss[$long]}" -v a="$short" -v b="$long" \
  'BEGIN { printf "peak %s / %s: %.2fx (target <= 1.3x)\n", b, a, l / s }'
