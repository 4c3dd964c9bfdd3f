#!/usr/bin/env bash
# `btsim serve` with a bad flag exits 2 at once, naming the flag, and
# serves nothing.
# Usage: serve_errors_e2e.sh BTSIM
set -euo pipefail
btsim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_error NAME EXPECTED-SUBSTRING serve-args...
expect_error() {
  local name=$1 want=$2
  shift 2
  local code=0
  timeout 20 "$btsim" serve "$@" >"$work/out" 2>"$work/err" || code=$?
  [[ $code == 2 ]] || { cat "$work/err"; fail "$name: exit $code, want 2"; }
  grep -qF -- "$want" "$work/err" ||
    { cat "$work/err"; fail "$name: stderr lacks '$want'"; }
  echo "ok: $name: $(head -n 1 "$work/err")"
}

echo 'clusters { id: "c1" zone: "us-east1-b" }' >"$work/instance.textproto"

expect_error port-out-of-range "--port" --port 70000
expect_error unknown-flag "--bogus" --bogus
expect_error bad-compaction-interval "--compaction-interval" \
  --compaction-interval forever
expect_error config-and-clusters "--config cannot be combined with --clusters" \
  --config "$work/instance.textproto" --clusters c1=us-east1-b
expect_error missing-config "--config" --config "$work/nope.textproto"
