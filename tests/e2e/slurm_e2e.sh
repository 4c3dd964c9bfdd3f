#!/usr/bin/env bash
# `btsim sweep` on a real Slurm cluster of one node: starts munged, slurmctld
# and slurmd on this machine with a generated configuration (their own
# files and ports under a scratch directory), submits
# examples/slurm/sweep.sbatch as a 4-task array, requeues one task while it
# runs (Slurm kills it and runs it again), merges the shards and requires
# results.csv byte for byte equal to the same sweep on one machine. Stops
# every daemon it started, by PID. Exits 77 (skipped) without Slurm and
# munge (Debian: slurm-wlm, munge), or when not root.
# Usage: slurm_e2e.sh BTSIM
set -euo pipefail
BTSIM=$(realpath "$1")
source "$(dirname "$0")/lib.sh"
root=$(realpath "$(dirname "$0")/../..")
recipe=$root/examples/slurm/sweep.sbatch
scenario=$root/scenarios/examples/01-zone-outage-multi-cluster.textproto

for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (Debian packages slurm-wlm and munge)"
    exit 77
  fi
done
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: a single-node Slurm cluster needs root here"
  exit 77
fi

work=$(mktemp -d /tmp/btsim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
job=""
cleanup() {
  # Jobs first: slurmd's step daemons (slurmstepd) outlive it otherwise.
  if [[ -n $job ]]; then
    scancel "$job" 2>/dev/null || true
    for _ in $(seq 100); do
      [[ -z $(squeue -h -j "$job" 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work" 2>/dev/null || { sleep 1; rm -rf "$work"; }
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$work"/*.log; do
    echo "--- $log" >&2
    tail -n 20 "$log" >&2
  done
  exit 1
}

# munge, on a socket of our own.
mkdir -m 700 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key" >/dev/null
munged --foreground --force --key-file="$work/munge/munge.key" \
  --socket="$work/munge/socket" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/seed" --log-file="$work/munged.log" &
pids+=($!)

host=$(hostname -s)
ctld_port=$(pick_port)
slurmd_port=$(pick_port "$ctld_port")
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=btsim-e2e
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobRequeue=1
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i >/dev/null 2>&1 &
pids+=($!)
slurmd -D >/dev/null 2>&1 &
pids+=($!)

for _ in $(seq 100); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.2
done
[[ ${state:-} == idle ]] || fail "the Slurm node is '${state:-}', not idle"
echo "ok: single-node Slurm up ($host, slurmctld port $ctld_port)"

# The same sweep on one machine: 8 runs of 20 simulated minutes, about 2 s
# each (so that a task is still running when it is requeued).
seeds=1..8
sweep_args=--duration=20m
"$BTSIM" sweep "$scenario" --seeds "$seeds" $sweep_args --jobs 2 \
  --out "$work/single" >"$work/single.log" 2>&1 || [[ $? == 1 ]] ||
  fail "the single-machine sweep"

# The recipe, four tasks of one CPU each.
job=$(sbatch --parsable --array=0-3 --cpus-per-task=1 \
  --output="$work/task-%a.log" \
  --export="ALL,BTSIM=$BTSIM,SCENARIO=$scenario,SEEDS=$seeds,SWEEP_ARGS=$sweep_args,OUT=$work/sweep" \
  "$recipe") || fail "sbatch"
echo "ok: submitted array job $job"

# Task 1, once it runs, is requeued: Slurm kills it and runs it again.
for _ in $(seq 300); do
  task_state=$(squeue -h -j "${job}_1" -o %T 2>/dev/null || true)
  [[ $task_state == RUNNING ]] && break
  sleep 0.1
done
[[ $task_state == RUNNING ]] || fail "task 1 never ran (state '$task_state')"
sleep 1
[[ ! -e $work/sweep/shard-1/shard.txt ]] ||
  fail "task 1 finished before it could be requeued"
scontrol requeue "${job}_1" || fail "scontrol requeue"
# Slurm holds a requeued job for two minutes before it may start again:
# once it is back in the queue, let it start at once.
for _ in $(seq 300); do
  task_state=$(squeue -h -j "${job}_1" -o %T 2>/dev/null || true)
  [[ $task_state == PENDING ]] && break
  sleep 0.1
done
[[ $task_state == PENDING ]] || fail "task 1 is '$task_state' after the requeue"
scontrol update jobid="${job}_1" StartTime=now || fail "scontrol update"
echo "ok: requeued task 1 while it ran"

for _ in $(seq 1200); do
  [[ -z $(squeue -h -j "$job" 2>/dev/null) ]] && break
  sleep 0.1
done
[[ -z $(squeue -h -j "$job") ]] ||
  fail "the array job did not finish: $(squeue -j "$job" -o '%i %T %r %S')"
restarts=$(scontrol show job "${job}_1" 2>/dev/null |
  sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' || true)
[[ ${restarts:-0} -ge 1 ]] || fail "task 1 was not restarted (Restarts=${restarts:-?})"
echo "ok: array finished; task 1 ran again (restarts: $restarts)"

for k in 0 1 2 3; do
  [[ -f $work/sweep/shard-$k/shard.txt ]] || fail "shard $k did not finish"
done
"$BTSIM" sweep --merge "$work"/sweep/shard-* --out "$work/merged" \
  >"$work/merge.log" 2>&1 || [[ $? == 1 ]] || fail "the merge"
cmp "$work/single/results.csv" "$work/merged/results.csv" ||
  fail "merged results.csv differs from the single-machine sweep"
echo "ok: merged results.csv identical to the single-machine sweep"

# A shard that did not finish is refused, by name.
rm "$work/sweep/shard-2/shard.txt"
if "$BTSIM" sweep --merge "$work"/sweep/shard-* --out "$work/merged2" \
  >"$work/merge2.log" 2>&1; then
  fail "merged a shard without shard.txt"
fi
grep -q "shard-2: no shard.txt" "$work/merge2.log" ||
  fail "the refusal does not name shard-2: $(cat "$work/merge2.log")"
echo "ok: a shard that did not finish is refused"
echo "PASS: btsim sweep on Slurm"
