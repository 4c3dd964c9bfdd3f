#!/usr/bin/env bash
# crash_e2e.sh BTSIM CRASH_CLIENT [KILLS] [WRITERS] [SNAPSHOT_BYTES]
#
# The crash test of `btsim serve --data-dir`: a three-cluster server with
# 300 ms replication links, WRITERS (2) crash_client processes of 4 threads
# each writing through single-cluster profiles of every cluster (MutateRow
# of new rows, ReadModifyWriteRow appends) and logging every acknowledged
# write; the server is killed with SIGKILL KILLS (5) times at random moments
# and restarted on the same directory and port each time. Then the writers
# stop, the server is killed once more, restarted, and every cluster is
# read through its own single-cluster profile until replication has
# drained: every acknowledged write must be on every cluster, no append
# applied twice. The server takes a snapshot whenever its journal passes
# SNAPSHOT_BYTES (64 KiB), so kills land before, during and after
# snapshots. bench/crash-test.sh runs it with more kills.
set -u -o pipefail

BTSIM=${1:?usage: crash_e2e.sh BTSIM CRASH_CLIENT [KILLS] [WRITERS]}
CLIENT=${2:?usage: crash_e2e.sh BTSIM CRASH_CLIENT [KILLS] [WRITERS]}
KILLS=${3:-5}
WRITERS=${4:-2}
SNAPSHOT_BYTES=${5:-65536}
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-crash.XXXXXX")
SERVER=""
WRITER_PIDS=()
cleanup() {
  touch "$WORK/stop"
  for p in "${WRITER_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  [[ -n $SERVER ]] && kill -KILL "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  tail -n 20 "$WORK/server.log" >&2
  exit 1
}

mkdir "$WORK/data"
cat >"$WORK/config.textproto" <<'CONFIG'
clusters { id: "c1" zone: "us-east1-b" }
clusters { id: "c2" zone: "us-east1-c" }
clusters { id: "c3" zone: "europe-west1-d" }
app_profiles {
  id: "to-c1"
  single_cluster { cluster_id: "c1" allow_transactional_writes: true }
}
app_profiles { id: "to-c2" single_cluster { cluster_id: "c2" } }
app_profiles { id: "to-c3" single_cluster { cluster_id: "c3" } }
CONFIG

PORT=$(pick_port) || exit 1
TARGET=127.0.0.1:$PORT
start_server() {
  "$BTSIM" serve --port "$PORT" --config "$WORK/config.textproto" \
    --replication-latency 300ms --data-dir "$WORK/data" \
    --snapshot-journal-bytes "$SNAPSHOT_BYTES" >>"$WORK/server.log" 2>&1 &
  SERVER=$!
  wait_listening "$SERVER" "$PORT" || fail "btsim serve did not restart"
}

start_server
"$CLIENT" setup "$TARGET" || fail "setup"
for w in $(seq "$WRITERS"); do
  "$CLIENT" write "$TARGET" "$WORK/ack-$w.log" "w$w" 4 "$WORK/stop" \
    >"$WORK/writer-$w.out" 2>&1 &
  WRITER_PIDS+=($!)
done
for k in $(seq "$KILLS"); do
  sleep "0.$((3 + RANDOM % 7))$((RANDOM % 10))"
  kill -KILL "$SERVER"
  wait "$SERVER" 2>/dev/null
  start_server
done
sleep 0.5
touch "$WORK/stop"
for p in "${WRITER_PIDS[@]}"; do wait "$p"; done
WRITER_PIDS=()
cat "$WORK"/writer-*.out
# Once more, with the last writes' replication still under way.
kill -KILL "$SERVER"
wait "$SERVER" 2>/dev/null
start_server
torn=$(grep -c "dropped a torn final record" "$WORK/server.log")
from_snapshot=$(grep -c "loaded snapshot" "$WORK/server.log")
cat "$WORK"/ack-*.log >"$WORK/acks.log"
for profile in to-c1 to-c2 to-c3; do
  ok=""
  for _ in $(seq 60); do
    if "$CLIENT" verify "$TARGET" "$WORK/acks.log" "$profile" \
      >"$WORK/verify.out" 2>&1; then
      ok=1
      break
    fi
    sleep 0.5
  done
  cat "$WORK/verify.out"
  [[ -n $ok ]] || fail "acknowledged writes missing on $profile's cluster"
done
echo "ok: $((KILLS + 1)) kills ($torn restarts dropped a torn final record," \
  "$from_snapshot started from a snapshot)," \
  "$(grep -c '^[MA] ' "$WORK/acks.log") acknowledged writes on each of 3 clusters, 0 lost"
