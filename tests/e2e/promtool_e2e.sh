#!/usr/bin/env bash
# A virtual-time run backfills into a Prometheus TSDB: `btsim run` of the
# partition example with --out writes metrics.om, which
# `promtool tsdb create-blocks-from openmetrics` must turn into a block whose
# series include the replication backlog. Also: --scrape-interval changes
# the sampling and rejects bad values with exit 2.
# Exit codes: 0 pass, 1 fail, 77 skipped (promtool missing).
# Usage: promtool_e2e.sh BTSIM SCENARIO.textproto
set -euo pipefail
btsim=$1
scenario=$2
promtool=${PROMTOOL:-$(command -v promtool || true)}
if [[ -z $promtool || ! -x $promtool ]]; then
  echo "SKIP: promtool not found (Debian package prometheus)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$btsim" run "$scenario" --out "$work/out" --quiet >"$work/run.txt" 2>&1 ||
  { cat "$work/run.txt"; fail "btsim run did not exit 0"; }
om=$work/out/metrics.om
[[ -s $om ]] || fail "metrics.om missing or empty"
[[ $(tail -n 1 "$om") == "# EOF" ]] || fail "metrics.om does not end with # EOF"
grep -q '^bigtable_cluster_up{bigtable_instance="partition-and-heal",cluster="c1"} 1 1767225600$' "$om" ||
  fail "no cluster_up sample at the epoch"

"$promtool" tsdb create-blocks-from openmetrics "$om" "$work/tsdb" \
  >"$work/promtool.txt" 2>&1 ||
  { cat "$work/promtool.txt"; fail "promtool create-blocks-from openmetrics failed"; }
blocks=$(find "$work/tsdb" -name meta.json | wc -l)
(( blocks >= 1 )) || fail "promtool made no block"
"$promtool" tsdb list "$work/tsdb" >"$work/list.txt" 2>&1 ||
  { cat "$work/list.txt"; fail "promtool tsdb list failed"; }
cat "$work/list.txt"
# The dump shows the backlog that the partition built up (c1 -> c2).
# (promtool 2.42's dump opens the TSDB's WAL, which backfilling does not make.)
mkdir -p "$work/tsdb/wal"
"$promtool" tsdb dump "$work/tsdb" >"$work/dump.txt" 2>&1 ||
  { tail "$work/dump.txt"; fail "promtool tsdb dump failed"; }
backlog=$(grep '__name__="bigtable_replication_backlog_entries"' "$work/dump.txt" |
  grep 'source_cluster="c1"' | awk '{print $(NF-1)}' | sort -n | tail -n 1)
[[ -n $backlog ]] || fail "no backlog series in the TSDB"
(( ${backlog%.*} > 1000 )) || fail "the partition's backlog peaked at only $backlog"
for name in bigtable_server_requests_total bigtable_server_latencies_seconds_bucket \
  bigtable_replication_latency_seconds_bucket bigtable_replication_max_delay_seconds \
  bigtable_cluster_cpu_load bigtable_tablets; do
  grep -q "__name__=\"$name\"" "$work/dump.txt" || fail "no $name in the TSDB"
done

# A coarser scrape interval: samples every 5 s only.
"$btsim" run "$scenario" --out "$work/coarse" --scrape-interval 5s --quiet \
  >/dev/null 2>&1 || fail "--scrape-interval 5s"
stamps=$(grep -v '^#' "$work/coarse/metrics.om" | awk '{print $NF}' | sort -u)
for s in $stamps; do
  (( (s - 1767225600) % 5 == 0 )) || fail "sample at $s with --scrape-interval 5s"
done
for bad in 0 -1s 2h soon; do
  set +e
  "$btsim" run "$scenario" --out "$work/bad" --scrape-interval "$bad" \
    >"$work/bad.txt" 2>&1
  code=$?
  set -e
  [[ $code == 2 ]] || fail "--scrape-interval $bad: exit $code, not 2"
  grep -q -- "--scrape-interval" "$work/bad.txt" ||
    fail "--scrape-interval $bad: the error does not name the flag"
done
echo "PASS: metrics.om backfills into a TSDB ($(wc -c <"$om") bytes)"
