#!/usr/bin/env bash
# durable_e2e.sh BTSIM_BINARY
#
# `btsim serve --data-dir` across restarts, driven with `cbt` and `btsim ctl`
# on three clusters (c1, c2, c3; 1 s replication links):
# - a table with families and a GC rule, an app profile, rows; c2 partitioned
#   from c1, rows written on c1 (a replication backlog to c2); the server is
#   stopped with SIGTERM, then (after more writes) killed with SIGKILL;
# - after each restart `cbt` sees the table, its GC rule, the profile and
#   the rows, and after the last one the backlog drains to c2 (faults are
#   not persisted: the partition is gone);
# - a second server on the directory is refused (exit 2), naming it
#   (serve_errors_e2e.sh checks the other bad directories).
# Exits 77 (skipped) when cbt is missing.
set -u -o pipefail

BTSIM=${1:?usage: durable_e2e.sh BTSIM_BINARY}
CBT=${CBT:-$(command -v cbt || true)}
if [[ -z $CBT ]]; then
  echo "SKIP: cbt not found (it comes with the Google Cloud SDK)"
  exit 77
fi
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-durable.XXXXXX")
SERVER_PID=""
cleanup() {
  [[ -n $SERVER_PID ]] && kill -KILL "$SERVER_PID" 2>/dev/null &&
    wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$WORK/data"
serve() {
  start_btsim_serve "$WORK/server.log" \
    --clusters c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d \
    --replication-latency 1s --data-dir "$WORK/data"
}
cbt_() {
  BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT timeout 60 \
    "$CBT" -creds /dev/null -project p -instance i "$@" 2>&1
}
ctl() { timeout 20 "$BTSIM" ctl --target "127.0.0.1:$PORT" "$@" 2>&1; }

FAILS=0 CHECKS=0

serve
check "createtable t" "$(cbt_ createtable t families=cf,keep)" 'rpc error' '!'
check "setgcpolicy keep maxversions=2" \
  "$(cbt_ setgcpolicy t keep maxversions=2)" 'rpc error' '!'
check "createappprofile to-c2" \
  "$(cbt_ createappprofile i to-c2 "pinned to c2" route-to=c2 force=true)" \
  'Failed|rpc error' '!'
check "set r1" "$(cbt_ set t r1 cf:a=one)" 'rpc error' '!'
check "waitforreplication" "$(cbt_ waitforreplication t)" 'rpc error' '!'

check "ctl partition c1 c2" "$(ctl partition c1 c2)" 'btsim ctl:' '!'
check "set r2 on c1 (not replicated to c2)" "$(cbt_ set t r2 cf:a=two)" \
  'rpc error' '!'
sleep 2
check "r2 is not on c2 yet" "$(cbt_ read t app-profile=to-c2)" '"two"' '!'

kill -TERM "$SERVER_PID" && wait "$SERVER_PID"
SERVER_PID=""
serve
check "restart: the server replayed its journal" "$(cat "$WORK/server.log")" \
  'replayed [1-9][0-9]* records of 1 instance'
check "restart: cbt ls shows the table" "$(cbt_ ls)" '^t$'
check "restart: the GC rule is kept" "$(cbt_ ls t)" 'versions\(\) > 2'
check "restart: the profile is kept" "$(cbt_ listappprofile i)" 'to-c2'
out=$(cbt_ read t)
check "restart: cbt read shows r1" "$out" '"one"'
check "restart: cbt read shows r2" "$out" '"two"'

check "set r3 after the restart" "$(cbt_ set t r3 cf:a=three)" 'rpc error' '!'
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
serve
out=$(cbt_ read t)
check "kill -9: cbt read shows r3" "$out" '"three"'
check "the backlog drains to c2 after the restart" \
  "$(cbt_ waitforreplication t)" 'rpc error' '!'
out=$(cbt_ read t app-profile=to-c2)
check "c2 has r2 and r3" "$(grep -cE '"(two|three)"' <<<"$out")" '^2$'

# A second server on the same directory is refused while the first runs.
code=0
timeout 20 "$BTSIM" serve --port 0 --data-dir "$WORK/data" >"$WORK/out" \
  2>"$WORK/err" || code=$?
check "a locked --data-dir exits 2" "$code" '^2$'
check "... naming it" "$(cat "$WORK/err")" \
  "$WORK/data: locked by another running btsim"
kill -TERM "$SERVER_PID" && wait "$SERVER_PID"
SERVER_PID=""

if ((FAILS)); then
  echo "FAIL: $FAILS of $CHECKS checks failed"
  exit 1
fi
echo "PASS: $CHECKS checks"
