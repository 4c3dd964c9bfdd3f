#!/usr/bin/env bash
# Simulator throughput: plays bench/sim-throughput.textproto (2.1 million
# client operations) in virtual time and prints btsim's `sim:` line (client
# operations per wall second, simulated over wall time) for each run, then
# the median. Target: >= 200,000 client operations per wall second.
#
#   bench/sim-throughput.sh                 this tree, RUNS times
#   BEFORE=REV bench/sim-throughput.sh      also revision REV (e.g. d7134e9,
#                                           the last commit before the
#                                           cleanup of issue 39), built the
#                                           same way; the two binaries run
#                                           alternately, and the script
#                                           prints each one's median and
#                                           the ratio after / before
#
# Settings (environment): RUNS (3 per binary), PAUSE (seconds of rest
# before each run, 10), PGO=1 (profile-guided and link-time optimisation,
# trained on the examples; default: a plain Release build), BUILD=0
# (use the binaries already built). Extra arguments go to `btsim run`
# (e.g. --duration 20s for a quick look). Builds go to build-sim/ and
# build-sim-before/ (with its sources in build-sim-before/src/). Fails
# when two runs of one binary give different fingerprints.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs="${RUNS:-3}"
pause="${PAUSE:-10}"
before="${BEFORE:-}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2; }
[[ "$pause" =~ ^[0-9]+$ ]] || { echo "PAUSE must be whole seconds, not '$pause'" >&2; exit 2; }
if [[ -n "$before" ]] && ! git rev-parse --verify -q "$before^{commit}" >/dev/null; then
  echo "BEFORE: '$before' is not a commit of this repository" >&2
  exit 2
fi

build() {  # build SRC DIR: a Release btsim in DIR (absolute) from SRC
  local src=$1 dir=$2 flags=()
  if [[ "${PGO:-0}" != 0 ]]; then
    # An instrumented build runs the examples; each object's profile
    # (.gcda, beside the object) is copied to where DIR compiles the same
    # object. --undefined pulls in __gcov_dump for revisions that write
    # their profile themselves before a fast exit.
    cmake -S "$src" -B "$dir-gen" -DCMAKE_BUILD_TYPE=Release -DBTSIM_BENCH=OFF \
      -DCMAKE_CXX_FLAGS=-fprofile-generate \
      -DCMAKE_EXE_LINKER_FLAGS="-fprofile-generate -Wl,--undefined=__gcov_dump" \
      >/dev/null
    compile "$dir-gen"
    find "$dir-gen" -name '*.gcda' -delete
    for example in "$src"/scenarios/examples/*.textproto; do
      "$dir-gen/btsim" run "$example" >/dev/null ||
        { echo "training run failed: $example" >&2; exit 1; }
    done
    (cd "$dir-gen" && find . -name '*.gcda' -print0) |
      while IFS= read -r -d '' f; do
        mkdir -p "$dir/$(dirname "$f")"
        cp "$dir-gen/$f" "$dir/$f"
      done
    flags=(-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON
      "-DCMAKE_CXX_FLAGS=-fprofile-use -fprofile-partial-training -Wno-missing-profile")
  fi
  cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBTSIM_BENCH=OFF \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF -DCMAKE_CXX_FLAGS= "${flags[@]}" \
    >/dev/null
  # Profiles are not build dependencies: a PGO build compiles everything.
  compile "$dir" ${flags:+--clean-first}
}
compile() {  # compile DIR [ARGS...]: btsim only; the compiler's output goes
  # to DIR/build.log (GCC 12 warns falsely at -O3), shown when it fails.
  cmake --build "$1" -j"$(nproc)" --target btsim "${@:2}" >"$1/build.log" 2>&1 ||
    { tail -50 "$1/build.log" >&2; exit 1; }
}

names=(after) bins=("$root/build-sim/btsim")
if [[ -n "$before" ]]; then
  names=(before after) bins=("$root/build-sim-before/btsim" "${bins[@]}")
fi
if [[ "${BUILD:-1}" != 0 ]]; then
  if [[ -n "$before" ]]; then
    rm -rf build-sim-before/src
    mkdir -p build-sim-before/src
    git archive "$before" | tar -x -C build-sim-before/src
    build "$root/build-sim-before/src" "$root/build-sim-before"
  fi
  build "$root" "$root/build-sim"
fi

echo "== sim-throughput (target: >= 200,000 client ops per wall second;" \
  "$runs runs per binary, each after a ${pause} s pause${before:+, alternating})"
status=0
declare -A rates=() prints=()
for ((i = 1; i <= runs; ++i)); do
  for b in "${!names[@]}"; do
    name=${names[b]}
    sleep "$pause"
    # A run's own exit status (its expectations) is reported, not fatal.
    set +e
    out="$("${bins[b]}" run bench/sim-throughput.textproto "$@")"
    run_status=$?
    set -e
    ((run_status == 0)) || status=$run_status
    sim="$(grep -E '^sim:' <<<"$out" || true)"
    echo "run $i $name: ${sim:-no sim: line (exit status $run_status)}"
    rates[$name]+="$(sed -nE 's/.*\(([0-9]+) ops\/s\).*/\1/p' <<<"$sim") "
    prints[$name]+="$(grep -E '^fingerprint:' <<<"$out" || echo none)"$'\n'
  done
done
declare -A medians=()
for name in "${names[@]}"; do
  if [[ "$(sort -u <<<"${prints[$name]%$'\n'}" | wc -l)" != 1 ]]; then
    echo "error: the $name binary's runs gave different fingerprints" >&2
    status=1
  fi
  echo "$name: $(head -1 <<<"${prints[$name]}")"
  medians[$name]=$(tr ' ' '\n' <<<"${rates[$name]}" | grep -E '^[0-9]+$' |
    sort -n | awk '{ v[NR] = $1 } END {
      if (NR == 0) { print 0; exit }
      print NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }')
  echo "$name: median $(printf "%'d" "${medians[$name]}") client ops per wall second"
done
if [[ -n "$before" && "${medians[before]}" -gt 0 ]]; then
  awk -v a="${medians[after]}" -v b="${medians[before]}" \
    'BEGIN { printf "ratio after / before: %.3f\n", a / b }'
fi
exit "$status"
