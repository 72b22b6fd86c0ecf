#!/usr/bin/env bash
# A real MPI launcher across two "hosts": two network namespaces joined by a veth pair
# (netns_lib.sh), 2 ranks of weft-bench in each (4 ranks). The launcher runs inside the
# first namespace, so it, its remote daemons and the ranks all talk over the veth
# addresses; its remote shell is netns_rsh.sh, which starts the daemon for the second
# host inside that host's namespace instead of over ssh.
#   openmpi  mpirun.openmpi --hostfile (2 slots per host), plm_rsh_agent=netns_rsh.sh; its
#            daemons reach back over the veth subnet (oob_tcp_if_include)
#   mpich    mpiexec.mpich -hosts ADDR0:2,ADDR1:2 -launcher ssh -launcher-exec netns_rsh.sh
# weft bootstraps from the launcher's variables with MASTER_ADDR = the first host's veth
# address, WEFT_SOCKET_IFNAME=wv (the veths). Every collective is checked (weft-bench -c 1),
# then the nccl-tests line (-e NETNS_MPI_MAX_BYTES, 8M by default). At WEFT_DEBUG=INFO
# every rank must have initialised from that launcher's environment with the store on the
# first host, and must count 1 shm peer (its host's other rank) and 2 tcp peers (the other
# host's ranks); rank 0's link detection must see 2 hosts x 2 ranks over the veth.
# Needs root (ip netns) and the launcher; otherwise prints SKIP and exits 77. The
# namespaces, and any process left in them, go on exit.
# Usage: mpi_two_hosts_test.sh openmpi|mpich WEFT_BENCH
set -u
LAUNCHER=$1
BENCH=$2
MAX_BYTES=${NETNS_MPI_MAX_BYTES:-8M}
HERE=$(cd "$(dirname "$0")" && pwd)
AGENT=$HERE/netns_rsh.sh
skip() { echo "SKIP: $*"; exit 77; }
case $LAUNCHER in
  openmpi) command -v mpirun.openmpi >/dev/null || skip "mpirun.openmpi not found (apt-get install openmpi-bin)" ;;
  mpich) command -v mpiexec.mpich >/dev/null || skip "mpiexec.mpich not found (apt-get install mpich)" ;;
  *) echo "usage: $0 openmpi|mpich WEFT_BENCH" >&2; exit 2 ;;
esac
# shellcheck source=netns_lib.sh
source "$HERE/netns_lib.sh"
TMP=$(mktemp -d /tmp/weft_netns_mpi.XXXXXX)
cleanup() {
  local ns pid
  for ns in "${NETNS_CREATED[@]}"; do  # whatever the launcher left behind, by pid
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done
  netns_destroy
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*" >&2; tail -60 "$TMP/out" >&2; exit 1; }

command -v ip >/dev/null || skip "iproute2 ('ip') is not installed"
netns_create
case $? in
  0) ;;
  77) skip "cannot create network namespaces; run as root or with CAP_SYS_ADMIN" ;;
  *) echo "FAIL: netns_create failed" >&2; exit 1 ;;
esac
NS0=${NETNS_NS[0]} ADDR0=${NETNS_ADDR[0]} ADDR1=${NETNS_ADDR[1]}
export NETNS_RSH_HOSTS="$ADDR0=${NETNS_NS[0]} $ADDR1=${NETNS_NS[1]}"
PORT=29500  # a fresh namespace: nothing else listens there
SUBNET=${ADDR0%.*}.0/24
# The launcher's variables must decide the rank, not ones inherited from a caller.
unset WEFT_RANK WEFT_WORLD_SIZE RANK WORLD_SIZE SLURM_PROCID SLURM_NTASKS PMI_RANK PMI_SIZE \
      OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMIX_RANK WEFT_STORE_ADDR
echo "two hosts: $NS0 ($ADDR0, ${NETNS_VETH[0]}) and ${NETNS_NS[1]} ($ADDR1, ${NETNS_VETH[1]});" \
     "$LAUNCHER launches from the first"

launch_cmd() {  # WEFT_DEBUG: sets CMD, the launcher's command line up to the program
  local env=(MASTER_ADDR="$ADDR0" MASTER_PORT="$PORT" WEFT_SOCKET_IFNAME=wv WEFT_TIMEOUT=120
             WEFT_DEBUG="$1")
  local e
  if [ "$LAUNCHER" = openmpi ]; then
    printf '%s slots=2\n%s slots=2\n' "$ADDR0" "$ADDR1" >"$TMP/hostfile"
    # --bind-to none: both "hosts" share this machine's cores.
    CMD=(mpirun.openmpi --allow-run-as-root --hostfile "$TMP/hostfile" -n 4 --bind-to none
         --mca plm_rsh_agent "$AGENT" --mca oob_tcp_if_include "$SUBNET"
         --mca btl "self,vader,tcp" --mca btl_tcp_if_include "$SUBNET")
    for e in "${env[@]}"; do CMD+=(-x "$e"); done
  else
    # -iface: the address the proxies reach mpiexec at (the first host's veth).
    CMD=(mpiexec.mpich -hosts "$ADDR0:2,$ADDR1:2" -n 4 -launcher ssh -launcher-exec "$AGENT"
         -iface "${NETNS_VETH[0]}")
    for e in "${env[@]}"; do CMD+=(-genv "${e%%=*}" "${e#*=}"); done
  fi
}

run() {  # WEFT_DEBUG DESCRIPTION ARGS...
  local debug=$1 what=$2 t0=$SECONDS r; shift 2
  launch_cmd "$debug"
  timeout -k 10 150 ip netns exec "$NS0" "${CMD[@]}" "$BENCH" "$@" >"$TMP/out" 2>&1 ||
    fail "$what: ${CMD[0]} exited $?"
  grep -q "nranks 4 " "$TMP/out" || fail "$what: not a world of 4 ranks"
  grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "$what: results not checked OK"
  if [ "$debug" = INFO ]; then
    for r in 0 1 2 3; do
      grep -q "init from $LAUNCHER environment: rank $r of 4, store $ADDR0:$PORT" "$TMP/out" ||
        fail "$what: rank $r did not init from the $LAUNCHER environment with the store at $ADDR0:$PORT"
      grep -q "rank $r: 1 shm peer(s), 2 tcp peer(s)" "$TMP/out" ||
        fail "$what: rank $r does not have 1 shm and 2 tcp peers (not 2 hosts x 2 ranks)"
    done
    grep -q "link detection: .* on 2 hosts x 2 ranks; rank 0 uses wv" "$TMP/out" ||
      fail "$what: rank 0's link detection did not see 2 hosts x 2 ranks over the veth"
    grep -m1 -o "init from $LAUNCHER environment: rank 0 of 4, store [^ ]*" "$TMP/out"
    grep -m1 -o "rank 2: 1 shm peer(s), 2 tcp peer(s)" "$TMP/out"
    grep -m1 -o "link detection: .* on 2 hosts x 2 ranks; rank 0 uses wv[^;]*" "$TMP/out"
  fi
  echo "ok ($((SECONDS - t0)) s): $LAUNCHER 2 hosts x 2 ranks weft-bench $*"
}
run INFO "every collective" --collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1
run WARN "nccl-tests line" -b 8 -e "$MAX_BYTES" -f 2 -g 1 -o sum -r 0 -c 1
echo PASS
