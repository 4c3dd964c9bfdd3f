#!/usr/bin/env bash
# `btsim serve` with a bad flag exits 2 at once, naming the flag, and
# serves nothing.
# Usage: serve_errors_e2e.sh BTSIM
set -euo pipefail
btsim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# expect_error NAME EXPECTED-SUBSTRING ARGS...
expect_error() {
  local name=$1 want=$2
  shift 2
  expect_usage_error "$work" "$name" "$want" "$btsim" serve "$@"
}

echo 'clusters { id: "c1" zone: "us-east1-b" }' >"$work/instance.textproto"

expect_error port-out-of-range "--port" --port 70000
expect_error unknown-flag "--bogus" --bogus
expect_error bad-compaction-interval "--compaction-interval" \
  --compaction-interval forever
expect_error config-and-clusters "--config cannot be combined with --clusters" \
  --config "$work/instance.textproto" --clusters c1=us-east1-b
expect_error missing-config "--config" --config "$work/nope.textproto"
# --scenario: its file is checked at start; its flags need it.
expect_error scenario-and-config "--scenario cannot be combined with --config" \
  --scenario "$work/nope.textproto" --config "$work/instance.textproto"
expect_error missing-scenario "nope.textproto" --scenario "$work/nope.textproto"
expect_error out-without-scenario "need --scenario" --out "$work/out"
expect_error unknown-export "--export: unknown history format" \
  --scenario "$work/nope.textproto" --out "$work/out" --export nope
# --data-dir: an existing directory that no other btsim holds.
expect_error data-dir-missing "--data-dir $work/absent: No such file" \
  --data-dir "$work/absent"
expect_error data-dir-not-a-directory "--data-dir $work/instance.textproto: not a directory" \
  --data-dir "$work/instance.textproto"
mkdir "$work/data"
touch "$work/data/LOCK"
flock "$work/data/LOCK" sleep 30 &
holder=$!
sleep 0.2
expect_error data-dir-locked "--data-dir $work/data: locked by another running btsim" \
  --data-dir "$work/data"
kill "$holder"
wait "$holder" 2>/dev/null || true
expect_error data-dir-and-scenario "--data-dir cannot be combined with --scenario" \
  --data-dir "$work/data" --scenario "$work/nope.textproto"
