#!/usr/bin/env bash
# core_purity.sh [--selftest] ROOT
#
# Fails when the deterministic core (sim/ without sim/asio/, cluster/,
# replication/, appprofile/, instance/, scenarios/) reads a wall clock or OS
# randomness,
# sleeps, uses std:: random distributions, includes gRPC, asio or
# prometheus-cpp, or uses an unordered_* container (whose iteration order
# must never decide anything: a line may opt out with the comment
# "btsim: order-independent"). See DESIGN.md, "Time, randomness,
# determinism". Whole-line comments are not scanned. --selftest plants a violation in a scratch copy and checks
# that it is caught.
set -u -o pipefail

forbidden='system_clock|steady_clock|high_resolution_clock|gettimeofday|clock_gettime|[^_a-zA-Z]time\(|std::time\b|localtime|random_device|std::rand\b|[^_a-zA-Z]s?rand\(|sleep_for|sleep_until|usleep|nanosleep|#include <random>|_distribution<|mt19937|minstd_rand|#include <grpc|#include <boost|asio::|prometheus|unordered_(map|set|multimap|multiset)'

scan() {  # scan ROOT: prints violations, returns 1 if any
  local root=$1 found=0 dirs=()
  for d in sim cluster replication appprofile instance scenarios; do
    [[ -d $root/$d ]] && dirs+=("$root/$d")
  done
  while IFS= read -r line; do
    [[ $line == *"btsim: order-independent"* ]] && continue
    echo "core purity violation: $line"
    found=1
  done < <(grep -rnE --include='*.h' --include='*.cc' "$forbidden" "${dirs[@]}" \
             | grep -v "^$root/sim/asio/" \
             | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//')
  return $found
}

if [[ ${1:-} == --selftest ]]; then
  root=$2
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/cluster" "$scratch/sim/asio"
  echo 'auto t = std::chrono::steady_clock::now();' >"$scratch/sim/asio/ok.cc"
  if ! scan "$scratch" >/dev/null; then
    echo "FAIL: sim/asio must be exempt"; exit 1
  fi
  for bad in 'auto t = std::chrono::system_clock::now();' \
             'std::random_device rd;' \
             'std::unordered_map<int, int> m;' \
             '#include <grpcpp/grpcpp.h>' \
             'std::this_thread::sleep_for(d);'; do
    echo "$bad" >"$scratch/cluster/bad.cc"
    if scan "$scratch" >/dev/null; then
      echo "FAIL: not caught: $bad"; exit 1
    fi
  done
  echo 'std::unordered_map<int, int> m;  // btsim: order-independent' \
    >"$scratch/cluster/bad.cc"
  if ! scan "$scratch" >/dev/null; then
    echo "FAIL: the opt-out comment is not honoured"; exit 1
  fi
  echo "selftest passed: violations are caught, sim/asio is exempt"
  exit 0
fi

root=${1:?usage: core_purity.sh [--selftest] ROOT}
if scan "$root"; then
  echo "core purity: ok"
else
  exit 1
fi
