#!/bin/sh
# A rank killed during registered (single-pass) collectives: every survivor reports an
# error naming it (registered_single_pass.cc, "kill"), in bounded time.
#   registered_kill.sh WEFTRUN BINARY N [allreduce|allgather|broadcast]
set -u
WEFTRUN=$1 BIN=$2 N=$3 COLL=${4:-allreduce}
out=$(timeout -k 5 60 "$WEFTRUN" -n "$N" --keep-going --timeout 50 --grace 2 \
      -x WEFT_TIMEOUT=20 -- "$BIN" kill "$COLL" 2>&1)
echo "$out"
survivors=$(echo "$out" | grep -c "survivor rank [0-9]*: named")
if echo "$out" | grep -q "FAIL rank"; then echo "registered_kill: a survivor failed"; exit 1; fi
if [ "$survivors" -ne $((N - 1)) ]; then
  echo "registered_kill: $survivors of $((N - 1)) survivors reported"; exit 1
fi
echo "registered_kill: ok"
