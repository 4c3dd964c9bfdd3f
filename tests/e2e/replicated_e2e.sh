#!/usr/bin/env bash
# replicated_e2e.sh BTSIM_BINARY
#
# The replication issue's acceptance checks against a live server, with the
# real `cbt` CLI and `btsim ctl`:
#   btsim serve --clusters c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d
#               --replication-latency 3s
# - cbt listclusters shows three clusters;
# - a write through a profile routed to c1 is not readable through a profile
#   routed to c3 at once, and is after `cbt waitforreplication`;
# - after `btsim ctl cluster-down c1` the default profile keeps serving reads
#   and writes while a profile pinned to c1 gets UNAVAILABLE;
# - after `cluster-up`, c1 catches up.
# Transaction gating is checked through the gRPC API in tests/api (cbt has
# no transaction command). Exits 77 (skipped) when cbt is missing.
set -u -o pipefail

BTSIM=${1:?usage: replicated_e2e.sh BTSIM_BINARY}
source "$(dirname "$0")/lib.sh"
CBT=${CBT:-$(command -v cbt || true)}
if [[ -z $CBT ]]; then
  echo "SKIP: cbt not found (it comes with the Google Cloud SDK)"
  exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-repl.XXXXXX")
PID=""
cleanup() {
  [[ -n $PID ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BTSIM" serve --host 127.0.0.1 --port 0 \
  --clusters c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d \
  --replication-latency 3s >"$WORK/server.log" 2>&1 &
PID=$!
PORT=""
for _ in $(seq 150); do
  PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/server.log" | cut -d: -f2)
  [[ -n $PORT ]] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $PORT ]]; then
  echo "FAIL: btsim serve did not start; log:"; cat "$WORK/server.log"; exit 1
fi
echo "btsim serve (3 clusters, 3 s replication) on 127.0.0.1:$PORT"

cbt_() {
  BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT timeout 60 \
    "$CBT" -creds /dev/null -project p -instance i "$@" 2>&1
}
ctl() { timeout 20 "$BTSIM" ctl --target "127.0.0.1:$PORT" "$@" 2>&1; }

FAILS=0 CHECKS=0

out=$(cbt_ listclusters)
check "cbt listclusters shows c1, c2 and c3" \
  "$(grep -cE '^(c1|c2|c3)[[:space:]]' <<<"$out")" '^3$'

out=$(cbt_ createappprofile i to-c1 "pinned to c1" route-to=c1 \
  transactional-writes=true force=true)
check "createappprofile to-c1 (single-cluster, transactional)" "$out" \
  'Failed|rpc error' '!'
out=$(cbt_ createappprofile i to-c3 "pinned to c3" route-to=c3 force=true)
check "createappprofile to-c3 (single-cluster)" "$out" 'Failed|rpc error' '!'
out=$(cbt_ listappprofile i)
check "listappprofile shows both profiles" "$out" 'to-c3'

check "createtable t" "$(cbt_ createtable t families=cf)" 'rpc error' '!'
check "the table reaches every cluster (waitforreplication)" \
  "$(cbt_ waitforreplication t)" 'rpc error' '!'

check "set r1 through to-c1" "$(cbt_ set t r1 cf:a=v1 app-profile=to-c1)" \
  'rpc error' '!'
check "r1 is not yet readable through to-c3" \
  "$(cbt_ read t app-profile=to-c3)" '^r1$' '!'
check "waitforreplication returns" "$(cbt_ waitforreplication t)" \
  'rpc error' '!'
check "r1 is readable through to-c3 after replication" \
  "$(cbt_ read t app-profile=to-c3)" '"v1"'

check "ctl cluster-down c1" "$(ctl cluster-down c1)" 'btsim ctl:' '!'
check "the default profile still writes (fails over to c2)" \
  "$(cbt_ set t r2 cf:a=v2)" 'rpc error' '!'
check "... and reads it back" "$(cbt_ read t)" '"v2"'
# cbt retries UNAVAILABLE until its deadline, so give it 5 s: the write
# must not go through (the gRPC status itself is checked in tests/api).
out=$(BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT timeout 5 "$CBT" -creds /dev/null \
  -project p -instance i set t r3 cf:a=v3 app-profile=to-c1 2>&1; echo "[exit $?]")
check "a profile pinned to c1 cannot write while c1 is down" "$out" \
  '\[exit 0\]' '!'
check "ctl status shows c1 down" "$(ctl status)" 'c1.*DOWN'

check "ctl cluster-up c1" "$(ctl cluster-up c1)" 'btsim ctl:' '!'
check "waitforreplication after cluster-up" "$(cbt_ waitforreplication t)" \
  'rpc error' '!'
out=$(cbt_ read t app-profile=to-c1)
check "c1 caught up with the write made during its outage" "$out" '"v2"'
check "... and the refused write never happened" "$out" '"v3"' '!'

kill -TERM "$PID" && wait "$PID"
echo "btsim stopped (exit status $?)"
PID=""
if ((FAILS)); then
  echo "FAIL: $FAILS of $CHECKS checks failed"
  exit 1
fi
echo "PASS: $CHECKS checks"
