#!/usr/bin/env bash
# Simulator throughput: runs bench/sim-throughput.textproto (>= 2 million
# client operations) in virtual time and prints btsim's `sim:` line (client
# operations per wall second, the ratio of simulated to wall time, and how
# the wall time splits between the run and the checks). Target: >= 200,000
# ops/s on one core. Builds a Release binary in build-sim/ first (BUILD=0
# skips that; BTSIM=path uses another binary). Extra arguments go to
# `btsim run` (e.g. --duration 20s for a quick look).
set -euo pipefail
cd "$(dirname "$0")/.."
BTSIM="${BTSIM:-build-sim/btsim}"
if [[ "${BUILD:-1}" != 0 && "$BTSIM" == build-sim/btsim ]]; then
  cmake -S . -B build-sim -DCMAKE_BUILD_TYPE=Release -DBTSIM_BENCH=ON >/dev/null
  cmake --build build-sim -j"$(nproc)" --target btsim >/dev/null
fi
echo "== sim-throughput (target: >= 200,000 client ops per wall second)"
# The run's own exit status (expectations) is reported, not fatal here.
set +e
out="$("$BTSIM" run bench/sim-throughput.textproto "$@")"
status=$?
set -e
grep -E '^(result|sim|fingerprint):' <<<"$out"
exit "$status"
