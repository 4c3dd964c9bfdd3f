#!/usr/bin/env bash
# prometheus_e2e.sh BTSIM_BINARY
#
# The live metrics issue's acceptance checks, with a real Prometheus in the
# loop:
#   btsim serve --metrics-port 0 --clusters c1=us-east1-b,c2=us-east1-c
#   prometheus scraping it every second
# - cbt creates a table, writes a row (MutateRow) and reads it back;
# - `promtool check metrics` on the live /metrics finds nothing;
# - through Prometheus's HTTP API: MutateRow on c1 with code OK, the rows
#   ReadRows returned, replication c1 -> c2, both clusters up, and the
#   scrape target healthy.
# About 5 s. Exits 77 (skipped) when prometheus, promtool, cbt, curl or
# python3 is missing.
set -u -o pipefail

BTSIM=${1:?usage: prometheus_e2e.sh BTSIM_BINARY}
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
PROMTOOL=${PROMTOOL:-$(command -v promtool || true)}
CBT=${CBT:-$(command -v cbt || true)}
for tool in PROMETHEUS PROMTOOL CBT; do
  if [[ -z ${!tool} ]]; then
    echo "SKIP: ${tool,,} not found (prometheus and promtool: Debian package" \
      "prometheus; cbt: the Google Cloud SDK)"
    exit 77
  fi
done
for tool in curl python3 awk; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found"
    exit 77
  fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-prom.XXXXXX")
BTSIM_PID="" PROM_PID=""
cleanup() {
  [[ -n $PROM_PID ]] && kill -TERM "$PROM_PID" 2>/dev/null &&
    wait "$PROM_PID" 2>/dev/null
  [[ -n $BTSIM_PID ]] && kill -TERM "$BTSIM_PID" 2>/dev/null &&
    wait "$BTSIM_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for log in server prometheus; do
    [[ -s $WORK/$log.log ]] && { echo "--- $log.log"; tail -n 30 "$WORK/$log.log"; }
  done
  exit 1
}

"$BTSIM" serve --host 127.0.0.1 --port 0 --metrics-port 0 \
  --clusters c1=us-east1-b,c2=us-east1-c >"$WORK/server.log" 2>&1 &
BTSIM_PID=$!
PORT="" METRICS_PORT=""
for _ in $(seq 150); do
  PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/server.log" | cut -d: -f2)
  METRICS_PORT=$(grep -o 'metrics on http://127.0.0.1:[0-9]*' "$WORK/server.log" |
    cut -d: -f3)
  [[ -n $PORT && -n $METRICS_PORT ]] && break
  kill -0 "$BTSIM_PID" 2>/dev/null || break
  sleep 0.1
done
[[ -n $PORT && -n $METRICS_PORT ]] || fail "btsim serve did not start"
echo "btsim serve on 127.0.0.1:$PORT, metrics on 127.0.0.1:$METRICS_PORT"

# A free port for Prometheus (a tiny race with other processes; good enough
# for a test).
PROM_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: btsim
    static_configs:
      - targets: ['127.0.0.1:$METRICS_PORT']
EOF
"$PROMETHEUS" --config.file="$WORK/prom.yml" \
  --storage.tsdb.path="$WORK/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

cbt_() {
  BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT timeout 30 \
    "$CBT" -creds /dev/null -project p -instance i "$@" 2>&1
}
cbt_ createtable t families=cf >/dev/null || fail "cbt createtable"
cbt_ set t r1 cf:c=v >/dev/null || fail "cbt set"
out=$(cbt_ read t) || fail "cbt read: $out"
grep -q '"v"' <<<"$out" || fail "cbt read did not return the row: $out"

FAILS=0
# promtool reads the exposition on stdin; any finding fails the test (after
# the other checks have run).
curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/metrics.txt" ||
  fail "GET /metrics"
findings=$("$PROMTOOL" check metrics <"$WORK/metrics.txt" 2>&1)
rc=$?
if ((rc != 0)) || [[ -n $findings ]]; then
  echo "  FAIL  promtool check metrics (exit $rc):"
  sed 's/^/        | /' <<<"$findings"
  FAILS=$((FAILS + 1))
else
  echo "  ok    promtool check metrics: no findings"
fi

# query EXPR: the value of the first sample of an instant query, or empty.
query() {
  curl -sf --get --data-urlencode "query=$1" \
    "http://127.0.0.1:$PROM_PORT/api/v1/query" |
    grep -o '"value":\[[^]]*\]' | head -n 1 | sed 's/.*,"\(.*\)"\]/\1/'
}

# expect DESCRIPTION EXPR CONDITION: polls (until DEADLINE) until the value
# of EXPR satisfies CONDITION, an awk expression on v.
DEADLINE=$((SECONDS + 30))
expect() {
  local desc=$1 expr=$2 cond=$3 v=""
  while :; do
    v=$(query "$expr")
    if [[ -n $v ]] && awk -v v="$v" "BEGIN { exit !($cond) }"; then
      echo "  ok    $desc: $expr = $v"
      return
    fi
    ((SECONDS < DEADLINE)) || break
    sleep 0.5
  done
  echo "  FAIL  $desc: $expr = '${v}', wanted $cond"
  FAILS=$((FAILS + 1))
}

expect "Prometheus scrapes btsim" 'up{job="btsim"}' 'v == 1'
expect "MutateRow served by c1 with OK" \
  'sum(bigtable_server_requests_total{method="MutateRow",cluster="c1",code="OK",app_profile="default"})' \
  'v >= 1'
expect "ReadRows returned the row" \
  'sum(bigtable_server_returned_rows_total{method="ReadRows"})' 'v >= 1'
expect "request latency histogram" \
  'sum(bigtable_server_latencies_seconds_count{method="MutateRow"})' 'v >= 1'
expect "replication c1 -> c2 measured" \
  'sum(bigtable_replication_latency_seconds_count{source_cluster="c1",destination_cluster="c2"})' \
  'v >= 1'
expect "both clusters up" 'count(bigtable_cluster_up == 1)' 'v == 2'
expect "instance label" \
  'count(bigtable_cluster_up{bigtable_instance="projects/p/instances/i"})' \
  'v == 2'

((FAILS == 0)) || fail "$FAILS check(s) failed"
echo "PASS"
