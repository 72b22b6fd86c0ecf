#!/usr/bin/env bash
# weft under a real two-node Slurm on one machine: two network namespaces joined by a veth
# pair (netns_lib.sh, 10.231.0.1 and .2), node n0 in the first and n1 in the second, each
# with its own slurmd; slurmctld runs in n0's namespace, one munged (a filesystem socket,
# reachable from both) in the root one. srun -N 2 -n 4, from n0's namespace, runs weft-bench,
# which finds its rank from SLURM_PROCID/SLURM_NTASKS, its local rank and count from
# SLURM_LOCALID/SLURM_TASKS_PER_NODE, and its store on n0 (the first node of
# SLURM_STEP_NODELIST, resolved through a hosts file bind-mounted over /etc/hosts in each
# daemon's private mount namespace) at the port derived from the job and step ids. Checked:
# ranks 0-1 ran in n0's namespace and 2-3 in n1's, every rank saw 1 shm peer and 2 tcp
# peers (weft counts a network namespace as a host), every collective passed, then the
# nccl-tests line. Skipped (77) with the reason where Slurm or namespaces are missing or
# Slurm cannot start. Every daemon is stopped by its pid on exit, then the namespaces go.
#
# The daemons are entered into a namespace with nsenter --net (not ip netns exec, which
# remounts /sys and so hides /sys/fs/cgroup, without which slurmd 22.05 will not start).
# Their ports are fixed: the namespaces are created by this run, so nothing else listens
# in them, and the single-node test (tests/mp/slurm_test.sh, on 127.0.0.1 of the root
# namespace) cannot collide with them.
# Usage: slurm_two_nodes_test.sh WEFT_BENCH
set -u
BENCH=$1
for tool in munged slurmctld slurmd srun sinfo squeue scancel nsenter unshare ip python3; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found (apt-get install slurm-wlm util-linux iproute2)"; exit 77; }
done
[ -r /etc/munge/munge.key ] || { echo "SKIP: no /etc/munge/munge.key"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces, mount namespaces for the hosts file)"; exit 77; }
# shellcheck source=netns_lib.sh
source "$(dirname "$0")/netns_lib.sh"
D=$(mktemp -d /tmp/slurm_two_nodes.XXXXXX)
chmod 711 "$D"  # munged wants its socket's folder searchable by all
NS_A=${NETNS_NS[0]}; NS_B=${NETNS_NS[1]}
ADDR_A=${NETNS_ADDR[0]}; ADDR_B=${NETNS_ADDR[1]}

# in_ns NS CMD...: CMD in namespace NS's network, in a private mount namespace where
# /etc/hosts names the two nodes (so n0 and n1 resolve in the daemons and the ranks).
in_ns() {
  local ns=$1; shift
  nsenter --net="/run/netns/$ns" unshare --mount --propagation private \
    sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$D/hosts" "$@"
}
stop_pid() {  # PIDFILE: TERM, up to 5 s, then KILL
  local f=$1 pid; [ -s "$f" ] || return 0; pid=$(cat "$f")
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
}
stop() {
  local ns pids
  if [ -s "$D/ctld.pid" ]; then  # jobs first, so that no slurmstepd outlives its slurmd
    in_ns "$NS_A" timeout 10 scancel --user="$(id -un)" 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(in_ns "$NS_A" timeout 5 squeue -h 2>/dev/null)" ] && break; sleep 0.1
    done
  fi
  stop_pid "$D/n0.pid"; stop_pid "$D/n1.pid"; stop_pid "$D/ctld.pid"; stop_pid "$D/munge.pid"
  # Anything still in the namespaces (a slurmstepd, a rank) was started by this run.
  for ns in "${NETNS_CREATED[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
  done
  netns_destroy
  rm -rf "$D"
}
trap stop EXIT
trap 'exit 130' INT TERM
skip() {
  echo "SKIP: $*"
  for l in "$D"/*.log; do [ -e "$l" ] && { echo "--- $l"; tail -n 5 "$l"; }; done
  exit 77
}
fail() {
  echo "FAIL: $*" >&2; tail -n 40 "$D/out" >&2
  for l in "$D"/*.log; do echo "--- $l" >&2; tail -n 10 "$l" >&2; done
  exit 1
}

netns_create; rc=$?
[ $rc -eq 77 ] && skip "cannot create network namespaces here"
[ $rc -eq 0 ] || { echo "FAIL: netns_create failed ($rc)" >&2; exit 1; }
{ cat /etc/hosts; echo "$ADDR_A n0"; echo "$ADDR_B n1"; } >"$D/hosts"
host=$(hostname -s); cpus=$(nproc)
mkdir -p "$D/ctld" "$D/n0" "$D/n1"
# %n: each slurmd's node name, so the two have their own spool folder, pid and log files.
cat >"$D/slurm.conf" <<CONF
ClusterName=weftnetns
SlurmctldHost=$host($ADDR_A)
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
SlurmUser=$(id -un)
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/%n
SlurmctldPidFile=$D/ctld.pid
SlurmdPidFile=$D/%n.pid
SlurmctldLogFile=$D/ctld.log
SlurmdLogFile=$D/%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=n0 NodeAddr=$ADDR_A CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 State=UNKNOWN
NodeName=n1 NodeAddr=$ADDR_B CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 State=UNKNOWN
PartitionName=test Nodes=n0,n1 Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$D/slurm.conf
# The ranks must find their store from Slurm's variables alone, not a caller's leftovers.
unset MASTER_ADDR MASTER_PORT WEFT_STORE_ADDR WEFT_STORE_PORT RANK WORLD_SIZE
munged --force --socket="$D/munge.sock" --key-file=/etc/munge/munge.key --pid-file="$D/munge.pid" \
  --log-file="$D/munge.log" --seed-file="$D/munge.seed" >/dev/null 2>&1 || skip "munged did not start"
in_ns "$NS_A" slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start in $NS_A"
in_ns "$NS_A" slurmd -N n0 >/dev/null 2>&1 || skip "slurmd n0 did not start in $NS_A"
in_ns "$NS_B" slurmd -N n1 >/dev/null 2>&1 || skip "slurmd n1 did not start in $NS_B"
idle=0
for _ in $(seq 60); do
  idle=$(in_ns "$NS_A" timeout 5 sinfo -h -N -o %t 2>/dev/null | grep -c idle)
  [ "$idle" = 2 ] && break; sleep 0.5
done
[ "$idle" = 2 ] || skip "the two nodes did not become idle: $(in_ns "$NS_A" timeout 5 sinfo -N 2>&1)"
echo "two nodes: n0 in $NS_A ($ADDR_A) with slurmctld, n1 in $NS_B ($ADDR_B); $cpus CPUs each"

# run DESCRIPTION LIMIT ENV ARGS...: srun -N 2 -n 4 weft-bench ARGS with ENV (a comma list
# for --export), at most LIMIT seconds, each task first printing its node and network
# namespace (--label: "R: "). srun is waited for in the background so that a TERM (ctest's
# timeout) runs the cleanup at once. The limits add up to less than ctest's TIMEOUT.
run() {
  local what=$1 limit=$2 env=$3; shift 3
  local t0 rc; t0=$(date +%s)
  in_ns "$NS_A" timeout "$limit" srun -N 2 -n 4 --overcommit --label \
    --export="ALL,WEFT_TIMEOUT=120${env:+,$env}" \
    sh -c 'echo "node $SLURMD_NODENAME netns $(readlink /proc/self/ns/net)"; exec "$0" "$@"' \
    "$BENCH" "$@" >"$D/out" 2>&1 &
  wait $!; rc=$?
  [ $rc -eq 0 ] || fail "$what: srun exited $rc$([ $rc -eq 124 ] && echo " (timed out after $limit s)")"
  # Placement: ranks 0 and 1 on n0, 2 and 3 on n1, and each node in its own namespace.
  local r want ns
  for r in 0 1 2 3; do
    want=n$((r / 2))
    grep -Eq "^ *$r: node $want netns " "$D/out" || fail "$what: rank $r did not run on $want"
  done
  ns=$(sed -n 's/^ *\([0-3]\): node \(n[01]\) netns \(.*\)/\2 \3/p' "$D/out" | sort -u)
  if [ "$(echo "$ns" | wc -l)" != 2 ] || [ "$(echo "$ns" | cut -d' ' -f2 | sort -u | wc -l)" != 2 ]; then
    fail "$what: expected two nodes in two namespaces, got: $ns"
  fi
  grep -q "nranks 4 " "$D/out" || fail "$what: not a world of 4 ranks"
  grep -q "Out of bounds values : 0 OK" "$D/out" || fail "$what: results not checked OK"
  if grep -q "Out of bounds values : [1-9]" "$D/out"; then fail "$what: wrong values"; fi
  echo "ok ($(( $(date +%s) - t0 )) s): srun -N 2 -n 4 weft-bench $*"
}
# Every collective, with weft's own account of the links: every rank must have its node's
# other rank over shm and the other node's two over tcp.
run "every collective" 100 WEFT_DEBUG=INFO --collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1
for r in 0 1 2 3; do
  grep -Eq "^ *$r: .*rank $r: 1 shm peer\(s\), 2 tcp peer\(s\)" "$D/out" \
    || fail "every collective: rank $r does not report 1 shm and 2 tcp peers"
done
# The store: on n0 (the first node of SLURM_STEP_NODELIST), resolved to n0's address.
grep -Eq "^ *0: .*store serving on $ADDR_A:[0-9]+" "$D/out" \
  || fail "every collective: rank 0's store is not on n0 ($ADDR_A)"
grep -E "^ *[0-3]: (node|.*rank [0-3]: [0-9]+ shm peer|.*store serving)" "$D/out" | sort -n
for c in allreduce reduce broadcast allgather reducescatter alltoall gather scatter sendrecv; do
  grep -Eq "^ *0: # Collective: $c\$" "$D/out" || fail "every collective: no $c in the output"
done
grep -E "^ *0: # (Out of bounds|Avg bus)" "$D/out"
run "nccl-tests line" 240 "" -b 8 -e 128M -f 2 -g 1 -o sum -r 0 -c 1 -n 2 -w 1
grep -E "^ *0: +134217728 |^ *0: # (Out of bounds|Avg bus)" "$D/out"
echo PASS
