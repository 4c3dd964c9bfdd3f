#!/usr/bin/env bash
# Simulator throughput: runs bench/sim-throughput.textproto (>= 2 million
# client operations) in virtual time and prints btsim's `sim:` line (client
# operations per wall second, the ratio of simulated to wall time, and how
# the wall time splits between the run and the checks). Target: >= 200,000
# ops/s on one core. Builds a Release binary in build-sim/ first, with
# link-time and profile-guided optimisation: an instrumented build in
# build-sim-gen/ runs the ten examples of scenarios/examples/ (not this
# benchmark) and build-sim/ is compiled from the profile they leave (PGO=0
# builds a plain Release build-sim/ instead; BUILD=0 skips building;
# BTSIM=path uses another binary). Extra arguments go to `btsim run` (e.g.
# --duration 20s for a quick look). After the run, bench/machine_probe.cc
# prints how fast the machine was (a random-key map insert, the first
# touch of fresh memory): the VM's hours differ by more than 10 %.
set -euo pipefail
cd "$(dirname "$0")/.."
BTSIM="${BTSIM:-build-sim/btsim}"
configure() {  # configure DIR PGO-MODE LTO(ON/OFF)
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DBTSIM_BENCH=OFF \
    -DBTSIM_PGO="$2" -DCMAKE_INTERPROCEDURAL_OPTIMIZATION="$3" >/dev/null
}
build() {  # build DIR [TARGET...]: the compiler's output goes to
  # DIR/build.log (GCC 12 warns of string copies it cannot bound at -O3,
  # falsely), shown when the build fails.
  cmake --build "$1" -j"$(nproc)" --target btsim "${@:2}" >"$1/build.log" 2>&1 ||
    { tail -50 "$1/build.log" >&2; exit 1; }
}
train() {  # profiles from a run of each example by build-sim-gen/
  find build-sim-gen -name '*.gcda' -delete
  for example in scenarios/examples/*.textproto; do
    build-sim-gen/btsim run "$example" >/dev/null ||
      { echo "training run failed: $example" >&2; exit 1; }
  done
  # Each object's profile goes where build-sim/ compiles the same object;
  # an object whose profile changed is compiled again.
  (cd build-sim-gen && find . -name '*.gcda' -print0) |
    while IFS= read -r -d '' f; do
      if ! cmp -s "build-sim-gen/$f" "build-sim/$f"; then
        mkdir -p "build-sim/$(dirname "$f")"
        cp "build-sim-gen/$f" "build-sim/$f"
        rm -f "build-sim/${f%.gcda}.o"
      fi
    done
  touch build-sim-gen/trained
}
if [[ "${BUILD:-1}" != 0 && "$BTSIM" == build-sim/btsim ]]; then
  if [[ "${PGO:-1}" != 0 ]]; then
    configure build-sim-gen generate ON
    build build-sim-gen
    # Only a changed binary trains again: some counts depend on the
    # addresses memory lands at (loops over the cache lines a row spans),
    # so each training run changes a few dozen profiles, each a compile.
    if [[ build-sim-gen/btsim -nt build-sim-gen/trained ]]; then train; fi
    configure build-sim use ON
  else
    configure build-sim off OFF
  fi
  build build-sim machine_probe
fi
echo "== sim-throughput (target: >= 200,000 client ops per wall second)"
# The run's own exit status (expectations) is reported, not fatal here.
set +e
out="$("$BTSIM" run bench/sim-throughput.textproto "$@")"
status=$?
set -e
grep -E '^(result|sim|fingerprint):' <<<"$out"
if [[ -x build-sim/bench/machine_probe ]]; then build-sim/bench/machine_probe; fi
exit "$status"
