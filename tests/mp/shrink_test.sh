#!/usr/bin/env bash
# weftCommShrink under weftrun --keep-going (shrink_check.cc): runs one mode on N ranks over
# one transport and checks that the expected number of ranks print PASS and none FAIL.
# Usage: shrink_test.sh WEFTRUN SHRINK_CHECK TRANSPORT N MODE [ARG]
#   MODE kill K: K ranks die one after the other (N - K must pass; weftrun's exit code is
#   the victims' and is not checked); storedead: rank 0 (hosting the store) dies, N - 1 must
#   pass; exclude, badargs: all N pass and weftrun exits 0.
set -u
WEFTRUN=$1
CHECK=$2
TRANSPORT=$3
N=$4
MODE=$5
ARG=${6:-}
TIMEOUT_S=5   # WEFT_TIMEOUT: short, so a wait that should not happen shows as a failure
OUT=$(mktemp /tmp/weft_shrink_test.XXXXXX)
DIR=$(mktemp -d /tmp/weft_shrink_test.XXXXXX)
trap 'rm -rf "$OUT" "$DIR"' EXIT
[ "$MODE" = storedead ] && ARG=$DIR

timeout -k 5 90 "$WEFTRUN" -n "$N" --keep-going --timeout 80 --grace 2 \
  -x WEFT_TRANSPORT="$TRANSPORT" -x WEFT_TIMEOUT=$TIMEOUT_S -- \
  "$CHECK" "$MODE" $ARG >"$OUT" 2>&1
rc=$?
cat "$OUT"
want=$N
[ "$MODE" = kill ] && want=$(( N - ARG ))
[ "$MODE" = storedead ] && want=$(( N - 1 ))
passed=$(grep -c "PASS rank" "$OUT")
problem=""
# weftrun and timeout exit 124 on their deadline; a killed victim makes weftrun exit 137.
if [ "$rc" -eq 124 ]; then
  problem="the job timed out"
elif [ "$MODE" != kill ] && [ "$MODE" != storedead ] && [ "$rc" -ne 0 ]; then
  problem="weftrun exited with $rc"
fi
grep -q "FAIL" "$OUT" && problem="a rank failed a check"
[ "$passed" -eq "$want" ] || problem="${problem:+$problem; }$passed of $want ranks passed"
if [ -n "$problem" ]; then
  echo "shrink_test FAIL ($TRANSPORT, $N ranks, $MODE $ARG): $problem"
  exit 1
fi
echo "shrink_test ok ($TRANSPORT, $N ranks, $MODE $ARG): $passed ranks passed"
