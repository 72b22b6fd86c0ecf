#!/usr/bin/env bash
# weft under a real single-node Slurm: munged, slurmctld and slurmd started here (in a
# private folder, on free ports, stopped on exit), then srun -n 4 runs weft-bench, which
# finds its rank from SLURM_PROCID/SLURM_NTASKS and its store on the first node of the step
# at the port derived from the job and step ids: every collective checked, then the
# nccl-tests line. Skipped (77) with the reason where Slurm is missing or cannot start.
# Usage: slurm_test.sh WEFT_BENCH
set -u
BENCH=$1
for tool in munged slurmctld slurmd srun sinfo; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found (apt-get install slurm-wlm)"; exit 77; }
done
[ -r /etc/munge/munge.key ] || { echo "SKIP: no /etc/munge/munge.key"; exit 77; }
D=$(mktemp -d /tmp/slurm_test.XXXXXX)
# Stops what this test started, by pid: jobs first (so no slurmstepd outlives slurmd),
# then slurmd, slurmctld and munged, each waited for (bounded) and killed if it lingers.
stop_pid() {
  local f=$1 pid; [ -s "$f" ] || return 0; pid=$(cat "$f")
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
}
stop() {
  if [ -s "$D/ctld.pid" ]; then
    scancel --user="$(id -un)" 2>/dev/null
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  stop_pid "$D/d.pid"; stop_pid "$D/ctld.pid"; stop_pid "$D/munge.pid"
  rm -rf "$D"
}
trap stop EXIT
skip() { echo "SKIP: $*"; for l in "$D"/*.log; do echo "--- $l"; tail -5 "$l"; done; exit 77; }
fail() { echo "FAIL: $*" >&2; tail -30 "$D/out" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host=$(hostname -s); cpus=$(nproc)
mkdir -p "$D/ctld" "$D/d" && chmod 700 "$D"
cat >"$D/slurm.conf" <<CONF
ClusterName=wefttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
SlurmUser=$(id -un)
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/d
SlurmctldPidFile=$D/ctld.pid
SlurmdPidFile=$D/d.pid
SlurmctldLogFile=$D/ctld.log
SlurmdLogFile=$D/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$D/slurm.conf
munged --force --socket="$D/munge.sock" --key-file=/etc/munge/munge.key --pid-file="$D/munge.pid" \
  --log-file="$D/munge.log" --seed-file="$D/munge.seed" >/dev/null 2>&1 || skip "munged did not start"
slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start"
slurmd >/dev/null 2>&1 || skip "slurmd did not start"
for _ in $(seq 60); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %t 2>/dev/null | grep -q idle || skip "the node did not become idle: $(sinfo 2>&1)"

run() {  # DESCRIPTION ARGS...
  local what=$1; shift
  timeout 300 srun --overcommit -N 1 -n 4 --export=ALL,WEFT_TIMEOUT=120 "$BENCH" "$@" >"$D/out" 2>&1 \
    || fail "$what: srun exited $?"
  grep -q "nranks 4 " "$D/out" || fail "$what: not a world of 4 ranks"
  grep -q "Out of bounds values : 0 OK" "$D/out" || fail "$what: results not checked OK"
  echo "ok: srun -n 4 weft-bench $*"
}
run "every collective" --collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1
# nccl-tests' flags up to 8 MiB: the 128 MiB rows of 4 ranks on a 2-core runner took most
# of this test's 50 s; weftrun runs that line to 128 MiB (bench_flags_test.sh).
run "nccl-tests line" -b 8 -e 8M -f 2 -g 1 -o sum -r 0 -c 1 -n 2 -w 1
echo PASS
