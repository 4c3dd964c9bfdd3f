#!/usr/bin/env bash
# End-to-end tests with the Node.js client (@google-cloud/bigtable from npm)
# against a three-cluster `btsim serve`: CheckAndMutateRow /
# ReadModifyWriteRow gating through different app profiles
# (node/gating.test.mjs), failover from a black-holed cluster learned by
# the routing front end (node/failover.test.mjs), backups made on a
# cluster, listed, updated, restored and deleted (node/backups.test.mjs),
# deletion protection
# through the generated table-admin client, compared with cbtemulator's
# answers when it is installed (node/admin.mjs), and a scenario played by
# `btsim serve --scenario` judging each named client's calls
# (node/recording.test.mjs).
#
# Installs the pinned client (node/package-lock.json) into node/node_modules
# with `npm ci`. Exits 77 (skipped under CTest) when node or npm is missing or
# the package cannot be installed (e.g. no access to the npm registry).
#
# usage: node_e2e.sh BTSIM_BINARY
set -u

BTSIM=${1:-}
if [[ -z $BTSIM ]]; then echo "usage: $0 BTSIM_BINARY" >&2; exit 2; fi
if [[ ! -x $BTSIM ]]; then echo "FAIL: btsim binary not executable: $BTSIM" >&2; exit 1; fi
command -v node >/dev/null 2>&1 || { echo "SKIP: node not found"; exit 77; }
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm not found"; exit 77; }

NODE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/node" && pwd)
WORK=$(mktemp -d)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SERVER_PID=""
cleanup() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE

# The client is pure JavaScript as far as this test is concerned; install
# scripts (a native CRC32C accelerator, protobufjs's postinstall) are not needed.
# A network failure (no registry access) skips the test; any other npm ci
# failure (e.g. package.json and package-lock.json out of sync) fails it.
if ! (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts) \
    >"$WORK/npm.log" 2>&1; then
  if grep -Eq 'E(CONNREFUSED|CONNRESET|NOTFOUND|AI_AGAIN|TIMEDOUT|NETUNREACH|HOSTUNREACH)|ETIMEDOUT|network|proxy' "$WORK/npm.log"; then
    echo "SKIP: could not install @google-cloud/bigtable from npm (registry unreachable?):"
    tail -n 20 "$WORK/npm.log"
    exit 77
  fi
  echo "FAIL: npm ci in $NODE_DIR failed:" >&2
  cat "$WORK/npm.log" >&2
  exit 1
fi

start_btsim_serve "$WORK/serve.log" --host 127.0.0.1 --metrics-port 0 \
  --clusters c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d \
  --replication-latency 200ms
METRICS_PORT=$(grep -o 'metrics on http://127.0.0.1:[0-9]*' "$WORK/serve.log" |
  sed 's/.*://')

# METADATA_SERVER_DETECTION=none: no probe for a GCE metadata server.
(cd "$NODE_DIR" && BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT \
   METADATA_SERVER_DETECTION=none BTSIM=$BTSIM \
   METRICS_URL=http://127.0.0.1:$METRICS_PORT/metrics \
   node --test gating.test.mjs failover.test.mjs backups.test.mjs)
rc=$?
if [[ $rc != 0 ]]; then
  echo "FAIL: node --test exited $rc; btsim serve log:" >&2
  cat "$WORK/serve.log" >&2
  exit $rc
fi

# Deletion protection through the generated table-admin client, on btsim
# and (when installed) on cbtemulator: the same transcript.
run_admin() {  # run_admin HOST:PORT OUT
  (cd "$NODE_DIR" && BIGTABLE_EMULATOR_HOST=$1 METADATA_SERVER_DETECTION=none \
     timeout 120 node admin.mjs admin) >"$2" 2>&1
}
if ! run_admin "127.0.0.1:$PORT" "$WORK/admin.btsim"; then
  echo "FAIL: admin.mjs against btsim:" >&2
  cat "$WORK/admin.btsim" >&2
  exit 1
fi
cat "$WORK/admin.btsim"
CBTEMULATOR=${CBTEMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}
if [[ -x $CBTEMULATOR ]]; then
  start_cbtemulator "$WORK/emulator.log" || exit 1
  run_admin "127.0.0.1:$EMU_PORT" "$WORK/admin.cbtemulator"
  kill "$EMU_PID" 2>/dev/null
  wait "$EMU_PID" 2>/dev/null
  if ! diff "$WORK/admin.cbtemulator" "$WORK/admin.btsim"; then
    echo "FAIL: admin.mjs: cbtemulator (<) and btsim (>) differ" >&2
    exit 1
  fi
  echo "admin.mjs: the same transcript on cbtemulator"
else
  echo "(cbtemulator not found: admin.mjs ran on btsim only)"
fi
kill "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""

# Recording: a scenario played against the client's traffic.
start_btsim_serve "$WORK/scenario.log" --host 127.0.0.1 \
  --scenario "$NODE_DIR/recording.textproto" --wait-for-start \
  --out "$WORK/recording"
(cd "$NODE_DIR" && BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT \
   SCENARIO_HOST=127.0.0.1:$PORT SCENARIO_OUT=$WORK/recording \
   METADATA_SERVER_DETECTION=none BTSIM=$BTSIM \
   node --test recording.test.mjs)
rc=$?
code=0
wait "$SERVER_PID" || code=$?
SERVER_PID=""
if [[ $rc != 0 || $code != 0 ]]; then
  echo "FAIL: node --test exited $rc, the scenario server $code; its log:" >&2
  cat "$WORK/scenario.log" >&2
  exit 1
fi
exit 0
