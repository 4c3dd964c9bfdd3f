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
# --duration 20s for a quick look). The scenario runs RUNS times (3), each
# after a pause of PAUSE seconds (20: a new process's memory then costs
# what it costs a first run, see docs/PERFORMANCE.md); the script prints
# each run's `sim:` line, the median and range, and fails when the runs'
# fingerprints differ. Then bench/machine_probe.cc prints how fast the
# machine was (a random-key map insert, the first touch of fresh memory):
# the VM's hours differ by more than 10 %.
set -euo pipefail
cd "$(dirname "$0")/.."
BTSIM="${BTSIM:-build-sim/btsim}"
runs="${RUNS:-3}"
pause="${PAUSE:-20}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2; }
[[ "$pause" =~ ^[0-9]+$ ]] || { echo "PAUSE must be whole seconds, not '$pause'" >&2; exit 2; }
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
echo "== sim-throughput (target: >= 200,000 client ops per wall second;" \
  "median of $runs runs, each after a ${pause} s pause)"
status=0
results=() fingerprints=() rates=()
for ((i = 1; i <= runs; ++i)); do
  sleep "$pause"
  # A run's own exit status (expectations) is reported, not fatal here.
  set +e
  out="$("$BTSIM" run bench/sim-throughput.textproto "$@")"
  run_status=$?
  set -e
  ((run_status == 0)) || status=$run_status
  sim="$(grep -E '^sim:' <<<"$out" || true)"
  echo "run $i: ${sim:-no sim: line (exit status $run_status)}"
  results+=("$(grep -E '^result:' <<<"$out" || echo "result: none")")
  fingerprints+=("$(grep -E '^fingerprint:' <<<"$out" || echo "fingerprint: none")")
  rates+=("$(sed -nE 's/.*\(([0-9]+) ops\/s\).*/\1/p' <<<"$sim")")
done
# One line each when every run agrees, else each run's.
for lines in results fingerprints; do
  declare -n list=$lines
  if [[ "$(printf '%s\n' "${list[@]}" | sort -u | wc -l)" == 1 ]]; then
    echo "${list[0]}"
  else
    for ((i = 0; i < runs; ++i)); do echo "run $((i + 1)): ${list[i]}"; done
    # The same scenario and seed must give the same fingerprint.
    if [[ $lines == fingerprints ]]; then
      echo "error: the runs' fingerprints differ" >&2
      status=1
    fi
  fi
done
printf '%s\n' "${rates[@]}" | grep -E '^[0-9]+$' | sort -n | awk '
  { v[NR] = $1 }
  END {
    if (NR == 0) exit
    m = NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)
    printf "median: %d client ops per wall second (%d run%s, %d..%d)\n",
      m, NR, NR == 1 ? "" : "s", v[1], v[NR]
  }'
if [[ -x build-sim/bench/machine_probe ]]; then
  # After the same pause: the last run's freed memory would read as fast.
  sleep "$pause"
  build-sim/bench/machine_probe
fi
exit "$status"
