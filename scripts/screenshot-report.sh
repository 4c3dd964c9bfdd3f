#!/usr/bin/env bash
# Renders a btsim HTML report (report.html from `btsim run --out DIR`) to a
# PNG with headless Chromium.
#
# Usage: scripts/screenshot-report.sh REPORT.html OUT.png [WIDTHxHEIGHT]
#   WIDTHxHEIGHT  the browser window in CSS px (default 1100x4200); the
#                 page is captured from the top, so a tall window captures
#                 the whole report.
# Environment: CHROMIUM  the browser binary (default: chromium, then
#              chromium-browser, google-chrome).
# Exit status: 0 on success, 77 when no browser is installed, 1 otherwise.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 1
fi
html=$1
png=$2
size=${3:-1100x4200}
if [[ ! -f $html ]]; then
  echo "$0: $html: no such file" >&2
  exit 1
fi

browser=${CHROMIUM:-}
if [[ -z $browser ]]; then
  for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then
      browser=$candidate
      break
    fi
  done
fi
if [[ -z $browser ]] || ! command -v "$browser" >/dev/null 2>&1; then
  echo "$0: chromium not found (set CHROMIUM)" >&2
  exit 77
fi

abs_html=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
abs_png=$(cd "$(dirname "$png")" && pwd)/$(basename "$png")
# A private profile, so that a running browser or a missing $HOME does not
# interfere; removed on exit.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --no-first-run --disable-extensions \
  --screenshot="$abs_png" --window-size="${size/x/,}" \
  "file://$abs_html" >/dev/null 2>&1 || true
if [[ ! -s $abs_png ]]; then
  echo "$0: $browser wrote no screenshot" >&2
  exit 1
fi
echo "$abs_png"
