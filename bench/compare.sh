#!/usr/bin/env bash
# Compares `btsim serve` with the official emulator (cbtemulator) on this
# machine, with the same load driver (`btsim load`) against both:
#   1. speed: every workload, interleaved (btsim, cbtemulator, btsim, ...),
#      --runs times each; a table of medians (min..max), the ratio
#      btsim/cbtemulator of the medians, and the median p99 latencies;
#   2. a 3-cluster btsim instance against single-cluster cbtemulator on
#      MutateRows (replication must not make btsim slower than the oracle);
#   3. memory: peak RSS (VmHWM) minus RSS before loading, per stored cell,
#      after loading --mem-rows single-cell rows (16-byte keys, 20-byte
#      values) into a fresh server of each kind.
# It builds nothing: build btsim first (e.g. ./dev.sh build).
#
# usage: bench/compare.sh [--quick] [--btsim PATH] [--cbtemulator PATH]
#                         [--runs N] [--duration D] [--rows N]
#                         [--mem-rows N] [--out DIR] [--skip-memory]
#                         [--skip-replicated]
#   --quick   a smoke run: short workloads, few rows (about 1 minute)
# Raw results go to DIR (default: a new directory under $TMPDIR):
# results.csv (one line per run) and table.txt (what is printed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BTSIM=$ROOT/build/btsim
CBTEMULATOR=/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator
RUNS=3
DURATION=5s
ROWS=200000
MEM_ROWS=1000000
OUT=""
SKIP_MEMORY=0
SKIP_REPLICATED=0
QUICK=0

die() { echo "compare.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

while (($#)); do
  case $1 in
    --quick) QUICK=1 ;;
    --btsim) BTSIM=${2:?--btsim needs a path}; shift ;;
    --cbtemulator) CBTEMULATOR=${2:?--cbtemulator needs a path}; shift ;;
    --runs) RUNS=${2:?--runs needs a number}; shift ;;
    --duration) DURATION=${2:?--duration needs a value}; shift ;;
    --rows) ROWS=${2:?--rows needs a number}; shift ;;
    --mem-rows) MEM_ROWS=${2:?--mem-rows needs a number}; shift ;;
    --out) OUT=${2:?--out needs a directory}; shift ;;
    --skip-memory) SKIP_MEMORY=1 ;;
    --skip-replicated) SKIP_REPLICATED=1 ;;
    -h|--help) usage ;;
    *) echo "compare.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
if ((QUICK)); then
  DURATION=500ms
  ROWS=20000
  MEM_ROWS=100000
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs: expected a positive number, got '$RUNS'"
[[ $MEM_ROWS =~ ^[1-9][0-9]*00$ ]] || die "--mem-rows: expected a multiple of 100, got '$MEM_ROWS'"
[[ -x $BTSIM ]] || die "btsim binary not found or not executable: $BTSIM (build it, or pass --btsim PATH)"
[[ -x $CBTEMULATOR ]] || die "cbtemulator not found: $CBTEMULATOR (install google-cloud-sdk's bigtable emulator, or pass --cbtemulator PATH)"
command -v python3 >/dev/null || die "python3 is needed for the port picker and the table"
"$BTSIM" load --help >/dev/null 2>&1 || die "$BTSIM has no 'load' subcommand (rebuild it)"

if [[ -z $OUT ]]; then OUT=$(mktemp -d "${TMPDIR:-/tmp}/btsim-compare.XXXXXX"); fi
mkdir -p "$OUT"
RESULTS=$OUT/results.csv
echo "phase,server,workload,label,run,threads,requests,items,unit,seconds,rate,p50_us,p99_us,errors" >"$RESULTS"

# --- servers ---------------------------------------------------------------
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'echo "compare.sh: interrupted" >&2; exit 130' INT TERM HUP

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits until 127.0.0.1:$1 accepts connections (pid $2 must stay alive).
wait_port() {
  local port=$1 pid=$2 i
  for i in $(seq 200); do  # 20 s
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# start_btsim NAME [serve flags...]: sets SERVER_PID and SERVER_PORT.
start_btsim() {
  local name=$1; shift
  local log=$OUT/$name.log port
  port=$(free_port)
  "$BTSIM" serve --port "$port" "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_port "$port" "$SERVER_PID" || die "btsim serve ($name) did not start on port $port; log $log:
$(tail -20 "$log")"
  SERVER_PORT=$port
}

# start_emulator NAME: sets SERVER_PID and SERVER_PORT.
start_emulator() {
  local name=$1 log=$OUT/$1.log port
  port=$(free_port)
  "$CBTEMULATOR" -host 127.0.0.1 -port "$port" >"$log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_port "$port" "$SERVER_PID" || die "cbtemulator ($name) did not start on port $port; log $log:
$(tail -20 "$log")"
  SERVER_PORT=$port
}

stop_server() {  # stop_server PID
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# kB of a /proc/PID/status field (VmRSS, VmHWM).
proc_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

LOAD_FAILURES=0
# run_load PHASE SERVER PORT RUN [load flags...]: one `btsim load --csv`,
# its result line appended to results.csv.
run_load() {
  local phase=$1 server=$2 port=$3 run=$4; shift 4
  local out=$OUT/load.out err=$OUT/load.err
  if ! "$BTSIM" load --target "127.0.0.1:$port" --csv "$@" >"$out" 2>"$err"; then
    echo "compare.sh: warning: btsim load $* against $server failed:" >&2
    sed 's/^/    /' "$err" >&2
    LOAD_FAILURES=$((LOAD_FAILURES + 1))
  fi
  local line
  while IFS= read -r line; do
    if [[ -n $line ]]; then
      echo "$phase,$server,$line" | sed "s/^\([^,]*,[^,]*,[^,]*,[^,]*\),/\1,$run,/" >>"$RESULTS"
    fi
  done < <(tail -n +2 "$out")
  return 0
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
echo "btsim: $BTSIM"
echo "cbtemulator: $CBTEMULATOR"
echo "runs: $RUNS, duration per run: $DURATION, rows for reads: $ROWS, memory rows: $MEM_ROWS"
echo "raw results: $RESULTS"
echo

# --- 1. speed ----------------------------------------------------------------
# workload flags, one per line.
WORKLOADS=(
  "--workload mutate_row"
  "--workload mutate_rows --threads 1"
  "--workload mutate_rows --threads 4"
  "--workload scan --rows $ROWS"
  "--workload point_read --rows $ROWS"
  "--workload rmw_hot"
  "--workload check_and_mutate --rows $ROWS"
)
start_btsim btsim --compaction-interval 5s
BTSIM_PID=$SERVER_PID BTSIM_PORT=$SERVER_PORT
start_emulator cbtemulator
EMU_PID=$SERVER_PID EMU_PORT=$SERVER_PORT
for flags in "${WORKLOADS[@]}"; do
  echo "speed: $flags" >&2
  for run in $(seq "$RUNS"); do
    # shellcheck disable=SC2086  # flags are words
    run_load speed btsim "$BTSIM_PORT" "$run" $flags --duration "$DURATION"
    # shellcheck disable=SC2086
    run_load speed cbtemulator "$EMU_PORT" "$run" $flags --duration "$DURATION"
  done
done
stop_server "$BTSIM_PID"

# --- 2. three clusters -----------------------------------------------------
if ((!SKIP_REPLICATED)); then
  start_btsim btsim3 --compaction-interval 5s \
    --clusters c1=us-east1-b,c2=us-east1-c,c3=us-central1-a
  B3_PID=$SERVER_PID B3_PORT=$SERVER_PORT
  echo "replicated: mutate_rows, 3-cluster btsim vs cbtemulator" >&2
  for run in $(seq "$RUNS"); do
    run_load replicated btsim-3c "$B3_PORT" "$run" --workload mutate_rows --threads 1 --duration "$DURATION"
    run_load replicated cbtemulator "$EMU_PORT" "$run" --workload mutate_rows --threads 1 --duration "$DURATION"
  done
  stop_server "$B3_PID"
fi
stop_server "$EMU_PID"

# --- 3. memory ---------------------------------------------------------------
MEMORY=$OUT/memory.csv
echo "server,cells,rss_before_kb,hwm_kb,rss_after_kb,bytes_per_cell" >"$MEMORY"
measure_memory() {  # measure_memory NAME START_FUNCTION [ARGS...]
  local name=$1; shift
  "$@"
  local pid=$SERVER_PID port=$SERVER_PORT before hwm after
  sleep 0.5
  before=$(proc_kb "$pid" VmRSS)
  echo "memory: loading $MEM_ROWS rows into $name" >&2
  run_load memory "$name" "$port" 1 --workload mutate_rows --threads 1 \
    --ops $((MEM_ROWS / 100)) --batch 100 --keep-table
  hwm=$(proc_kb "$pid" VmHWM)
  after=$(proc_kb "$pid" VmRSS)
  echo "$name,$MEM_ROWS,$before,$hwm,$after,$(python3 -c "print(f'{($hwm - $before) * 1024 / $MEM_ROWS:.0f}')")" >>"$MEMORY"
  stop_server "$pid"
}
if ((!SKIP_MEMORY)); then
  measure_memory btsim start_btsim btsim-mem --compaction-interval 5s
  measure_memory cbtemulator start_emulator cbtemulator-mem
fi

# --- report ------------------------------------------------------------------
python3 - "$RESULTS" "$MEMORY" "$SKIP_MEMORY" >"$OUT/table.txt" <<'EOF'
import csv, statistics, sys
results, memory, skip_memory = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
rows = list(csv.DictReader(open(results)))

def series(phase, server, label):
    return [r for r in rows if r["phase"] == phase and r["server"] == server and r["label"] == label]

def med(values):
    return statistics.median(values) if values else float("nan")

def fmt_rate(values):
    if not values:
        return "-"
    return f"{med(values):,.0f} ({min(values):,.0f}..{max(values):,.0f})"

def table(title, phase, left, right, labels):
    out = [title]
    header = ["workload", "unit", f"{left} median (min..max)", f"{right} median (min..max)",
              "ratio", f"{left} p99 ms", f"{right} p99 ms", "errors"]
    lines = [header]
    for label in labels:
        a, b = series(phase, left, label), series(phase, right, label)
        ar = [float(r["rate"]) for r in a]
        br = [float(r["rate"]) for r in b]
        ratio = med(ar) / med(br) if ar and br and med(br) > 0 else float("nan")
        unit = (a or b)[0]["unit"]
        errors = sum(int(r["errors"]) for r in a + b)
        lines.append([label, unit, fmt_rate(ar), fmt_rate(br), f"{ratio:.2f}x",
                      f"{med([float(r['p99_us']) for r in a]) / 1e3:.3f}" if a else "-",
                      f"{med([float(r['p99_us']) for r in b]) / 1e3:.3f}" if b else "-",
                      str(errors)])
    widths = [max(len(l[i]) for l in lines) for i in range(len(header))]
    for l in lines:
        out.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))).rstrip())
    return "\n".join(out)

def labels(phase):
    seen = []
    for r in rows:
        if r["phase"] == phase and r["label"] not in seen:
            seen.append(r["label"])
    return seen

print(table("Speed: btsim serve (1 cluster) vs cbtemulator; ratio = btsim / cbtemulator of the medians",
            "speed", "btsim", "cbtemulator", labels("speed")))
if labels("replicated"):
    print()
    print(table("Replication: 3-cluster btsim vs single-cluster cbtemulator",
                "replicated", "btsim-3c", "cbtemulator", labels("replicated")))
if not skip_memory:
    print()
    print("Memory: (peak RSS - RSS before loading) / cells")
    mem = list(csv.DictReader(open(memory)))
    for m in mem:
        print(f"  {m['server']:<12} {int(m['cells']):>9,} cells  before {int(m['rss_before_kb'])/1024:7.1f} MiB"
              f"  peak {int(m['hwm_kb'])/1024:7.1f} MiB  after {int(m['rss_after_kb'])/1024:7.1f} MiB"
              f"  {m['bytes_per_cell']:>6} B/cell")
    by = {m["server"]: float(m["bytes_per_cell"]) for m in mem}
    if "btsim" in by and by.get("cbtemulator"):
        print(f"  ratio btsim/cbtemulator: {by['btsim'] / by['cbtemulator']:.3f}")
EOF
cat "$OUT/table.txt"
echo
echo "load after: $(uptime | sed 's/.*load average/load average/')"
if ((LOAD_FAILURES > 0)); then
  die "$LOAD_FAILURES load run(s) failed; see the warnings above"
fi
