#!/usr/bin/env bash
# durable-cost.sh [BTSIM] [RUNS] [DURATION]: what `--data-dir` costs.
# `btsim load --workload mutate_row` (and mutate_rows, 100 per batch)
# against `btsim serve` without and with --data-dir (a fresh directory under
# $TMPDIR each run), alternating, RUNS (5) times each, with 1 and with 8
# client threads; prints each run's throughput (btsim load's rate: writes
# per second for mutate_row, rows per second for mutate_rows) and the
# medians of throughput and p50 latency side by side. Run by hand (docs/durability.md has the figures); never by ctest.
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
  for _ in $(seq 300); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/server.log")
    [[ -n $port ]] && break
    sleep 0.1
  done
  if [[ -z $port ]]; then
    echo "durable-cost.sh: btsim serve did not start:" >&2
    cat "$WORK/server.log" >&2
    exit 1
  fi
  "$BTSIM" load --target "127.0.0.1:$port" --workload "$workload" \
    --threads "$threads" --duration "$DURATION" --csv >"$WORK/load.csv"
  kill -TERM "$PID" && wait "$PID" || true
  PID=""
  # The CSV's rate (units per second) and p50 (µs) columns.
  awk -F, 'NR==1 { for (i = 1; i <= NF; i++) { if ($i == "rate") r = i; if ($i == "p50_us") p = i } }
           NR==2 { print $r, $p }' "$WORK/load.csv"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

printf '%-12s %7s %12s %12s %6s %12s %12s\n' workload threads \
  "memory /s" "data-dir /s" ratio "memory p50" "data-dir p50"
for workload in mutate_row mutate_rows; do
  for threads in 1 8; do
    : >"$WORK/mem" && : >"$WORK/dur"
    for _ in $(seq "$RUNS"); do
      one memory "$workload" "$threads" >>"$WORK/mem"
      one durable "$workload" "$threads" >>"$WORK/dur"
    done
    m=$(cut -d' ' -f1 "$WORK/mem" | median)
    d=$(cut -d' ' -f1 "$WORK/dur" | median)
    mp=$(cut -d' ' -f2 "$WORK/mem" | median)
    dp=$(cut -d' ' -f2 "$WORK/dur" | median)
    echo "  runs $workload/$threads: memory $(cut -d' ' -f1 "$WORK/mem" | tr '\n' ' ')| data-dir $(cut -d' ' -f1 "$WORK/dur" | tr '\n' ' ')" >&2
    printf '%-12s %7s %12.0f %12.0f %6.2f %9.0f µs %9.0f µs\n' "$workload" \
      "$threads" "$m" "$d" "$(awk -v a="$d" -v b="$m" 'BEGIN { print a / b }')" \
      "$mp" "$dp"
  done
done
