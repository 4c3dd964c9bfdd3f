#!/usr/bin/env bash
# durable-cost.sh [BTSIM] [RUNS] [DURATION]: what `--data-dir` costs.
# `btsim load --workload mutate_row` (and mutate_rows, 100 per batch)
# against `btsim serve` without and with --data-dir (a fresh directory under
# $TMPDIR each run), alternating, RUNS (5) times each, with 1 and with 8
# client threads; prints each run's throughput and the medians side by
# side. Run by hand (docs/durability.md has the figures); never by ctest.
set -euo pipefail

BTSIM=${1:-build/btsim}
RUNS=${2:-5}
DURATION=${3:-5s}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-durable-cost.XXXXXX")
PID=""
cleanup() {
  [[ -n $PID ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# one MODE WORKLOAD THREADS: prints requests per second of one run.
one() {
  local mode=$1 workload=$2 threads=$3 args=()
  if [[ $mode == durable ]]; then
    rm -rf "$WORK/data" && mkdir "$WORK/data"
    args=(--data-dir "$WORK/data")
  fi
  : >"$WORK/server.log"
  "$BTSIM" serve --port 0 "${args[@]}" >"$WORK/server.log" 2>&1 &
  PID=$!
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/server.log")
    [[ -n $port ]] && break
    sleep 0.1
  done
  "$BTSIM" load --target "127.0.0.1:$port" --workload "$workload" \
    --threads "$threads" --duration "$DURATION" --csv >"$WORK/load.csv"
  kill -TERM "$PID" && wait "$PID" || true
  PID=""
  # The CSV's rate column (requests per second).
  awk -F, 'NR==1 { for (i = 1; i <= NF; i++) if ($i == "rate") c = i }
           NR==2 { print $c }' "$WORK/load.csv"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

printf '%-12s %8s %14s %14s %8s\n' workload threads memory data-dir ratio
for workload in mutate_row mutate_rows; do
  for threads in 1 8; do
    : >"$WORK/mem" && : >"$WORK/dur"
    for _ in $(seq "$RUNS"); do
      one memory "$workload" "$threads" >>"$WORK/mem"
      one durable "$workload" "$threads" >>"$WORK/dur"
    done
    m=$(median <"$WORK/mem")
    d=$(median <"$WORK/dur")
    echo "  runs $workload/$threads: memory $(tr '\n' ' ' <"$WORK/mem")| data-dir $(tr '\n' ' ' <"$WORK/dur")" >&2
    printf '%-12s %8s %14.0f %14.0f %8.2f\n' "$workload" "$threads" "$m" "$d" \
      "$(awk -v a="$d" -v b="$m" 'BEGIN { print a / b }')"
  done
done
