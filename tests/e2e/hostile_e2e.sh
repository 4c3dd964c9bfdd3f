#!/usr/bin/env bash
# Hostile clients against `btsim serve` (tests/e2e/hostile_client.cc): an
# oversized request, an instance flood, filtered full-table scans and more
# calls on one connection than the server allows, each followed (and the
# long ones accompanied) by point reads that must stay quick; then junk
# bytes at the port. The server must answer throughout and stay small.
# Usage: hostile_e2e.sh BTSIM HOSTILE_CLIENT
set -euo pipefail
BTSIM=$1
client=$2
source "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
SERVER_PID=""
cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

max_request=$((1 << 20))
max_instances=5
max_streams=200
start_btsim_serve "$work/serve.log" --max-request-bytes "$max_request" \
  --max-instances "$max_instances" --max-concurrent-streams "$max_streams"

timeout 120 "$client" "127.0.0.1:$PORT" "$max_request" "$max_instances" \
  "$max_streams"
timeout 60 "$client" probe "127.0.0.1:$PORT"

# Bytes that are not HTTP/2, and a connection that sends half a preface and
# stalls: the server drops or ignores them and goes on serving.
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n%0500d' 0 >"/dev/tcp/127.0.0.1/$PORT" || true
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'PRI * HTTP/2.0\r\n' >&3
head -c 65536 /dev/urandom >"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || true
kill -0 "$SERVER_PID" || { cat "$work/serve.log" >&2; echo "FAIL: the server died" >&2; exit 1; }
out=$(timeout 20 "$BTSIM" ctl --target "127.0.0.1:$PORT" status 2>&1) || {
  echo "$out" >&2; echo "FAIL: the server stopped answering after junk bytes" >&2; exit 1; }
exec 3>&-
timeout 60 "$client" probe "127.0.0.1:$PORT"

rss_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")
echo "server peak RSS: $((rss_kb / 1024)) MB"
if ((rss_kb > 1024 * 1024)); then
  echo "FAIL: the server peaked above 1 GiB" >&2
  exit 1
fi
echo "PASS: hostile clients"
