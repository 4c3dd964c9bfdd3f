#!/usr/bin/env bash
# Renders the hotspot example's report.html in headless Chromium: `btsim run
# --out` writes the report (with every chart and the key heatmap), and
# scripts/screenshot-report.sh turns it into a PNG that must be non-trivial
# (a blank 1400x4000 page compresses to a few KB; the report is far more).
# Exits 77 (skipped) when chromium is not installed.
# Usage: report_render_e2e.sh BTSIM SOURCE_DIR
set -euo pipefail
btsim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

example=("$source_dir"/scenarios/examples/07-*.textproto)
"$btsim" run "${example[0]}" --out "$work/out" >"$work/run.txt" 2>&1 ||
  { cat "$work/run.txt"; fail "btsim run ${example[0]}"; }
html=$work/out/report.html
[[ -s $html ]] || fail "report.html missing or empty"
for id in timeline-strip chart-throughput-cluster chart-errors chart-latency \
  chart-cpu key-heatmap chart-replication-delay chart-t-visibility \
  expectations-table; do
  grep -q "id=\"$id\"" "$html" || fail "report.html has no #$id"
done

# The script finds the browser, and exits 77 when there is none.
status=0
bash "$source_dir/scripts/screenshot-report.sh" "$html" "$work/shot.png" \
  1400x4000 || status=$?
if ((status == 77)); then
  echo "SKIP: chromium is not installed"
  exit 77
fi
((status == 0)) || fail "screenshot-report.sh exited $status"
[[ -s $work/shot.png ]] || fail "no screenshot"
[[ $(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n') == \
  89504e470d0a1a0a ]] || fail "shot.png is not a PNG"
size=$(stat -c %s "$work/shot.png")
((size > 100000)) || fail "shot.png is only $size bytes: a blank page?"
echo "PASS: report rendered, screenshot $size bytes"
