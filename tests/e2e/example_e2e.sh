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
# report.json and history.jsonl follow proto/btsim/report/v1/report.proto:
# they agree with the summary and with each other.
python3 - "$work/a" "$work/a.txt" <<'EOF' || fail "report.json or history.jsonl"
import json, sys
out, summary = sys.argv[1], open(sys.argv[2]).read().splitlines()
report = json.load(open(out + "/report.json"))
for key in ("scenario", "file", "seed", "fingerprint", "passed", "expectations",
            "checks", "events", "phases", "failover", "k_staleness",
            "t_visibility", "clusters"):
    assert key in report, "report.json lacks " + key
assert summary[-1] == "fingerprint: " + report["fingerprint"], summary[-1]
assert report["passed"] is True and report["expectations"]
assert all(e["pass"] for e in report["expectations"])
assert isinstance(report["seed"], str) and int(report["seed"]) > 0
assert "null" not in open(out + "/report.json").read()
ops = [json.loads(line) for line in open(out + "/history.jsonl")]
assert len(ops) == report["client_ops"] > 0, (len(ops), report["client_ops"])
assert [op["id"] for op in ops] == list(range(len(ops)))
for op in ops:
    assert op["status"].isupper() and op["op"].islower(), op
    if op["status"] != "UNKNOWN":
        assert 0 <= op["invoke"] <= op["complete"], op
    if "written" in op:
        assert int(op["timestamp_micros"]) >= 1767225600000000, op
EOF
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
