#!/usr/bin/env bash
# Runs one scenario example the way CI must: `btsim run` exits 0 (every
# expectation holds) and writes all four outputs; `btsim check` on its
# history.jsonl gives the same summary and files; a second run with the same
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
# report.json and history.jsonl follow proto/btsim/report/v1/report.proto
# and history.proto:
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
lines = [json.loads(line) for line in open(out + "/history.jsonl")]
assert all(len(line) == 1 for line in lines), "one HistoryLine per line"
assert "start" in lines[0] and "end" in lines[-1]
assert lines[-1]["end"]["fingerprint"] == report["fingerprint"]
ops = [line["operation"] for line in lines if "operation" in line]
assert len(ops) == report["client_ops"] > 0, (len(ops), report["client_ops"])
events = [line["event"] for line in lines if "event" in line]
assert len(events) == len(report["events"])
clusters = [line["cluster"] for line in lines if "cluster" in line]
assert [c["id"] for c in clusters] == [c["id"] for c in report["clusters"]]
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

# Judged again offline from its history, the run gives the same summary
# (without the wall-time line) and the same files.
"$btsim" check "$work/a/history.jsonl" --out "$work/c" >"$work/c.txt" 2>&1 ||
  { cat "$work/c.txt"; fail "btsim check did not exit 0"; }
diff <(grep -v '^sim: ' "$work/a.txt") "$work/c.txt" ||
  fail "btsim check printed another summary"
for f in report.json history.jsonl report.html; do
  cmp "$work/a/$f" "$work/c/$f" || fail "btsim check wrote another $f"
done

other=$("$btsim" run "$file" --seed 987654321 --quiet || true)
[[ $other == "fingerprint: "* ]] || fail "no fingerprint with another seed"
[[ $other != "$last" ]] || fail "another seed gave the same fingerprint"
echo "PASS: $file"
