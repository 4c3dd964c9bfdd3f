#!/usr/bin/env bash
# serve_scenario_e2e.sh BTSIM_BINARY
#
# `btsim serve --scenario` with the real `cbt` CLI as the application:
# - a timeline black-holes c1 while cbt writes and reads through a profile
#   pinned to it: the calls that hung until cbt's deadline are in the
#   recorded history as DEADLINE_EXCEEDED, the report counts them, and the
#   expectation "recorded calls see no error" fails, so the server exits 1;
# - with --wait-for-start, calls before `btsim ctl start` are not recorded;
#   SIGINT mid-run still gives a complete report of what was recorded
#   (exit 0: its expectations hold);
# - `btsim ctl finish` ends a run early;
# - `btsim check` on the recorded history gives the same checks, summary and
#   exit code as the live run, and --scenario judges it by other
#   expectations.
# Exits 77 (skipped) when cbt is missing.
set -u -o pipefail

BTSIM=${1:?usage: serve_scenario_e2e.sh BTSIM_BINARY}
source "$(dirname "$0")/lib.sh"
CBT=${CBT:-$(command -v cbt || true)}
if [[ -z $CBT ]]; then
  echo "SKIP: cbt not found (it comes with the Google Cloud SDK)"
  exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-serve-scenario.XXXXXX")
SERVER_PID=""
cleanup() {
  [[ -n $SERVER_PID ]] && kill -KILL "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

cbt_() {
  BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT timeout 20 \
    "$CBT" -creds /dev/null -timeout 1s -project p -instance i "$@" 2>&1
}
ctl() { timeout 20 "$BTSIM" ctl --target "127.0.0.1:$PORT" "$@" 2>&1; }
# Waits for the server to exit; sets CODE.
wait_server() {
  CODE=0
  wait "$SERVER_PID" || CODE=$?
  SERVER_PID=""
}

FAILS=0
check() {  # check DESCRIPTION CONDITION-EXIT-STATUS
  if [[ $2 == 0 ]]; then
    echo "  ok    $1"
  else
    echo "  FAIL  $1"
    FAILS=$((FAILS + 1))
  fi
}
# jq-free JSON queries.
py() { python3 -c "$1" "${@:2}"; }

cat >"$WORK/outage.textproto" <<'PROTO'
name: "cbt-under-outage"
duration { seconds: 9 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
  app_profiles { id: "pinned" single_cluster { cluster_id: "c1" } }
}
tables { id: "t" families { name: "cf" } }
timeline {
  at { seconds: 2 }
  cluster_down { cluster: "c1" mode: BLACKHOLE }
  for { seconds: 4 }
}
expectations {
  name: "recorded calls see no error"
  metric: ERRORS
  client: "recorded"
  at_most: 0
}
expectations { name: "no lost writes" metric: LOST_WRITES at_most: 0 }
PROTO

echo "1. a black hole under cbt traffic"
start_btsim_serve "$WORK/outage.log" --scenario "$WORK/outage.textproto" \
  --out "$WORK/outage"
i=0
while kill -0 "$SERVER_PID" 2>/dev/null && ((i < 300)); do
  cbt_ set t "row$i" "cf:v=value-$i" app-profile=pinned >/dev/null
  cbt_ lookup t "row$i" app-profile=pinned >/dev/null
  i=$((i + 1))
  sleep 0.1
done
wait_server
echo "  ($i rounds of cbt set + lookup; server exit $CODE)"
check "the failed expectation gives exit 1" "$([[ $CODE == 1 ]]; echo $?)"
check "the summary shows the failed expectation" \
  "$(grep -q 'FAIL  recorded calls see no error' "$WORK/outage.log"; echo $?)"
for f in report.json history.jsonl report.html metrics.om; do
  check "--out has $f" "$([[ -s $WORK/outage/$f ]]; echo $?)"
done
check "history.jsonl has cbt's calls that hung until its deadline" \
  "$(py '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ops = [l["operation"] for l in lines if "operation" in l]
assert lines[0]["start"]["live"] and "end" in lines[-1]
hung = [o for o in ops if o["status"] == "DEADLINE_EXCEEDED"
        and o["profile"] == "pinned" and o["client"].startswith("ipv4:127.0.0.1:")]
ok = [o for o in ops if o["status"] == "OK" and o["op"] == "write"]
reads = [o for o in ops if o["op"] == "read_row" and o["status"] == "OK"]
assert hung and ok and reads, (len(hung), len(ok), len(reads))
assert all(2.0 <= o["invoke"] <= 6.5 for o in hung), [o["invoke"] for o in hung]
assert any(r["read"].startswith("value-") for r in reads)
' "$WORK/outage/history.jsonl"; echo $?)"
check "report.json counts the errors cbt saw" "$(py '
import json, sys
r = json.load(open(sys.argv[1]))
e = {x["name"]: x for x in r["expectations"]}["recorded calls see no error"]
assert not e["pass"] and e["value"] >= 1, e
assert not r["passed"]
' "$WORK/outage/report.json"; echo $?)"

"$BTSIM" check "$WORK/outage/history.jsonl" --out "$WORK/checked" \
  >"$WORK/checked.txt" 2>&1
code=$?
check "btsim check on the recorded history: exit 1 as the live run" \
  "$([[ $code == 1 ]]; echo $?)"
check "btsim check: the same report.json, report.html and history.jsonl" "$(
  for f in report.json report.html history.jsonl; do
    cmp "$WORK/outage/$f" "$WORK/checked/$f" >&2 || exit 1
  done; echo 0)"
check "btsim check: the summary as the live run printed it" "$(
  diff <(sed -n '/^scenario:/,/^fingerprint:/p' "$WORK/outage.log" |
           grep -v '^sim: ') "$WORK/checked.txt" >&2; echo $?)"
# The same file without the expectation on errors.
sed '/^expectations {$/,/^}$/d' "$WORK/outage.textproto" >"$WORK/lenient.textproto"
"$BTSIM" check "$WORK/outage/history.jsonl" --scenario "$WORK/lenient.textproto" \
  --quiet >/dev/null 2>&1
code=$?
check "btsim check --scenario: judged by that file's expectations (exit 0)" \
  "$([[ $code == 0 ]]; echo $?)"

cat >"$WORK/long.textproto" <<'PROTO'
name: "long"
duration { seconds: 600 }
instance { clusters { id: "c1" zone: "us-east1-b" } }
tables { id: "t" families { name: "cf" } }
expectations { name: "no lost writes" metric: LOST_WRITES at_most: 0 }
PROTO

echo "2. --wait-for-start, then SIGINT mid-run"
start_btsim_serve "$WORK/sigint.log" --scenario "$WORK/long.textproto" \
  --wait-for-start --out "$WORK/sigint"
cbt_ set t warmup cf:v=warmup >/dev/null
out=$(ctl start)
check "ctl start" "$(grep -q 'scenario started' <<<"$out"; echo $?)"
out=$(ctl start)
check "a second ctl start is refused" \
  "$(grep -q 'FAILED_PRECONDITION' <<<"$out"; echo $?)"
for k in 1 2 3; do cbt_ set t "r$k" "cf:v=v$k" >/dev/null; done
kill -INT "$SERVER_PID"
wait_server
check "SIGINT: exit 0 (the expectations hold)" "$([[ $CODE == 0 ]]; echo $?)"
check "SIGINT: a complete report" "$(py '
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["passed"] and r["settled_seconds"] >= 0, r.get("settled_seconds")
lines = [json.loads(l) for l in open(sys.argv[1] + "/history.jsonl")]
ops = [l["operation"] for l in lines if "operation" in l]
rows = sorted(o["row"] for o in ops)
assert rows == ["r1", "r2", "r3"], rows  # not the warm-up write
assert r["duration_seconds"] < 600, r["duration_seconds"]
' "$WORK/sigint"; echo $?)"

echo "3. ctl finish"
start_btsim_serve "$WORK/finish.log" --scenario "$WORK/long.textproto"
cbt_ set t r1 cf:v=v1 >/dev/null
out=$(ctl finish)
check "ctl finish" "$(grep -q 'scenario finishing' <<<"$out"; echo $?)"
wait_server
check "ctl finish: exit 0 with a summary" \
  "$([[ $CODE == 0 ]] && grep -q 'served: 1 operations of recorded calls' \
      "$WORK/finish.log"; echo $?)"
check "a server without a scenario refuses ctl start" "$(
  start_btsim_serve "$WORK/plain.log"
  out=$(ctl start)
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID"
  grep -q 'plays no scenario' <<<"$out"; echo $?)"

sed -n '/^scenario:/,/^result:/p' "$WORK/outage.log"
if ((FAILS > 0)); then
  echo "FAIL: $FAILS check(s) failed; last server log:"
  cat "$WORK/outage.log"
  exit 1
fi
echo "PASS"
