#!/usr/bin/env bash
# Runs the benchmarks by hand (never part of ctest). Build first: ./dev.sh build
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== bytes per 48-byte cell (target: <= 150)"
build/bench/cell_memory "${CELLS:-1000000}"
echo "== engine throughput"
build/bench/engine_bench --benchmark_min_time=0.5 "$@"
echo "== simulator building blocks (scheduler, filters, replication apply)"
build/bench/sim_bench --benchmark_min_time=0.5 "$@"
if [[ "${SIM:-1}" != 0 ]]; then
  # The virtual-time throughput scenario (Release build in build-sim/).
  bench/sim-throughput.sh
fi
