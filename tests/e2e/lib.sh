# Shared helpers of the e2e scripts; source it after setting BTSIM.

# start_btsim_serve LOG [ARGS...]: starts `$BTSIM serve --port 0 ARGS...` in
# the background with its output in LOG, and sets SERVER_PID and, once the
# server listens, PORT. Prints the log and exits 1 when the server dies or
# does not listen within 15 s.
start_btsim_serve() {
  local log=$1
  shift
  : >"$log"  # before the server's shell opens it
  "$BTSIM" serve --port 0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  PORT=""
  for _ in $(seq 150); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
    [[ -n $PORT ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: btsim serve did not start; log:" >&2
  cat "$log" >&2
  exit 1
}

# expect_usage_error WORK NAME EXPECTED-SUBSTRING COMMAND...: COMMAND (given
# at most 20 s) must exit 2, print EXPECTED-SUBSTRING on stderr and nothing
# on stdout (nothing ran). WORK is a scratch directory.
expect_usage_error() {
  local work=$1 name=$2 want=$3
  shift 3
  local code=0
  timeout 20 "$@" >"$work/out" 2>"$work/err" || code=$?
  if [[ $code != 2 ]]; then
    cat "$work/err" >&2
    echo "FAIL: $name: exit $code, want 2" >&2
    exit 1
  fi
  if ! grep -qF -- "$want" "$work/err"; then
    cat "$work/err" >&2
    echo "FAIL: $name: stderr lacks '$want'" >&2
    exit 1
  fi
  if [[ -s $work/out ]]; then
    echo "FAIL: $name: something ran" >&2
    exit 1
  fi
  echo "ok: $name: $(head -n 1 "$work/err")"
}

# Ports come from 20000..32767, below Linux's ephemeral range (32768..60999),
# so a port that nobody listens on is unlikely to be held by an outgoing
# connection; a server that still fails to bind is restarted on another port.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {  # pick_port [EXCLUDE]
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 12768))
    [[ $p != "${1:-}" ]] && port_free "$p" && { echo "$p"; return 0; }
  done
  echo "FAIL: no free port found" >&2; return 1
}
wait_listening() {  # wait_listening PID PORT: 0 up, 1 process exited, 2 timeout
  for _ in $(seq 150); do   # 150 x 0.1 s = 15 s
    kill -0 "$1" 2>/dev/null || return 1
    port_free "$2" || return 0
    sleep 0.1
  done
  return 2
}

# start_cbtemulator LOG: starts Google's emulator ($CBTEMULATOR) on a free
# port with its output in LOG, and sets EMU_PID and EMU_PORT once it
# listens. Returns 1 (after printing the log) when it does not start.
start_cbtemulator() {
  local log=$1 rc
  for _ in 1 2 3; do
    EMU_PORT=$(pick_port) || return 1
    "$CBTEMULATOR" -host 127.0.0.1 -port "$EMU_PORT" >"$log" 2>&1 &
    EMU_PID=$!
    wait_listening "$EMU_PID" "$EMU_PORT"; rc=$?
    ((rc == 0)) && return 0
    ((rc == 2)) && break
    wait "$EMU_PID" 2>/dev/null
  done
  echo "FAIL: cbtemulator did not start; log:" >&2
  cat "$log" >&2
  return 1
}

# check DESCRIPTION OUTPUT ERE [!]: OUTPUT must (or, with !, must not) match
# ERE; counts CHECKS and FAILS (set both to 0 first) and prints the verdict.
check() {
  local desc=$1 out=$2 ere=$3 negate=${4:-}
  CHECKS=$((CHECKS + 1))
  local hit=0
  grep -Eq -- "$ere" <<<"$out" && hit=1
  [[ $negate == '!' ]] && hit=$((1 - hit))
  if ((hit)); then
    echo "  ok    $desc"
  else
    echo "  FAIL  $desc"
    sed 's/^/        | /' <<<"$out"
    FAILS=$((FAILS + 1))
  fi
}
