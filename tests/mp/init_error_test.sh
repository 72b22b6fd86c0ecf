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

t0=$(date +%s%3N)
case "$CASE" in
  wrong_world_size)
    # --grace 30: rank 0 must fail on its own, not because weftrun stopped it.
    timeout $((LIMIT + SLACK + 30)) "$WEFTRUN" -n 2 --grace 30 -x WEFT_TIMEOUT=$LIMIT -- \
      sh -c 'if [ "$WEFT_RANK" = 1 ]; then export WEFT_WORLD_SIZE=3; fi; exec "$0"' "$INIT_ONLY" \
      >"$TMP/out" 2>&1
    ;;
  missing_rank)
    timeout $((LIMIT + SLACK + 30)) "$WEFTRUN" -n 2 --grace 30 -x WEFT_TIMEOUT=$LIMIT \
      -x WEFT_WORLD_SIZE=3 -- "$INIT_ONLY" >"$TMP/out" 2>&1
    ;;
  *) fail "unknown case" ;;
esac
rc=$?
dt=$(( $(date +%s%3N) - t0 ))
cat "$TMP/out"
[ $rc -ne 0 ] || fail "weftrun exited 0; the rendezvous cannot have succeeded"
[ $rc -ne 124 ] || fail "hung until the outer timeout"
[ $dt -lt $(( (LIMIT + SLACK) * 1000 )) ] || fail "took ${dt} ms, WEFT_TIMEOUT was ${LIMIT} s"
grep -q "init_only: weftCommInitFromEnv failed" "$TMP/out" || fail "no init failure reported"
# The message must say what was awaited: a timeout, naming the store key, rank or size.
grep -Eiq "init_only: .*(timed out|timeout|deadline).*(wait|key|rank|world|size|store)|init_only: .*(wait|key|rank|world|size|store).*(timed out|timeout|deadline)" "$TMP/out" \
  || fail "the error does not say what it waited for"
echo "PASS [$CASE] in ${dt} ms"
