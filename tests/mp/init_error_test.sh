#!/usr/bin/env bash
# Rendezvous that cannot complete must fail within WEFT_TIMEOUT with a message that says
# what it waited for, on every rank, instead of hanging.
# Usage: init_error_test.sh WEFTRUN INIT_ONLY CASE
#   wrong_world_size: 2 ranks, rank 1 believes the world has 3
#   missing_rank:     2 ranks started of a world of 3
set -u
WEFTRUN=$1
INIT_ONLY=$2
CASE=$3
LIMIT=5          # WEFT_TIMEOUT given to the ranks
SLACK=15         # start-up and teardown on a loaded machine
TMP=$(mktemp -d /tmp/init_error.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL [$CASE]: $*" >&2; echo "--- output ---" >&2; cat "$TMP/out" >&2; exit 1; }

# Each rank ignores SIGTERM (the ignored disposition survives exec), so weftrun's
# teardown after the first failure cannot end it: every rank has to give up by itself
# within WEFT_TIMEOUT, or SIGKILL after --grace 30 comes too late for the time check.
WRAP='trap "" TERM; '
t0=$(date +%s%3N)
case "$CASE" in
  wrong_world_size)
    timeout $((LIMIT + SLACK + 40)) "$WEFTRUN" -n 2 --grace 30 -x WEFT_TIMEOUT=$LIMIT -- \
      sh -c "$WRAP"'if [ "$WEFT_RANK" = 1 ]; then export WEFT_WORLD_SIZE=3; fi; exec "$0"' \
      "$INIT_ONLY" >"$TMP/out" 2>&1
    ;;
  missing_rank)
    timeout $((LIMIT + SLACK + 40)) "$WEFTRUN" -n 2 --grace 30 -x WEFT_TIMEOUT=$LIMIT \
      -x WEFT_WORLD_SIZE=3 -- sh -c "$WRAP"'exec "$0"' "$INIT_ONLY" >"$TMP/out" 2>&1
    ;;
  *) fail "unknown case" ;;
esac
rc=$?
dt=$(( $(date +%s%3N) - t0 ))
cat "$TMP/out"
[ $rc -ne 0 ] || fail "weftrun exited 0; the rendezvous cannot have succeeded"
[ $rc -ne 124 ] || fail "hung until the outer timeout"
[ $dt -lt $(( (LIMIT + SLACK) * 1000 )) ] || fail "took ${dt} ms, WEFT_TIMEOUT was ${LIMIT} s"
for r in 0 1; do
  grep -q "^\[$r\] init_only: weftCommInitFromEnv failed" "$TMP/out" \
    || fail "rank $r did not report an init failure"
done
# At least one rank must say what went wrong: the disagreement itself (world size), or
# a timeout naming what it waited for (a store key, ranks, the world size).
grep -Eiq "init_only: .*world size [0-9]+.*world size [0-9]+|init_only: .*(timed out|timeout|deadline).*(waiting|wait for|key|ranks?) " "$TMP/out" \
  || fail "no rank says what it waited for or what disagreed"
echo "PASS [$CASE] in ${dt} ms"
