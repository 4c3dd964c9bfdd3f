#!/usr/bin/env bash
# Peak memory of a `btsim serve --scenario` session against its length:
# serves bench/serve-memory.textproto for SHORT and then LONG of wall time
# while two `btsim load` processes drive it open-loop at RATE requests per
# second in all (half MutateRow overwriting 100,000 rows, half point reads
# of another 100,000), and prints each session's peak resident memory
# (VmHWM), the operations it recorded, and the bytes per operation. Issue 42's target: a one-hour
# session at 1,000 requests/s under 500 MB.
#
#   bench/serve-memory.sh                    SHORT=1m LONG=3m RATE=1000
#   SHORT=10m LONG=60m bench/serve-memory.sh  (the target: over an hour)
#
# Uses build/btsim (BTSIM=... for another binary).
set -euo pipefail
cd "$(dirname "$0")/.."
btsim="${BTSIM:-build/btsim}"
short="${SHORT:-1m}"
long="${LONG:-3m}"
rate="${RATE:-1000}"
[[ -x $btsim ]] || { echo "no $btsim: build first (./dev.sh build)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }
source tests/e2e/lib.sh

seconds() {  # 90s, 3m, 1h -> seconds
  local v=$1
  case $v in
    *h) echo $((${v%h} * 3600)) ;;
    *m) echo $((${v%m} * 60)) ;;
    *s) echo "${v%s}" ;;
    *) echo "$v" ;;
  esac
}

work=$(mktemp -d)
SERVER_PID=""
trap '[[ -n $SERVER_PID ]] && kill $SERVER_PID 2>/dev/null; rm -rf "$work"' EXIT
# The server runs under GNU time, for its peak over the whole process
# (the checks and outputs at the end included).
cat >"$work/btsim" <<WRAP
#!/bin/sh
exec /usr/bin/time -f %M -o "$work/maxrss" "$(realpath "$btsim")" "\$@"
WRAP
chmod +x "$work/btsim"
BTSIM=$work/btsim
declare -A peak recorded
for length in "$short" "$long"; do
  secs=$(seconds "$length")
  start_btsim_serve "$work/serve.log" --scenario bench/serve-memory.textproto \
    --set "duration.seconds=$((secs + 30))" --wait-for-start --out "$work/out"
  # Rows for the point reads, before the session starts.
  "$btsim" load --target "127.0.0.1:$PORT" --workload point_read --ops 1 \
    --rows 100000 --keep-table >/dev/null
  "$btsim" ctl --target "127.0.0.1:$PORT" start >/dev/null
  half=$(awk -v r="$rate" 'BEGIN { print r / 2 }')
  "$btsim" load --target "127.0.0.1:$PORT" --workload mutate_row --threads 4 \
    --rate "$half" --duration "${secs}s" --write-keys 100000 --keep-table >"$work/writes.txt" &
  writer=$!
  "$btsim" load --target "127.0.0.1:$PORT" --workload point_read --threads 4 \
    --rate "$half" --duration "${secs}s" --rows 100000 --skip-load \
    --keep-table >"$work/reads.txt"
  wait "$writer"
  session_kb=$(awk '/^VmHWM/ {print $2}' /proc/"$(pgrep -P "$SERVER_PID")"/status)
  "$btsim" ctl --target "127.0.0.1:$PORT" finish >/dev/null || true
  wait "$SERVER_PID" || true
  SERVER_PID=""
  kb=$(cat "$work/maxrss")
  ops=$(grep -c '"operation"' "$work/out/history.jsonl" || true)
  printf '%-5s peak %5d MB (%5d MB before the checks)  %9d operations recorded  %5.0f B/op\n' \
    "$length" $((kb / 1024)) $((session_kb / 1024)) "$ops" \
    "$(awk -v k="$kb" -v o="$ops" 'BEGIN { print o ? k * 1024 / o : 0 }')"
  rm -rf "$work/out"
  peak[$length]=$kb
  recorded[$length]=$ops
done
awk -v s="${peak[$short]}" -v l="${peak[$long]}" -v a="${recorded[$short]}" \
  -v b="${recorded[$long]}" -v r="$rate" 'BEGIN {
    per = b > a ? (l - s) * 1024 / (b - a) : 0
    printf "growth: %.0f B per recorded operation; at %d/s a one-hour session " \
      "would peak near %.0f MB (target < 500 MB)\n", per, r,
      (s * 1024 + per * (r * 3600 - a)) / 1048576
  }'
