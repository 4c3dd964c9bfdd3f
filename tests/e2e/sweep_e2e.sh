#!/usr/bin/env bash
# End-to-end test of `btsim sweep`: a 2 x 4 grid of the zone-outage example
# in 2 processes, its results.csv and summary.csv, sharding + --merge
# reproducing the unsharded results byte for byte, determinism across
# repeated sweeps, and the exit codes (0 all passed, 1 a failed expectation,
# 2 invalid input, with nothing run).
#
# usage: sweep_e2e.sh BTSIM_BINARY
set -u

BTSIM=${1:-}
if [[ -z $BTSIM ]]; then echo "usage: $0 BTSIM_BINARY" >&2; exit 2; fi
if [[ ! -x $BTSIM ]]; then echo "FAIL: btsim binary not executable: $BTSIM" >&2; exit 1; fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCENARIO=$ROOT/scenarios/examples/01-zone-outage-multi-cluster.textproto
VARY='clients[0].workload.ops_per_second=50,100'

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# sweep EXPECTED_EXIT ARGS...: runs `btsim sweep`, output in $WORK/out, $WORK/err.
sweep() {
  local expected=$1; shift
  "$BTSIM" sweep "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  if [[ $rc != "$expected" ]]; then
    fail "btsim sweep $* exited $rc, expected $expected; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
  fi
}
expect_err() {
  grep -Eq -- "$1" "$WORK/err" || fail "stderr lacks /$1/: $(cat "$WORK/err")"
}

# The full sweep: 2 grid points x 4 seeds.
"$BTSIM" sweep "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 2 \
  --out "$WORK/full" >"$WORK/out" 2>"$WORK/err"
RC=$?
if [[ $RC != 0 && $RC != 1 ]]; then
  fail "full sweep exited $RC; stderr: $(cat "$WORK/err")"
fi
RESULTS=$WORK/full/results.csv
[[ -f $RESULTS ]] || { echo "FAIL: no results.csv" >&2; cat "$WORK/err" >&2; exit 1; }
[[ $(wc -l <"$RESULTS") == 9 ]] || fail "results.csv has $(wc -l <"$RESULTS") lines, expected 9"
head -1 "$RESULTS" | grep -q '^run,seed,clients\[0\]\.workload\.ops_per_second,fingerprint,passed,converged,' ||
  fail "unexpected header: $(head -1 "$RESULTS")"
head -1 "$RESULTS" | grep -q ',no lost writes,' || fail "no expectation column: $(head -1 "$RESULTS")"
# Rows by run index, grid point major, seed minor.
COLUMNS=$(cut -d, -f1-3 "$RESULTS" | tail -n +2 | tr '\n' ' ')
[[ $COLUMNS == "0,1,50 1,2,50 2,3,50 3,4,50 4,1,100 5,2,100 6,3,100 7,4,100 " ]] ||
  fail "unexpected run, seed, vary columns: $COLUMNS"
# The exit code agrees with the passed column (the 5th).
FAILED_ROWS=$(tail -n +2 "$RESULTS" | cut -d, -f5 | grep -c '^0$')
if [[ $FAILED_ROWS == 0 && $RC != 0 ]] || [[ $FAILED_ROWS != 0 && $RC != 1 ]]; then
  fail "exit code $RC with $FAILED_ROWS failed rows"
fi
[[ -s $WORK/full/summary.csv ]] || fail "no summary.csv"
head -1 "$WORK/full/summary.csv" | grep -q 'column,runs,pass_rate,mean,p50,p99$' ||
  fail "unexpected summary header: $(head -1 "$WORK/full/summary.csv")"
grep -q '^50,rto_seconds,4,' "$WORK/full/summary.csv" || fail "summary lacks 50,rto_seconds"
grep -q 'ops_per_second=100: 4 runs' "$WORK/out" || fail "no table in stdout: $(cat "$WORK/out")"

# Two shards, merged, equal the unsharded sweep.
sweep "$RC" "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 2 --shard 0/2 --out "$WORK/s0"
sweep "$RC" "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 2 --shard 1/2 --out "$WORK/s1"
[[ $(wc -l <"$WORK/s0/results.csv") == 5 ]] || fail "shard 0/2 has $(wc -l <"$WORK/s0/results.csv") lines"
sweep "$RC" --merge "$WORK/s1" "$WORK/s0" --out "$WORK/merged"
cmp -s "$RESULTS" "$WORK/merged/results.csv" || fail "merged shards differ from the unsharded results.csv"
cmp -s "$WORK/full/summary.csv" "$WORK/merged/summary.csv" || fail "merged summary.csv differs"
[[ $(head -2 "$WORK/s1/shard.txt") == $'shard 1/2\nruns 8' ]] ||
  fail "shard 1/2 wrote $(cat "$WORK/s1/shard.txt")"
[[ $(sed -n 3p "$WORK/s1/shard.txt") == "$(sed -n 3p "$WORK/s0/shard.txt")" &&
  $(sed -n 3p "$WORK/s1/shard.txt") == "sweep "?* ]] ||
  fail "the shards' sweep ids differ: $(cat "$WORK/s0/shard.txt" "$WORK/s1/shard.txt")"
[[ ! -e $WORK/full/shard.txt ]] || fail "an unsharded sweep wrote shard.txt"
# Results without shard records (copies of results.csv alone): overlapping
# identical inputs merge.
mkdir -p "$WORK/plain0"
cp "$WORK/s0/results.csv" "$WORK/plain0/"
sweep "$RC" --merge "$WORK/full" "$WORK/plain0" --out "$WORK/merged2"
cmp -s "$RESULTS" "$WORK/merged2/results.csv" || fail "overlapping merge differs"
# Shards with records: one that did not finish (no shard.txt), one given
# twice, or one missing is refused, by name.
sweep 2 --merge "$WORK/full" "$WORK/s0" --out "$WORK/m1"
expect_err "full: no shard.txt: the shard did not finish"
sweep 2 --merge "$WORK/s0" "$WORK/s0" "$WORK/s1" --out "$WORK/m1"
expect_err "shard 0 given twice"
sweep 2 --merge "$WORK/s1" --out "$WORK/m1"
expect_err "shard 0/2 is missing"
# A shard of another sweep (other seeds, same shape) is refused.
"$BTSIM" sweep "$SCENARIO" --seeds 5..8 --vary "$VARY" --jobs 2 --shard 1/2 \
  --out "$WORK/other1" >/dev/null 2>&1
[[ -f $WORK/other1/shard.txt ]] || fail "the other sweep's shard did not finish"
sweep 2 --merge "$WORK/s0" "$WORK/other1" --out "$WORK/m1"
expect_err "other1/results.csv: shard 1/2 of 8 runs is not of the same sweep"
# Running a shard again starts by removing what the last attempt left; one
# killed half-way leaves nothing to merge, and a finished run writes it all.
"$BTSIM" sweep "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 1 --shard 1/2 \
  --duration 10m --out "$WORK/s1" >/dev/null 2>&1 &
rerun=$!
for _ in $(seq 100); do [[ -e $WORK/s1/results.csv ]] || break; sleep 0.05; done
kill -9 "$rerun" 2>/dev/null; wait "$rerun" 2>/dev/null
[[ ! -e $WORK/s1/results.csv && ! -e $WORK/s1/shard.txt ]] ||
  fail "a restarted shard kept the last attempt's results.csv or shard.txt"
sweep 2 --merge "$WORK/s0" "$WORK/s1" --out "$WORK/m1"
expect_err "s1: no shard.txt: the shard did not finish"
sweep "$RC" "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 2 --shard 1/2 --out "$WORK/s1"
[[ -f $WORK/s1/shard.txt ]] || fail "a rerun shard has no shard.txt"

# The same sweep again (with another job count) gives the same bytes.
sweep "$RC" "$SCENARIO" --seeds 1..4 --vary "$VARY" --jobs 3 --out "$WORK/again"
cmp -s "$RESULTS" "$WORK/again/results.csv" || fail "a repeated sweep gave a different results.csv"

# A conflicting row: exit 2, naming the run and both files.
mkdir -p "$WORK/bad"
sed '2s/^\([^,]*,[^,]*,[^,]*,\)[0-9a-f]*/\1deadbeef/' "$WORK/s0/results.csv" >"$WORK/bad/results.csv"
sweep 2 --merge "$WORK/full" "$WORK/bad" --out "$WORK/m3"
expect_err "run 0 differs between .*full/results.csv and .*bad/results.csv"
# Different headers: exit 2.
sed '1s/,converged,/,convergd,/' "$WORK/s1/results.csv" >"$WORK/bad/results.csv"
sweep 2 --merge "$WORK/plain0" "$WORK/bad" --out "$WORK/m4"
expect_err "header differs"

# A failing expectation: exit 1, and the failed run is listed with a replay
# command.
sweep 1 "$SCENARIO" --seeds 3 --set 'expectations[0].at_most=-1' --duration 10s \
  --out "$WORK/failing"
grep -q "btsim run .* --seed 3 .*--set 'expectations\[0\].at_most=-1'" "$WORK/out" ||
  fail "no replay command: $(cat "$WORK/out")"
[[ $(tail -1 "$WORK/failing/results.csv" | cut -d, -f1-2,4) == "0,3,0" ]] ||
  fail "unexpected failing row: $(tail -1 "$WORK/failing/results.csv")"

# Invalid input: exit 2, the field named, nothing run or written.
sweep 2 "$SCENARIO" --seeds 1..2 --vary 'clients[0].workload.no_such_field=1,2' --out "$WORK/inv1"
expect_err "01-zone-outage-multi-cluster.textproto:.*no_such_field"
[[ ! -e $WORK/inv1/results.csv ]] || fail "an invalid sweep wrote results.csv"
sweep 2 "$SCENARIO" --seeds 1..2 --vary 'clients[0].workload.ops_per_second=50,-1' --out "$WORK/inv2"
expect_err "ops_per_second"
expect_err "grid point"
[[ ! -e $WORK/inv2/results.csv ]] || fail "an invalid sweep wrote results.csv"
sweep 2 "$SCENARIO" --seeds 4..1 --out "$WORK/inv3"
expect_err "--seeds"
sweep 2 "$SCENARIO" --seeds 1..2 --shard 2/2 --out "$WORK/inv4"
expect_err "--shard"
sweep 2 "$SCENARIO" --seeds 1..2 --out "$WORK/inv5" --merge "$WORK/full"
sweep 2 "$SCENARIO" --seeds 1..2 --vary seed=1,2 --out "$WORK/inv7"
expect_err "use --seeds"
sweep 2 "$SCENARIO" --seeds 1..2
sweep 2 "$WORK/missing.textproto" --seeds 1..2 --out "$WORK/inv6"

if [[ $FAILURES != 0 ]]; then
  echo "sweep_e2e: $FAILURES failure(s)" >&2
  exit 1
fi
echo "sweep_e2e: all checks passed"
