#!/usr/bin/env bash
# The Kubernetes recipes of docs/LAUNCHING.md, with every pod emulated as processes in a
# network namespace of its own (tests/netns/hosts_lib.sh), with its own hostname (a UTS
# namespace) and an /etc/hosts that maps the operator's service names to the pods'
# addresses, as the cluster's DNS does (`ip netns exec` mounts /etc/netns/NS/hosts over
# /etc/hosts). Each pod gets exactly the environment its operator sets, plus WEFT_TIMEOUT=60
# and WEFT_DEBUG=INFO as a manifest's env would, and nothing else (env -i); weft-bench runs
# every collective and checks every result.
#
#   pytorchjob N   Kubeflow PyTorchJob, 1 master + N-1 workers, one weft-bench per pod, the
#                  command run as is: MASTER_ADDR=<job>-master-0, MASTER_PORT=23456,
#                  WORLD_SIZE=N, RANK, PET_NNODES, PET_NPROC_PER_NODE=auto, PET_NODE_RANK
#                  (training-operator's envvar.go). Workers start first, the master 1 s
#                  later, as a worker pod may (its init container waits for DNS only).
#   torchrun_env   2 pods x 2 processes: what torchrun inside each pod (nprocPerNode: 2)
#                  gives its workers -- RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
#                  MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE=True -- with a
#                  listener holding MASTER_PORT in the master pod as torchrun's agent store
#                  does, so weft must serve its store on MASTER_PORT+1. torchrun itself
#                  (and torch) is not run: these are its variables, set by hand.
#   mpijob         Kubeflow MPIJob (Open MPI), a launcher pod and 2 worker pods with 2 slots
#                  each: the operator's hostfile (<job>-worker-i.<job>.<ns>.svc slots=2)
#                  and launcher variables (OMPI_MCA_orte_default_hostfile, ...); a real
#                  mpirun on the launcher starts the ranks in the workers through an rsh
#                  agent that enters the worker's namespace (the operator uses ssh), with
#                  -x MASTER_ADDR=<first host of the hostfile> -x MASTER_PORT. Runs
#                  mpirun.openmpi (plain "mpirun" may be another MPI's where several are
#                  installed); skipped (77) without it.
#   shm_size       one pod of 5 ranks over shm: a 64 MiB /dev/shm (a container runtime's
#                  default) fails naming /dev/shm; the recipe's emptyDir size passes.
#
# The first three assert: every pod exits 0, each rank found its rank and the store from the
# operator's variables (WEFT_DEBUG=INFO's "init from ... environment" line), ranks in
# different pods talk over tcp and ranks of one pod over shm, and rank 0 prints
# "Out of bounds values : 0 OK" for a world of the expected size.
# Needs root (ip netns); skipped (77) without it.
# Usage: k8s_env_test.sh WEFT_BENCH CASE [ARG]   (K8S_POD_TIMEOUT: seconds per pod, 150)
set -u
BENCH=$1 CASE=$2 ARG=${3:-}
POD_TIMEOUT=${K8S_POD_TIMEOUT:-150}  # wall-clock bound on each pod's command (seconds)
BENCH_ARGS=(--collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1)
# The PyTorchJob recipe's first line: wait (bounded) until the master's name resolves.
WAIT_DNS='timeout 30 sh -c '\''until getent hosts "$MASTER_ADDR" >/dev/null; do sleep 1; done'\'

command -v ip >/dev/null || { echo "SKIP: iproute2 ('ip') is not installed"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare (util-linux) is not installed"; exit 77; }
if [ "$CASE" = mpijob ]; then
  command -v mpirun.openmpi >/dev/null || { echo "SKIP: mpirun.openmpi not found (apt-get install openmpi-bin)"; exit 77; }
fi
source "$(dirname "$0")/../netns/hosts_lib.sh"
TMP=$(mktemp -d /tmp/k8s_env_test.XXXXXX)
NPODS=0
cleanup() {
  hosts_down
  local h
  for h in $(seq 0 $((NPODS - 1))); do rm -rf "/etc/netns/$(host_ns "$h")"; done
  rmdir /etc/netns 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*" >&2; for f in "$TMP"/out.*; do echo "--- $f" >&2; tail -25 "$f" >&2; done; exit 1; }

# pods_up NAME... : one namespace per pod; every pod's /etc/hosts maps every name (and
# its short form) to that pod's address, like the headless services' DNS records.
PODS=()
pods_up() {
  PODS=("$@")
  NPODS=$#
  if ! hosts_up "$NPODS" 1 2>"$TMP/up.err"; then
    local err; err=$(cat "$TMP/up.err")
    [[ $err == *"cannot create a network namespace"* ]] && { echo "SKIP: $err (run as root)"; exit 77; }
    fail "creating $NPODS pod namespaces: $err"
  fi
  local h g
  for h in $(seq 0 $((NPODS - 1))); do
    mkdir -p "/etc/netns/$(host_ns "$h")"
    {
      echo "127.0.0.1 localhost"
      for g in $(seq 0 $((NPODS - 1))); do
        echo "$(host_addr "$g" 0) ${PODS[$g]} ${PODS[$g]%%.*}"
      done
    } >"/etc/netns/$(host_ns "$h")/hosts"
  done
}

# pod_exec H CMD... : CMD in pod H (its namespace, its hostname: the pod name's first label).
pod_exec() {
  local h=$1; shift
  ip netns exec "$(host_ns "$h")" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
    "${PODS[$h]%%.*}" "$@"
}

# pod_run H OUT VAR=VALUE... -- CMD... : in the background, with exactly these variables
# (and PATH, HOME), bounded by POD_TIMEOUT; the pid is appended to HOSTS_PIDS.
pod_run() {
  local h=$1 out=$2; shift 2
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  pod_exec "$h" timeout -k 5 "$POD_TIMEOUT" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
    WEFT_TIMEOUT=60 WEFT_DEBUG=INFO "${vars[@]}" "$@" >"$out" 2>&1 &
  HOSTS_PIDS+=($!)
}

# wait_pods: waits for every pod started by pod_run; fails naming each that did not exit 0.
wait_pods() {
  local i rc bad=""
  for i in "${!HOSTS_PIDS[@]}"; do
    wait "${HOSTS_PIDS[$i]}"; rc=$?
    [ $rc -eq 0 ] || bad="$bad pod process $i exited $rc$([ $rc -eq 124 ] && echo ' (timed out)');"
  done
  HOSTS_PIDS=()
  [ -z "$bad" ] || fail "$bad"
}

# expect FILE FIXED-STRING WHAT
expect() { grep -qF -- "$2" "$1" || fail "$3: '$2' not in $(basename "$1")"; }

check_bench() {  # OUT NRANKS
  expect "$1" "nranks $2 " "rank 0"
  expect "$1" "Out of bounds values : 0 OK" "rank 0"
  local n; n=$(grep -c "^# Collective:" "$1")
  # all: allreduce, reduce, broadcast, allgather, reducescatter, alltoall, gather, scatter, sendrecv
  [ "$n" -eq 9 ] || fail "rank 0 ran $n collectives, not the 9 of --collective all"
}
check_bench_one() {  # OUT NRANKS: a single collective's run
  expect "$1" "nranks $2 " "rank 0"
  expect "$1" "Out of bounds values : 0 OK" "rank 0"
}

case $CASE in
pytorchjob)
  N=${ARG:-2} JOB=weftjob
  names=("$JOB-master-0")
  for i in $(seq 0 $((N - 2))); do names+=("$JOB-worker-$i"); done
  pods_up "${names[@]}"
  # Workers first (RANK = worker index + 1), then the master.
  for r in $(seq 1 $((N - 1))) 0; do
    [ "$r" -eq 0 ] && sleep 1
    pod_run "$r" "$TMP/out.$r" PYTHONUNBUFFERED=0 MASTER_PORT=23456 MASTER_ADDR="$JOB-master-0" \
      WORLD_SIZE="$N" RANK="$r" PET_NPROC_PER_NODE=auto PET_NODE_RANK="$r" PET_NNODES="$N" \
      -- sh -c "$WAIT_DNS"'; exec "$0" "$@"' "$BENCH" "${BENCH_ARGS[@]}"
  done
  wait_pods
  for r in $(seq 0 $((N - 1))); do
    expect "$TMP/out.$r" "init from torchrun environment: rank $r of $N, store $JOB-master-0:23456" "pod $r"
    expect "$TMP/out.$r" "rank $r: 0 shm peer(s), $((N - 1)) tcp peer(s)" "pod $r"
  done
  check_bench "$TMP/out.0" "$N"
  echo "ok: PyTorchJob, $N pods (1 master, $((N - 1)) worker(s)), one weft-bench each"
  ;;
torchrun_env)
  JOB=weftjob NODES=2 L=2
  pods_up "$JOB-master-0" "$JOB-worker-0"
  # torchrun's agent store holds MASTER_PORT on node 0 for the whole job.
  pod_exec 0 timeout -k 5 "$POD_TIMEOUT" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 23456)); s.listen(64); time.sleep(600)' >"$TMP/agent.log" 2>&1 &
  agent=$!
  for _ in $(seq 50); do
    pod_exec 0 bash -c 'exec 3<>/dev/tcp/127.0.0.1/23456' 2>/dev/null && break
    sleep 0.1
  done
  for node in 0 1; do
    for l in $(seq 0 $((L - 1))); do
      r=$((node * L + l))
      pod_run "$node" "$TMP/out.$r" MASTER_ADDR="$JOB-master-0" MASTER_PORT=23456 \
        WORLD_SIZE=$((NODES * L)) RANK=$r LOCAL_RANK=$l LOCAL_WORLD_SIZE=$L GROUP_RANK=$node \
        TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_RUN_ID=none OMP_NUM_THREADS=1 \
        -- "$BENCH" "${BENCH_ARGS[@]}"
    done
  done
  wait_pods
  kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null
  for r in $(seq 0 $((NODES * L - 1))); do
    expect "$TMP/out.$r" "init from torchrun environment: rank $r of $((NODES * L)), store $JOB-master-0:23457" "rank $r"
    expect "$TMP/out.$r" "rank $r: 1 shm peer(s), 2 tcp peer(s)" "rank $r"
  done
  check_bench "$TMP/out.0" $((NODES * L))
  echo "ok: 2 pods x 2 ranks with torchrun's variables; weft's store on MASTER_PORT+1"
  ;;
mpijob)
  JOB=weftmpi NSP=default SLOTS=2 W=2
  names=("$JOB-launcher.$JOB.$NSP.svc")
  for i in $(seq 0 $((W - 1))); do names+=("$JOB-worker-$i.$JOB.$NSP.svc"); done
  pods_up "${names[@]}"
  # The operator's ConfigMap: /etc/mpi/hostfile, one worker per line.
  for i in $(seq 0 $((W - 1))); do echo "$JOB-worker-$i.$JOB.$NSP.svc slots=$SLOTS"; done >"$TMP/hostfile"
  # The rsh agent: mpirun runs "AGENT HOST CMD..." for each worker; the operator's image
  # uses ssh, this enters the worker pod's namespace instead.
  {
    echo '#!/bin/bash'
    echo '# ssh options first (the operator sets OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10")'
    echo 'while [ "${1:-}" = -o ]; do shift 2; done'
    echo 'host=$1; shift'
    echo 'case $host in'
    for i in $(seq 0 $((W - 1))); do
      echo "  $JOB-worker-$i|$JOB-worker-$i.*) ns=$(host_ns $((i + 1))) ;;"
    done
    echo '  *) echo "agent: unknown host $host" >&2; exit 1 ;;'
    echo 'esac'
    # A fresh environment, as sshd gives: only mpirun's -x variables reach the ranks.
    echo 'exec ip netns exec "$ns" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \'
    echo '  unshare --uts sh -c '"'"'hostname "$0" && exec sh -c "$1"'"'"' "${host%%.*}" "$*"'
  } >"$TMP/agent.sh"
  chmod +x "$TMP/agent.sh"
  # The launcher's command as docs/LAUNCHING.md writes it: rank 0 runs on the hostfile's
  # first host, so that host is MASTER_ADDR.
  cat >"$TMP/launch.sh" <<EOF
MASTER_ADDR=\$(awk 'NR == 1 { print \$1 }' "\$OMPI_MCA_orte_default_hostfile")
exec mpirun.openmpi --allow-run-as-root -n $((W * SLOTS)) --mca plm_rsh_agent $TMP/agent.sh \
  --mca btl self,vader,tcp -x MASTER_ADDR="\$MASTER_ADDR" -x MASTER_PORT=23456 \
  -x WEFT_TIMEOUT -x WEFT_DEBUG $BENCH ${BENCH_ARGS[*]}
EOF
  # The operator mounts the hostfile at /etc/mpi/hostfile; here it stays in $TMP.
  pod_run 0 "$TMP/out.launcher" K_MPI_JOB_ROLE=launcher OMPI_MCA_orte_keep_fqdn_hostnames=true \
    OMPI_MCA_orte_default_hostfile="$TMP/hostfile" OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10" \
    OMPI_MCA_orte_set_default_slots=$SLOTS -- bash "$TMP/launch.sh"
  wait_pods
  out=$TMP/out.launcher
  for r in $(seq 0 $((W * SLOTS - 1))); do
    expect "$out" "init from openmpi environment: rank $r of $((W * SLOTS)), store $JOB-worker-0.$JOB.$NSP.svc:23456" "rank $r"
    expect "$out" "rank $r: $((SLOTS - 1)) shm peer(s), $(((W - 1) * SLOTS)) tcp peer(s)" "rank $r"
  done
  check_bench "$out" $((W * SLOTS))
  echo "ok: MPIJob (Open MPI), launcher + $W workers x $SLOTS slots, mpirun over the hostfile"
  ;;
shm_size)
  # One pod, 5 ranks (torchrun's variables, nprocPerNode: 5) over shm: 10 pairs of two
  # 4 MiB rings need 80 MiB of /dev/shm. The 64 MiB a container runtime gives /dev/shm by
  # default must fail with weft's message naming /dev/shm; the recipe's emptyDir sizing
  # (docs/LAUNCHING.md: L*(L-1)*WEFT_SHM_RING_BYTES plus headroom, here 96 MiB) must pass.
  # Each size is a tmpfs on /dev/shm in a private mount namespace of the pod.
  L=5
  pods_up weftjob-master-0
  for size in 64 96; do
    cat >"$TMP/pod.sh" <<EOF
mount -t tmpfs -o size=${size}m tmpfs /dev/shm || exit 3
pids=()
for l in \$(seq 0 $((L - 1))); do
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root WEFT_TIMEOUT=30 MASTER_ADDR=weftjob-master-0 \
    MASTER_PORT=23456 WORLD_SIZE=$L RANK=\$l LOCAL_RANK=\$l LOCAL_WORLD_SIZE=$L \
    $BENCH --collective allreduce -b 8 -e 64K -f 8 -c 1 -n 1 -w 1 >"$TMP/out.$size.\$l" 2>&1 &
  pids+=(\$!)
done
# As a launcher does: the first rank to fail ends the others.
rc=0
for _ in \${pids[@]}; do
  wait -n; r=\$?
  if [ \$r -ne 0 ] && [ \$rc -eq 0 ]; then rc=\$r; kill \${pids[@]} 2>/dev/null; fi
done
exit \$rc
EOF
    pod_exec 0 timeout -k 5 "$POD_TIMEOUT" unshare --mount bash "$TMP/pod.sh"
    rc=$?
    if [ $size = 64 ]; then
      [ $rc -ne 0 ] || fail "$L ranks ran on a 64 MiB /dev/shm"
      grep -qF "/dev/shm is full; enlarge it or lower WEFT_SHM_RING_BYTES" "$TMP"/out.64.* ||
        fail "no rank named the full /dev/shm"
      echo "ok: $L ranks on a 64 MiB /dev/shm fail: $(grep -hoF -m1 "/dev/shm is full; enlarge it or lower WEFT_SHM_RING_BYTES" "$TMP"/out.64.* | head -1)"
    else
      [ $rc -eq 0 ] || fail "$L ranks failed on a $size MiB /dev/shm (exit $rc)"
      check_bench_one "$TMP/out.$size.0" "$L"
      echo "ok: $L ranks on a $size MiB /dev/shm"
    fi
  done
  ;;
*) echo "k8s_env_test.sh: unknown case '$CASE' (pytorchjob N, torchrun_env, mpijob, shm_size)" >&2; exit 2 ;;
esac
echo PASS
