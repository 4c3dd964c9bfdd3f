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
