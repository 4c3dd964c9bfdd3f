#!/usr/bin/env bash
# demo.sh [BTSIM_BINARY]  (default: build/btsim under the repository root)
#
# A short self-demonstration: starts `btsim serve` on a free loopback port,
# talks to it with Google's `cbt` CLI exactly as one would talk to the official
# emulator (BIGTABLE_EMULATOR_HOST), and stops the server again. Exits non-zero
# if the server does not start or a cbt command that should succeed fails.
set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BTSIM=${1:-$REPO/build/btsim}
CBT=${CBT:-$(command -v cbt || true)}

if [[ ! -x $BTSIM ]]; then
  echo "error: btsim binary not found at $BTSIM (build it first: cmake --build build)" >&2
  exit 1
fi

# --- free loopback ports: nothing answers there. 20000..32767 stays below
# Linux's ephemeral range, where outgoing connections take their ports.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 12768))
    if port_free "$p"; then echo "$p"; return 0; fi
  done
  echo "error: no free port found" >&2; return 1
}
PORT=$(pick_port) || exit 1

# --- start the server; always stop it on exit
LOG=$(mktemp "${TMPDIR:-/tmp}/btsim-demo.XXXXXX.log")
SERVER_PID=""
stop_server() {
  trap '' PIPE   # a closed stdout must not abort the clean-up
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    echo
    echo "== stopping btsim (SIGTERM to pid $SERVER_PID)"
    kill -TERM "$SERVER_PID"
    for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  rm -f "$LOG"
}
trap stop_server EXIT
trap 'exit 1' HUP INT TERM PIPE

cat <<EOF
==============================================================================
 btsim demo: a Cloud Bigtable simulator that speaks the Bigtable gRPC API.
 Starting:  $BTSIM serve --host 127.0.0.1 --port <a free port>
 Then using Google's cbt CLI against it, as with the official emulator:
   BIGTABLE_EMULATOR_HOST=127.0.0.1:<port> cbt -project demo -instance demo ...
==============================================================================
EOF

# Start, then wait up to 15 s for the port to accept connections. If the
# server exits at once (e.g. the port was taken meanwhile), retry on another.
for attempt in 1 2 3; do
  "$BTSIM" serve --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
  SERVER_PID=$!
  for i in $(seq 151); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    port_free "$PORT" || break 2          # listening: done
    if ((i == 151)); then
      echo "error: btsim not listening on 127.0.0.1:$PORT after 15 s:" >&2; cat "$LOG" >&2; exit 1
    fi
    sleep 0.1
  done
  wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
  if ((attempt == 3)); then echo "error: btsim exited during start-up:" >&2; cat "$LOG" >&2; exit 1; fi
  PORT=$(pick_port) || exit 1
  echo "(btsim exited at start-up; retrying on port $PORT)"
done
echo "== btsim is up on 127.0.0.1:$PORT; its log says: $(head -n 1 "$LOG")"

if [[ -z $CBT || ! -x $CBT ]]; then
  echo
  echo "cbt not found (install the Google Cloud SDK 'cbt' component to see the"
  echo "full demo); the server started and will now be stopped."
  exit 0
fi

# cbt prints a command, runs it and fails the demo if it fails.
# `-creds /dev/null` keeps cbt from calling gcloud for credentials (slow and
# unused with BIGTABLE_EMULATOR_HOST; the file is not read).
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT
cbt() {
  echo
  echo "\$ cbt $*"
  if ! "$CBT" -project demo -instance demo -creds /dev/null "$@"; then
    echo "error: 'cbt $*' failed" >&2
    exit 1
  fi
}

# Timestamps are microseconds since the epoch, here 2024-01-01 00:00:00 UTC + n s.
T0=1704067200000000 T1=1704067201000000
export TZ=UTC

echo
echo "## Create a table with two column families (keep 2 versions / keep all)"
cbt createtable sensors "families=reading:maxversions=2,meta:never"
cbt ls
cbt ls sensors

echo
echo "## Write some cells (two versions of one reading)"
cbt set sensors dev#001 reading:temp=21.5@$T0 meta:room=kitchen@$T0
cbt set sensors dev#001 reading:temp=22.0@$T1
cbt set sensors dev#002 reading:temp=19.0@$T0 meta:room=garage@$T0
cbt set sensors dev#003 reading:temp=25.5@$T0 meta:room=attic@$T0

echo
echo "## Read it back"
cbt read sensors
cbt read sensors prefix=dev#00 cells-per-column=1 columns=reading:temp
cbt lookup sensors dev#001
cbt count sensors

echo
echo "## Clean up"
cbt deletetable sensors
cbt ls

echo
echo "demo finished: all cbt commands succeeded."
