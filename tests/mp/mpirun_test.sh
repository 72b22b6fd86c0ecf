#!/usr/bin/env bash
# weft under a real Open MPI mpirun (not an environment map): 2 ranks on this host find
# each other from OMPI_COMM_WORLD_* and MASTER_ADDR/MASTER_PORT; every collective is
# checked, then the nccl-tests command line runs. Skipped (77) where mpirun is missing.
# Usage: mpirun_test.sh WEFT_BENCH
set -u
BENCH=$1
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (apt-get install openmpi-bin)"; exit 77; }
TMP=$(mktemp -d /tmp/mpirun_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; tail -40 "$TMP/out" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Root in CI containers; --oversubscribe because the machine may have fewer cores than
# ranks; the self/vader/tcp BTLs keep Open MPI from probing for fabrics weft does not use.
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -n 2 --mca btl self,vader,tcp
        -x MASTER_ADDR=127.0.0.1 -x WEFT_TIMEOUT=120)

run() {  # DESCRIPTION ARGS...
  local what=$1; shift
  timeout 300 "${MPIRUN[@]}" -x MASTER_PORT="$(free_port)" "$BENCH" "$@" >"$TMP/out" 2>&1 \
    || fail "$what: mpirun exited $?"
  grep -q "nranks 2 " "$TMP/out" || fail "$what: not a world of 2 ranks"
  grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "$what: results not checked OK"
  echo "ok: mpirun -n 2 weft-bench $*"
}
run "every collective" --collective all -b 8 -e 64K -f 8 -c 1 -n 2 -w 1
run "nccl-tests line" -b 8 -e 128M -f 2 -g 1 -o sum -r 0 -c 1
echo PASS
