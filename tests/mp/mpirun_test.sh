#!/usr/bin/env bash
# weft under a real MPI launcher (not an environment map) on this host: NRANKS ranks of
# weft-bench find each other from the launcher's variables and MASTER_ADDR/MASTER_PORT;
# every collective is checked, then the nccl-tests command line runs.
#   openmpi  Open MPI's mpirun: OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE
#   mpich    MPICH's Hydra mpiexec (mpiexec.mpich): PMI_RANK, PMI_SIZE, MPI_LOCALRANKID,
#            MPI_LOCALNRANKS
# Each rank's WEFT_DEBUG=INFO init line must name that launcher, so a run that bootstrapped
# some other way (a stray RANK/WORLD_SIZE, say) fails. Skipped (77) where the launcher is
# missing.
# Usage: mpirun_test.sh WEFT_BENCH [NRANKS (2)] [openmpi|mpich (openmpi)]
# MPIRUN_TEST_MAX_BYTES: the nccl-tests line's -e; 128M (nccl-tests' own) at 2 ranks, 16M
# above: 4 ranks on 2 busy cores took 88 s to 128M and 30 s to 32M.
set -u
BENCH=$1
N=${2:-2}
LAUNCHER=${3:-openmpi}
MAX_BYTES=${MPIRUN_TEST_MAX_BYTES:-$( ((N > 2)) && echo 16M || echo 128M)}
TMP=$(mktemp -d /tmp/mpirun_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; tail -40 "$TMP/out" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

case $LAUNCHER in
  openmpi)
    command -v mpirun.openmpi >/dev/null ||
      { echo "SKIP: mpirun.openmpi not found (apt-get install openmpi-bin)"; exit 77; }
    # Root in CI containers; --oversubscribe because the machine may have fewer cores
    # than ranks; the self/vader/tcp BTLs keep Open MPI from probing for fabrics weft does
    # not use.
    launch_cmd() {  # PORT WEFT_DEBUG: sets CMD
      CMD=(mpirun.openmpi --allow-run-as-root --oversubscribe -n "$N" --mca btl "self,vader,tcp"
           -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$1" -x WEFT_TIMEOUT=120 -x WEFT_DEBUG="$2")
    }
    ;;
  mpich)
    # mpiexec.mpich, not mpiexec: the plain name is the system's alternative (Open MPI's
    # where both are installed). Hydra runs any number of processes on the local host.
    command -v mpiexec.mpich >/dev/null ||
      { echo "SKIP: mpiexec.mpich not found (apt-get install mpich)"; exit 77; }
    launch_cmd() {
      CMD=(mpiexec.mpich -n "$N" -genv MASTER_ADDR 127.0.0.1 -genv MASTER_PORT "$1"
           -genv WEFT_TIMEOUT 120 -genv WEFT_DEBUG "$2")
    }
    ;;
  *) echo "usage: $0 WEFT_BENCH [NRANKS] [openmpi|mpich]" >&2; exit 2 ;;
esac
# The launcher's own variables must decide the rank, not ones inherited from a caller.
unset WEFT_RANK WEFT_WORLD_SIZE RANK WORLD_SIZE SLURM_PROCID SLURM_NTASKS PMI_RANK PMI_SIZE \
      OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMIX_RANK WEFT_STORE_ADDR

run() {  # DEBUG DESCRIPTION ARGS...
  local debug=$1 what=$2 t0=$SECONDS; shift 2
  launch_cmd "$(free_port)" "$debug"
  timeout -k 10 300 "${CMD[@]}" "$BENCH" "$@" >"$TMP/out" 2>&1 ||
    fail "$what: ${CMD[0]} exited $?"
  grep -q "nranks $N " "$TMP/out" || fail "$what: not a world of $N ranks"
  grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "$what: results not checked OK"
  if [ "$debug" = INFO ]; then
    local r
    for ((r = 0; r < N; r++)); do
      grep -q "init from $LAUNCHER environment: rank $r of $N," "$TMP/out" ||
        fail "$what: rank $r did not init from the $LAUNCHER environment"
    done
    echo "every rank: $(grep -m1 -o "init from $LAUNCHER environment: rank 0 of $N, [^ ]* [^ ]*" "$TMP/out")"
  fi
  echo "ok ($((SECONDS - t0)) s): $LAUNCHER -n $N weft-bench $*"
}
run INFO "every collective" --collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1
run WARN "nccl-tests line" -b 8 -e "$MAX_BYTES" -f 2 -g 1 -o sum -r 0 -c 1
echo PASS
