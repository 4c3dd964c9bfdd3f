#!/usr/bin/env bash
# "My app under a zone outage": plays scenario.textproto with `btsim serve
# --scenario` against app.mjs (the official Node.js client) and prints the
# verdict: the scenario's expectations, and the application's error window
# and RTO as btsim recorded them next to what the application saw itself.
#
# usage: run.sh [BTSIM_BINARY]  (default: build/btsim of this checkout)
# Needs node and npm; installs the pinned client with `npm ci` here.
# Outputs go to build/app-under-outage/ (report.json, history.jsonl,
# metrics.om, report.html). Exits as the server does: 0 every expectation
# holds, 1 one fails, 2 invalid input.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
btsim=$(realpath "${1:-$root/build/btsim}")
out=$root/build/app-under-outage
mkdir -p "$out"
log=$out/server.log

(cd "$here" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null)

server="" app=""
cleanup() {
  [[ -n $app ]] && kill "$app" 2>/dev/null
  [[ -n $server ]] && kill "$server" 2>/dev/null
  true
}
trap cleanup EXIT

"$btsim" serve --port 0 --scenario "$here/scenario.textproto" \
  --wait-for-start --out "$out" >"$log" 2>&1 &
server=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { cat "$log"; exit 2; }

export BIGTABLE_EMULATOR_HOST=127.0.0.1:$port METADATA_SERVER_DETECTION=none
(cd "$here" && exec node app.mjs) >"$out/app.log" 2>&1 &
app=$!
for _ in $(seq 100); do
  grep -q '^ready' "$out/app.log" && break
  sleep 0.1
done
"$btsim" ctl --target "127.0.0.1:$port" start
echo "playing scenario.textproto for 25 s against app.mjs ..."
# The application stops when the scenario's client phase ends.
while kill -0 "$server" 2>/dev/null &&
  ! grep -q 'recording stopped' "$log"; do
  sleep 0.1
done
kill -TERM "$app"
wait "$app" || true
app=""
code=0
wait "$server" || code=$?
server=""

sed -n '/^expectations:/,/^result:/p' "$log"
node --input-type=module - "$out/report.json" "$out/app.log" <<'JS'
import {readFileSync} from 'node:fs';
const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const lines = readFileSync(process.argv[3], 'utf8').trim().split('\n');
const app = JSON.parse(lines[lines.length - 1]);
const mine = report.failover.flatMap(f => f.clients).find(c => c.client === 'my-app');
const s = x => (x === undefined || x === null ? 'none' : `${x.toFixed(2)} s`);
console.log(`my-app as btsim recorded it: RTO ${s(mine?.rto_seconds)}, ` +
            `error window ${s(mine?.error_window_seconds)}, errors ` +
            JSON.stringify(mine?.errors ?? {}));
console.log(`my-app as it saw itself: ${app.ok} calls ok, ${app.failed} failed ` +
            `${JSON.stringify(app.errors)}, error window ${s(app.error_window_seconds)}, ` +
            `${app.stale_reads} stale reads (and ${app.after_the_end} refused ` +
            'after the end)');
console.log(`verdict: ${report.passed ? 'PASS' : 'FAIL'}`);
JS
echo "(outputs in build/app-under-outage/: report.json, history.jsonl," \
  "metrics.om, report.html, server.log, app.log)"
exit "$code"
