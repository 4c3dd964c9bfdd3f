#!/usr/bin/env bash
# Runs one scenario example the way CI must: `btsim run` exits 0 (every
# expectation holds) and writes all four outputs; a second run with the same
# seed gives the same fingerprint, history.jsonl and report.json byte for
# byte; another seed gives another fingerprint.
# Usage: example_e2e.sh BTSIM FILE.textproto
set -euo pipefail
btsim=$1
file=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$btsim" run "$file" --out "$work/a" >"$work/a.txt" 2>&1; then
  cat "$work/a.txt"
  fail "btsim run $file did not exit 0"
fi
cat "$work/a.txt"
for f in report.json history.jsonl metrics.om report.html; do
  [[ -s $work/a/$f ]] || fail "$f missing or empty"
done
for key in scenario seed fingerprint expectations checks; do
  grep -q "\"$key\":" "$work/a/report.json" || fail "report.json lacks $key"
done
last=$(tail -n 1 "$work/a.txt")
[[ $last == "fingerprint: "* ]] || fail "the last line is not the fingerprint: $last"

"$btsim" run "$file" --out "$work/b" >"$work/b.txt" 2>&1 || fail "second run"
[[ $(tail -n 1 "$work/b.txt") == "$last" ]] || fail "same seed, other fingerprint"
cmp "$work/a/history.jsonl" "$work/b/history.jsonl" ||
  fail "same seed, other history.jsonl"
cmp "$work/a/report.json" "$work/b/report.json" ||
  fail "same seed, other report.json"

other=$("$btsim" run "$file" --seed 987654321 --quiet || true)
[[ $other == "fingerprint: "* ]] || fail "no fingerprint with another seed"
[[ $other != "$last" ]] || fail "another seed gave the same fingerprint"
echo "PASS: $file"
