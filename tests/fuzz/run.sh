#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS [TARGET...]
#
# Runs each libFuzzer target of BUILD_DIR (a BTSIM_FUZZ build; `./dev.sh
# fuzz` makes one in build-fuzz/) for SECONDS, one after the other: every
# target with a seed corpus in tests/fuzz/corpus/, or the TARGETs named.
# Each starts from its checked-in corpus and writes the inputs it finds to
# BUILD_DIR/fuzz/corpus/<target>/ (never to the checked-in one), its log to
# BUILD_DIR/fuzz/logs/<target>.log and a crashing input to
# BUILD_DIR/fuzz/artifacts/<target>/. Prints one line per target (runs and
# libFuzzer's final cov: and ft:), and exits 1 naming the crashing inputs
# if any target crashed, aborted, leaked or hung.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for dir in "$here"/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

failed=()
for target in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz_$target
  if [[ ! -x $exe ]]; then
    echo "run.sh: no fuzz target $exe" >&2
    exit 2
  fi
  scratch=$build/fuzz/corpus/$target
  artifacts=$build/fuzz/artifacts/$target
  log=$build/fuzz/logs/$target.log
  mkdir -p "$scratch" "$artifacts" "$(dirname "$log")"
  # A single input that takes 30 s is a hang, and a finding.
  "$exe" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$scratch" "$here/corpus/$target" \
    >"$log" 2>&1
  rc=$?
  stats=$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1)
  printf '%-24s %s\n' "$target" "${stats:-(no stats: see $log)}"
  if [[ $rc -ne 0 ]]; then
    crash=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -1)
    echo "  FAILED (exit $rc): ${crash:-see $log}; log: $log"
    failed+=("$target")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzzing found crashes in: ${failed[*]}"
  exit 1
fi
