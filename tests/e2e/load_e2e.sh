#!/usr/bin/env bash
# End-to-end smoke test of `btsim load`: every workload against a real
# `btsim serve` with zero errors (text, CSV and JSON output), one workload
# against cbtemulator when it is installed, and the usage errors (exit 2,
# naming the flag). About 5 s.
#
# usage: load_e2e.sh BTSIM_BINARY
set -u

BTSIM=${1:-}
if [[ -z $BTSIM ]]; then echo "usage: $0 BTSIM_BINARY" >&2; exit 2; fi
if [[ ! -x $BTSIM ]]; then echo "FAIL: btsim binary not executable: $BTSIM" >&2; exit 1; fi
CBTEMULATOR=${CBTEMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}

WORK=$(mktemp -d)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SERVER_PID=""
EMULATOR_PID=""
FAILURES=0
cleanup() {
  for pid in $SERVER_PID $EMULATOR_PID; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# A free TCP port on loopback (bound and released, then used at once).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_btsim_serve "$WORK/serve.log" --compaction-interval 0
TARGET=127.0.0.1:$PORT

LABELS="scan/1t point_read/1t check_and_mutate/1t rmw_hot/1t mutate_row/1t mutate_rows/1t mutate_rows/4t"

# Every workload, human-readable lines.
"$BTSIM" load --target "$TARGET" --workload all --ops 40 --rows 500 \
  >"$WORK/out" 2>"$WORK/err"
rc=$?
[[ $rc == 0 ]] || fail "btsim load --workload all exited $rc; stderr: $(cat "$WORK/err")"
for label in $LABELS; do
  grep -Eq "^$label +[0-9]+ (rows|ops)/s +p50 +[0-9.]+ ms +p99 +[0-9.]+ ms +errors 0 " "$WORK/out" ||
    fail "no error-free line for $label in: $(cat "$WORK/out")"
done
grep -q "loaded 500 rows" "$WORK/err" || fail "no 'loaded 500 rows' note: $(cat "$WORK/err")"

# CSV: a header and one line per workload; the table is kept, then reused.
"$BTSIM" load --target "$TARGET" --workload mutate_rows --threads 2 --ops 10 \
  --batch 50 --csv --keep-table --table kept >"$WORK/csv" 2>"$WORK/err" ||
  fail "btsim load --csv exited $?; stderr: $(cat "$WORK/err")"
head -1 "$WORK/csv" | grep -q "^workload,label,threads,requests,items,unit,seconds,rate,p50_us,p99_us,errors$" ||
  fail "bad CSV header: $(cat "$WORK/csv")"
grep -Eq "^mutate_rows,mutate_rows/2t,2,10,500,rows/s,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,0$" "$WORK/csv" ||
  fail "bad CSV line: $(cat "$WORK/csv")"
# The kept table has the 500 rows (scan expects at least --rows).
"$BTSIM" load --target "$TARGET" --workload scan --ops 1 --rows 500 --table kept \
  --json >"$WORK/json" 2>"$WORK/err" || fail "scan of a kept table exited $?: $(cat "$WORK/err")"
grep -q '^{"workload":"scan","label":"scan/1t","unit":"rows/s",.*"errors":0,"first_error":""}$' "$WORK/json" ||
  fail "bad JSON line: $(cat "$WORK/json")"
# One btsim.report.v1.LoadResult: every field there, counts as JSON numbers.
python3 - "$WORK/json" <<'EOF' || fail "JSON line does not match the schema: $(cat "$WORK/json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert list(r) == ["workload", "label", "unit", "threads", "requests", "items",
                   "seconds", "rate", "p50_us", "p99_us", "errors",
                   "first_error"], list(r)
assert (r["threads"], r["requests"], r["errors"]) == (1, 1, 0), r
assert isinstance(r["items"], int) and r["items"] >= 500, r
assert r["seconds"] > 0 and r["rate"] > 0 and r["p99_us"] >= r["p50_us"] > 0, r
EOF

# Open loop: 40 MutateRow at 100 per second on 2 threads take about 0.4 s
# (the last pair is due at 0.38 s), at about 100 per second, not as fast
# as the server answers.
"$BTSIM" load --target "$TARGET" --workload mutate_row --ops 40 --threads 2 \
  --rate 100 --json --keep-table --table kept >"$WORK/rate" 2>"$WORK/err" ||
  fail "btsim load --rate exited $?; stderr: $(cat "$WORK/err")"
python3 - "$WORK/rate" <<'EOF' || fail "--rate 100 did not pace the requests: $(cat "$WORK/rate")"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[0])
assert r["requests"] == 40 and r["errors"] == 0, r
assert 0.37 <= r["seconds"] <= 1.5, r
assert 25 <= r["rate"] <= 106, r
EOF

# --write-keys: the writers overwrite 7 rows each (mutate_row's and
# mutate_rows' key spaces differ), so a scan finds exactly 14.
"$BTSIM" load --target "$TARGET" --workload mutate_row --ops 40 --write-keys 7 \
  --keep-table --table bounded >"$WORK/out" 2>"$WORK/err" ||
  fail "mutate_row --write-keys exited $?: $(cat "$WORK/err")"
"$BTSIM" load --target "$TARGET" --workload mutate_rows --ops 2 --batch 50 \
  --write-keys 7 --keep-table --table bounded >"$WORK/out" 2>"$WORK/err" ||
  fail "mutate_rows --write-keys exited $?: $(cat "$WORK/err")"
"$BTSIM" load --target "$TARGET" --workload scan --ops 1 --rows 14 --skip-load \
  --keep-table --table bounded --json >"$WORK/json" 2>"$WORK/err" ||
  fail "scan after --write-keys exited $?: $(cat "$WORK/err")"
grep -q '"items":14,' "$WORK/json" ||
  fail "--write-keys 7 did not leave 14 rows: $(cat "$WORK/json")"

# A duration instead of a count.
"$BTSIM" load --target "$TARGET" --workload rmw_hot --duration 200ms >"$WORK/out" 2>"$WORK/err" ||
  fail "btsim load --duration 200ms exited $?: $(cat "$WORK/err")"
grep -Eq "^rmw_hot/1t .* errors 0 " "$WORK/out" || fail "rmw_hot with --duration: $(cat "$WORK/out")"

# Against the official emulator, when installed.
if [[ -x $CBTEMULATOR ]]; then
  EPORT=$(free_port)
  "$CBTEMULATOR" -host 127.0.0.1 -port "$EPORT" >"$WORK/emulator.log" 2>&1 &
  EMULATOR_PID=$!
  "$BTSIM" load --target "127.0.0.1:$EPORT" --workload mutate_rows --ops 20 \
    >"$WORK/out" 2>"$WORK/err" || fail "btsim load against cbtemulator exited $?: $(cat "$WORK/err")"
  grep -Eq "^mutate_rows/1t .* errors 0 " "$WORK/out" ||
    fail "mutate_rows against cbtemulator: $(cat "$WORK/out")"
else
  echo "note: $CBTEMULATOR not found; skipping the cbtemulator part"
fi

# Errors of requests: exit 1 with the first message (an app profile that
# does not exist).
"$BTSIM" load --target "$TARGET" --workload mutate_row --ops 3 --app-profile nope \
  >"$WORK/out" 2>"$WORK/err"
rc=$?
if [[ $rc == 1 ]]; then
  grep -Eq "^mutate_row/1t .* errors 3 " "$WORK/out" || fail "errors not counted: $(cat "$WORK/out")"
  grep -q "first: " "$WORK/err" || fail "first error not printed: $(cat "$WORK/err")"
else
  fail "btsim load with an unknown app profile exited $rc, expected 1"
fi

# Usage errors: exit 2, naming the flag.
usage() {  # usage PATTERN ARGS...
  local pattern=$1; shift
  "$BTSIM" load "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  [[ $rc == 2 ]] || fail "btsim load $* exited $rc, expected 2"
  grep -q -- "$pattern" "$WORK/err" "$WORK/out" || fail "btsim load $*: message lacks '$pattern': $(cat "$WORK/err")"
}
usage "--target" --target nonsense --ops 1
usage "--target" --target 127.0.0.1:99999 --ops 1
usage "--workload" --target "$TARGET" --workload nosuch --ops 1
usage "--duration" --target "$TARGET" --duration soon
usage "--threads" --target "$TARGET" --threads 0

if ((FAILURES > 0)); then echo "$FAILURES check(s) failed" >&2; exit 1; fi
echo "PASS: btsim load end to end"
