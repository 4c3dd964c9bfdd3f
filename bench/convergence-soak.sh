#!/usr/bin/env bash
# Convergence soak: the replication property tests of
# tests/replication/replicas_property_test.cc (every kind of mutation,
# schema changes, partitions, loss, down clusters, clusters removed and
# added, compaction; two, three and four clusters) over SEEDS seeds per
# cluster count instead of the 200 that ctest runs. Run by hand, never by
# ctest; it prints gtest's summary and fails on any divergence.
#
#   bench/convergence-soak.sh [SEEDS]      default 5000 (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${1:-5000}"
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "SEEDS must be a positive integer, not '$seeds'" >&2; exit 2; }
bin=build/tests/replication/replication_tests
[[ -x "$bin" ]] || ./dev.sh build
BTSIM_CONVERGENCE_SEEDS="$seeds" "$bin" --gtest_filter='ReplicasPropertyTest.*Converge'
