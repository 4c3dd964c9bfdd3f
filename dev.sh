#!/usr/bin/env bash
# One entry point for the README's Quick start and for CI.
#   ./dev.sh demo      install what is missing, build, run the flagship
#                      scenario (example 1) and print its summary
#   ./dev.sh serve-demo  build, then `btsim serve` driven by a cbt session
#   ./dev.sh app-demo  install what is missing (node and npm too), build, and
#                      play a zone outage against a Node.js application
#                      (examples/app-under-outage)
#   ./dev.sh test      install what is missing, build, run the whole suite
#   ./dev.sh build     install what is missing and build
#   ./dev.sh sanitize  build with ASan + UBSan in build-asan/ and run the suite
#   ./dev.sh fuzz [SECONDS] [TARGET...]
#                      build the libFuzzer targets with clang in build-fuzz/
#                      and run each (or the named ones) for SECONDS (60) from
#                      tests/fuzz/corpus/<target>/ (docs/fuzzing.md)
set -euo pipefail
cd "$(dirname "$0")"

jobs=2

build() {  # build DIR [extra cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

case "${1:-}" in
  demo)
    scripts/install-deps.sh
    build build
    build/btsim run scenarios/examples/01-zone-outage-multi-cluster.textproto \
      --out build/example-01
    echo "(outputs in build/example-01/: report.json, history.jsonl," \
      "metrics.om, report.html)"
    ;;
  serve-demo)
    scripts/install-deps.sh
    build build
    scripts/demo.sh build/btsim
    ;;
  app-demo)
    scripts/install-deps.sh --app
    build build
    examples/app-under-outage/run.sh build/btsim
    ;;
  test)
    scripts/install-deps.sh --test
    build build
    ctest --test-dir build -j"$jobs" --output-on-failure
    ;;
  build)
    scripts/install-deps.sh
    build build
    ;;
  sanitize)
    scripts/install-deps.sh --test
    build build-asan -DBTSIM_SANITIZE=ON -DBTSIM_BENCH=OFF
    ctest --test-dir build-asan -j"$jobs" --output-on-failure
    ;;
  fuzz)
    shift
    seconds=${1:-60}
    [[ $# -gt 0 ]] && shift
    scripts/install-deps.sh --fuzz
    cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=clang++-14 -DBTSIM_FUZZ=ON -DBTSIM_BENCH=OFF \
      $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) \
      >/dev/null
    cmake --build build-fuzz -j"$jobs" --target fuzz_targets
    tests/fuzz/run.sh build-fuzz "$seconds" "$@"
    ;;
  *)
    echo "usage: $0 demo|serve-demo|app-demo|test|build|sanitize|fuzz" >&2
    exit 2
    ;;
esac
