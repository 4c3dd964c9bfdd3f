#!/usr/bin/env bash
# crash-test.sh [BTSIM] [CRASH_CLIENT] [KILLS] [WRITERS] [SNAPSHOT_BYTES]:
# the crash test of `btsim serve --data-dir` at length:
# tests/e2e/crash_e2e.sh with KILLS (25) SIGKILLs, WRITERS (3) writer
# processes of 4 threads each, and a snapshot whenever the journal passes
# SNAPSHOT_BYTES (64 KiB). Prints the
# counts docs/durability.md reports. Run by hand; never by ctest (e2e.crash
# runs the same with 5 kills).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BTSIM=${1:-$ROOT/build/btsim}
CLIENT=${2:-$ROOT/build/tests/e2e/crash_client}
exec bash "$ROOT/tests/e2e/crash_e2e.sh" "$BTSIM" "$CLIENT" "${3:-25}" "${4:-3}" "${5:-65536}"
