#!/usr/bin/env bash
# snapshot-cost.sh [BTSIM] [WRITES] [KEYS]: what `--data-dir` snapshots
# cost and what they buy. `btsim load --workload mutate_rows` writes WRITES
# (2,000,000) single-cell rows, 100 per request, overwriting KEYS
# (100,000) keys, into `btsim serve --data-dir`, once with snapshots (the
# default --snapshot-journal-bytes, 64 MiB) and once without (0). For each
# it prints the load's rate, the snapshots written and the longest time
# calls waited for one, the directory's size, and, after kill -9, how long
# the restart takes until the server listens. Run by hand
# (docs/durability.md has the figures); never by ctest.
set -euo pipefail

BTSIM=${1:-build/btsim}
WRITES=${2:-2000000}
KEYS=${3:-100000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-snapshot-cost.XXXXXX")
PID=""
cleanup() {
  [[ -n $PID ]] && kill -KILL "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# start LOG ARGS...: starts the server, sets PID and PORT, and STARTUP to
# how many seconds it took to listen.
start() {
  local log=$1
  shift
  : >"$log"
  local t0
  t0=$(date +%s.%N)
  "$BTSIM" serve --port 0 "$@" >"$log" 2>&1 &
  PID=$!
  PORT=""
  for _ in $(seq 6000); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
    [[ -n $PORT ]] && break
    sleep 0.05
  done
  if [[ -z $PORT ]]; then
    echo "snapshot-cost.sh: btsim serve did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
  STARTUP=$(echo "$(date +%s.%N) - $t0" | bc)
}

printf '%-10s %12s %9s %14s %10s %12s\n' snapshots "rows/s" written \
  "longest wait" "dir MiB" "restart s"
for limit in 67108864 0; do
  rm -rf "$WORK/data" && mkdir "$WORK/data"
  start "$WORK/first.log" --data-dir "$WORK/data" \
    --snapshot-journal-bytes "$limit"
  "$BTSIM" load --target "127.0.0.1:$PORT" --workload mutate_rows \
    --ops $((WRITES / 100)) --write-keys "$KEYS" --rows 1 --keep-table \
    --csv >"$WORK/load.csv"
  rate=$(awk -F, 'NR==1 { for (i = 1; i <= NF; i++) if ($i == "rate") r = i }
                  NR==2 { printf "%.0f", $r }' "$WORK/load.csv")
  written=$(grep -c 'snapshot [0-9]* written' "$WORK/first.log" || true)
  longest=$(sed -n 's/.*calls waited \([0-9]*\) ms.*/\1/p' "$WORK/first.log" |
    sort -n | tail -1)
  kill -KILL "$PID" && wait "$PID" 2>/dev/null || true
  PID=""
  mib=$(du -sm "$WORK/data" | cut -f1)
  start "$WORK/second.log" --data-dir "$WORK/data" \
    --snapshot-journal-bytes "$limit"
  restart=$STARTUP
  kill -KILL "$PID" && wait "$PID" 2>/dev/null || true
  PID=""
  printf '%-10s %12s %9s %14s %10s %12.2f\n' \
    "$([[ $limit == 0 ]] && echo off || echo on)" "$rate" "$written" \
    "${longest:-0} ms" "$mib" "$restart"
done
