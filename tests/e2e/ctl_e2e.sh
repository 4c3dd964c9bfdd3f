#!/usr/bin/env bash
# End-to-end test of `btsim ctl` against a real `btsim serve` process:
# every subcommand, the status table, and the exit codes (0 ok, 1 RPC error,
# 2 usage error).
#
# usage: ctl_e2e.sh BTSIM_BINARY
set -u

BTSIM=${1:-}
if [[ -z $BTSIM ]]; then echo "usage: $0 BTSIM_BINARY" >&2; exit 2; fi
if [[ ! -x $BTSIM ]]; then echo "FAIL: btsim binary not executable: $BTSIM" >&2; exit 1; fi

WORK=$(mktemp -d)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SERVER_PID=""
FAILURES=0
cleanup() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

start_btsim_serve "$WORK/serve.log" --compaction-interval 0 \
  --clusters c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d \
  --replication-latency 3s
TARGET=127.0.0.1:$PORT
INSTANCE=projects/p/instances/i

# ctl EXPECTED_EXIT ARGS...: runs `btsim ctl`, output in $OUT / $ERR.
ctl() {
  local expected=$1; shift
  "$BTSIM" ctl "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  OUT=$(cat "$WORK/out") ERR=$(cat "$WORK/err")
  if [[ $rc != "$expected" ]]; then
    fail "btsim ctl $* exited $rc, expected $expected; stdout: $OUT; stderr: $ERR"
  fi
}
expect_out() {  # expect_out PATTERN (grep -E on the last stdout)
  grep -Eq -- "$1" <<<"$OUT" || fail "stdout lacks /$1/: $OUT"
}
expect_err() {
  grep -Eq -- "$1" <<<"$ERR" || fail "stderr lacks /$1/: $ERR"
}

# No instance has been used yet.
ctl 0 --target "$TARGET" status
expect_out "no instances yet"
ctl 1 --target "$TARGET" cluster-down c1
expect_err "^btsim ctl: FAILED_PRECONDITION: "

# A named instance is created on first use.
ctl 0 --target "$TARGET" --instance "$INSTANCE" status
expect_out "^instance $INSTANCE$"
expect_out "^    c1  us-east1-b +up +1 node\(s\)  front end: admitted$"
expect_out "^    c1 -> c3  0  3s$"
expect_out "^    default  multi-cluster any$"

ctl 0 --target "$TARGET" cluster-down c1
expect_out "^cluster c1 is down \(every instance\)$"
ctl 0 --target "$TARGET" status
expect_out "^    c1  us-east1-b +DOWN +1 node\(s\)  front end: admitted$"
ctl 0 --target "$TARGET" --instance "$INSTANCE" cluster-up c1
expect_out "^cluster c1 is up in $INSTANCE$"

ctl 0 --target "$TARGET" partition c1 c3 --one-way
ctl 0 --target "$TARGET" latency c2 c3 750ms
ctl 0 status --target "$TARGET"  # options may follow the command
expect_out "^    c1  us-east1-b +up +1 node\(s\)  front end: admitted$"
expect_out "^    c1 -> c3  0  3s     CUT$"
expect_out "^    c3 -> c1  0  3s$"
expect_out "^    c2 -> c3  0  750ms$"
expect_out "^    c3 -> c2  0  750ms$"
ctl 0 --target "$TARGET" heal c1 c3
ctl 0 --target "$TARGET" latency c2 c3 0
ctl 0 --target "$TARGET" status
if grep -Eq "CUT|750ms" <<<"$OUT"; then fail "heal / latency reset not shown: $OUT"; fi

# Faults short of an outage, shown in the status and undone.
ctl 0 --target "$TARGET" --instance "$INSTANCE" cluster-down c2 --blackhole
expect_out "^cluster c2 is down \(black-holed\) in $INSTANCE$"
ctl 0 --target "$TARGET" slow c3 250ms
expect_out "^cluster c3 answers 250ms later \(every instance\)$"
ctl 0 --target "$TARGET" errors c1 0.25 --code INTERNAL --method ReadRows
expect_out "^cluster c1 fails 25% of ReadRows with INTERNAL"
ctl 0 --target "$TARGET" cut-clients c3 --replies-only
expect_out "^clients cut off from cluster c3"
ctl 0 --target "$TARGET" status
expect_out "^    c2  us-east1-c +DOWN \(black hole\)  1 node\(s\)  front end: admitted$"
expect_out "^    c1  errors 25% INTERNAL on ReadRows$"
expect_out "^    c3  slow \+250ms, clients cut \(REPLIES\)$"
ctl 0 --target "$TARGET" cluster-up c2
ctl 0 --target "$TARGET" slow c3 0
expect_out "^cluster c3 at full speed"
ctl 0 --target "$TARGET" errors c1 0
expect_out "^cluster c1 no longer fails requests"
ctl 0 --target "$TARGET" mend-clients c3
expect_out "^clients reach cluster c3 again"
ctl 0 --target "$TARGET" stall-replication c2
expect_out "^cluster c2 ships nothing \(every instance\)$"
ctl 0 --target "$TARGET" clock-skew c1 -1500ms
expect_out "^cluster c1's clock -1.5s \(every instance\)$"
ctl 0 --target "$TARGET" status
expect_out "^    c1  clock -1.5s$"
expect_out "^    c2  replication stalled$"
ctl 0 --target "$TARGET" resume-replication c2
ctl 0 --target "$TARGET" clock-skew c1 0
expect_out "^cluster c1's clock agrees again"
ctl 1 --target "$TARGET" clock-skew c1 2h
expect_err "^btsim ctl: INVALID_ARGUMENT: offset: "
ctl 0 --target "$TARGET" status
if grep -Eq "faults:|black hole" <<<"$OUT"; then fail "faults not undone: $OUT"; fi
ctl 1 --target "$TARGET" errors c1 2
expect_err "^btsim ctl: INVALID_ARGUMENT: fraction: must be in \[0, 1\]"
ctl 1 --target "$TARGET" errors c1 0.5 --code NOPE
expect_err "^btsim ctl: INVALID_ARGUMENT: code: 'NOPE'"
ctl 1 --target "$TARGET" errors c1 0.5 --method Get
expect_err "^btsim ctl: INVALID_ARGUMENT: method: 'Get'"
ctl 2 --target "$TARGET" slow c1 soon
expect_err "^btsim ctl: slow: "
ctl 2 --target "$TARGET" cut-clients c1 --requests-only --replies-only

# --target from the environment.
BIGTABLE_EMULATOR_HOST=$TARGET ctl 0 status
expect_out "^instance $INSTANCE$"

# RPC errors: exit 1.
ctl 1 --target "$TARGET" cluster-down c9
expect_err "^btsim ctl: NOT_FOUND: cluster 'c9'"
ctl 1 --target "$TARGET" partition c2 c2
expect_err "^btsim ctl: INVALID_ARGUMENT: "
ctl 1 --target "$TARGET" --instance bad/name status
expect_err "^btsim ctl: INVALID_ARGUMENT: instance: "
ctl 1 --target 127.0.0.1:1 status
expect_err "^btsim ctl: UNAVAILABLE: "

# Usage errors: exit 2.
ctl 2 --target "$TARGET" latency c1 c2 soon
expect_err "^btsim ctl: latency: "
ctl 2 --target "$TARGET" partition c1
ctl 2 --target "$TARGET"
env -u BIGTABLE_EMULATOR_HOST "$BTSIM" ctl status >/dev/null 2>&1
[[ $? == 2 ]] || fail "btsim ctl status without --target should exit 2"

# Help lists the subcommands, at both levels.
"$BTSIM" --help >"$WORK/help" 2>&1 || fail "btsim --help exited $?"
for sub in cluster-down cluster-up partition heal latency slow errors \
  cut-clients mend-clients stall-replication resume-replication clock-skew \
  status; do
  grep -q "^    $sub " "$WORK/help" || fail "btsim --help does not list ctl $sub"
done
"$BTSIM" ctl --help >"$WORK/help" 2>&1 || fail "btsim ctl --help exited $?"
grep -q "DURATION TEXT REQUIRED" "$WORK/help" || fail "btsim ctl --help lacks latency's DURATION"

if ((FAILURES > 0)); then echo "$FAILURES check(s) failed" >&2; exit 1; fi
echo "PASS: btsim ctl end to end"
