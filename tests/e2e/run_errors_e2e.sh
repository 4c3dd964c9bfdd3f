#!/usr/bin/env bash
# `btsim run` (and `btsim check`) on bad input exits 2 with a message naming
# the file, the line and the field, and runs nothing. A run whose expectation fails exits 1
# after its whole summary; one whose outputs cannot be written exits 2.
# Usage: run_errors_e2e.sh BTSIM EXAMPLE.textproto
set -euo pipefail
btsim=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# expect_error NAME EXPECTED-SUBSTRING ARGS...
expect_error() {
  local name=$1 want=$2
  shift 2
  expect_usage_error "$work" "$name" "$want" "$btsim" "$@"
}

# A syntax error: an unclosed brace at the end.
sed 's/^duration { seconds: 60 }$/duration { seconds: 60 /' "$example" \
  >"$work/syntax.textproto"
line=$(grep -n '^duration' "$work/syntax.textproto" | cut -d: -f1)
expect_error syntax "$work/syntax.textproto:" run "$work/syntax.textproto"

# An unknown field, on a known line.
sed 's/^seed: 1$/seeds: 1/' "$example" >"$work/unknown.textproto"
line=$(grep -n '^seeds' "$work/unknown.textproto" | cut -d: -f1)
expect_error unknown-field "$work/unknown.textproto:$line:" \
  run "$work/unknown.textproto"

# History formats: an unknown one, and one without --out.
expect_error unknown-export "--export: unknown history format 'elle'" \
  run "$example" --out "$work/out" --export jepsen,elle
expect_error export-without-out "--export needs --out" \
  run "$example" --export jepsen

# A reference to a missing cluster.
sed 's/cluster_down { cluster: "c1" mode: BLACKHOLE }/cluster_down { cluster: "c7" mode: BLACKHOLE }/' \
  "$example" >"$work/missing.textproto"
line=$(grep -n 'c7' "$work/missing.textproto" | cut -d: -f1)
expect_error missing-cluster \
  "$work/missing.textproto:$line: timeline[0].cluster_down.cluster" \
  run "$work/missing.textproto"

# An impossible value.
sed 's/ops_per_second: 100/ops_per_second: -5/' "$example" \
  >"$work/value.textproto"
line=$(grep -n 'ops_per_second' "$work/value.textproto" | cut -d: -f1)
expect_error impossible-value \
  "$work/value.textproto:$line: clients[0].workload.ops_per_second" \
  run "$work/value.textproto"

# Bad flags.
expect_error bad-set "--set seed" run "$example" --set seed=abc
expect_error bad-duration "--duration" run "$example" --duration forever
expect_error missing-file "cannot read" run "$work/nope.textproto"

# A failed expectation: exit 1, and the summary (to a file, so buffered)
# still ends with the fingerprint line.
code=0
"$btsim" run "$example" --set expectations[0].at_least=5 >"$work/out" \
  2>"$work/err" || code=$?
[[ $code == 1 ]] || { cat "$work/err"; fail "failed expectation: exit $code"; }
grep -q 'FAIL' "$work/out" || fail "failed expectation: no FAIL line"
[[ $(tail -n 1 "$work/out") == "fingerprint: "* ]] ||
  fail "failed expectation: the summary does not end with the fingerprint"
echo "ok: failed expectation: exit 1"

# Outputs that cannot be written (--out names a file): exit 2 after the run.
touch "$work/a-file"
code=0
"$btsim" run "$example" --out "$work/a-file" >"$work/out" 2>"$work/err" ||
  code=$?
[[ $code == 2 ]] || { cat "$work/err"; fail "unwritable --out: exit $code"; }
grep -qF "$work/a-file" "$work/err" ||
  { cat "$work/err"; fail "unwritable --out: stderr lacks the path"; }
echo "ok: unwritable --out: $(head -n 1 "$work/err")"

# `btsim check` on bad histories: exit 2 naming the file, line and field.
"$btsim" run "$example" --out "$work/run" --quiet >/dev/null
history=$work/run/history.jsonl
expect_error check-missing "$work/none.jsonl: cannot be opened" \
  check "$work/none.jsonl"
head -n -1 "$history" >"$work/cut.jsonl"
expect_error check-incomplete "$work/cut.jsonl: incomplete: no end line" \
  check "$work/cut.jsonl"
sed '2s/.*/{"operation":{"id":0,"op":"write","status":"FINE"}}/' "$history" \
  >"$work/status.jsonl"
expect_error check-bad-field \
  "$work/status.jsonl:2: operation.status: unknown status 'FINE'" \
  check "$work/status.jsonl"
sed '3s/.*/not json/' "$history" >"$work/garbage.jsonl"
expect_error check-not-json "$work/garbage.jsonl:3: not a HistoryLine" \
  check "$work/garbage.jsonl"
expect_error check-missing-scenario "cannot read" \
  check "$history" --scenario "$work/nope.textproto"
expect_error check-export-without-out "--export needs --out" \
  check "$history" --export jepsen
# A scenario without a name is named after its file, in the run and when
# judged again.
# The --export formats come out the same too.
sed '/^name:/d' "$example" >"$work/unnamed.textproto"
"$btsim" run "$work/unnamed.textproto" --out "$work/unnamed" --quiet \
  --export jepsen,porcupine >/dev/null
"$btsim" check "$work/unnamed/history.jsonl" --out "$work/unnamed-check" \
  --quiet --export jepsen,porcupine >/dev/null
for f in report.json history.jepsen.jsonl history.porcupine.json; do
  cmp "$work/unnamed/$f" "$work/unnamed-check/$f" ||
    fail "check of an unnamed scenario: another $f"
done
grep -q '"scenario": "unnamed"' "$work/unnamed-check/report.json" ||
  fail "check of an unnamed scenario: not named after its file"
echo "ok: an unnamed scenario keeps its name when judged again"
# Judged by a stricter scenario: exit 1.
code=0
"$btsim" check "$history" --scenario <(sed 's/at_most: [0-9.]*/at_most: -1/' \
  "$example") >"$work/out" 2>"$work/err" || code=$?
[[ $code == 1 ]] || { cat "$work/err"; fail "check --scenario: exit $code"; }
echo "ok: check --scenario with a failing expectation: exit 1"
echo "PASS"
