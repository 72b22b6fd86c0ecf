#!/usr/bin/env bash
# Asking a hung job from outside: SIGUSR1 sent to weftrun (not to the ranks) during a
# stalled allreduce makes every rank write its flight-recorder dump, with
# WEFT_FLIGHT_RECORDER_DIR unset (the default folder under TMPDIR), and no rank dies of
# it; weftrun prints where the dumps are and weft-doctor, pointed there, names the stuck
# rank. Then weftrun --timeout asks for dumps before it terminates the job (exit 124).
#   usr1_weftrun_test.sh WEFTRUN STRAGGLER DOCTOR
set -u
WEFTRUN=$1 STRAGGLER=$2 DOCTOR=$3
tmp=$(mktemp -d /tmp/usr1_weftrun.XXXXXX)
trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- weftrun output ---" >&2; cat "$tmp/out" >&2; exit 1; }
unset WEFT_FLIGHT_RECORDER_DIR
export TMPDIR=$tmp WEFT_TIMEOUT=60
dumps=$tmp/weft-flight-recorder-$(id -u)
count() { ls "$1"/weft-fr-*.json 2>/dev/null | wc -l; }

# 1. Rank 2 sleeps 10 s before its 4th allreduce (long enough for the dumps and the
# doctor, which take about a second); ranks never signal themselves.
"$WEFTRUN" -n 3 --timeout 60 -- "$STRAGGLER" 2 3 10 100000 >"$tmp/out" 2>&1 &
pid=$!
sleep 3
kill -USR1 "$pid"
for _ in $(seq 100); do [ "$(count "$dumps")" -ge 3 ] && break; sleep 0.1; done
[ "$(count "$dumps")" -eq 3 ] || fail "expected 3 dumps in $dumps, found $(count "$dumps")"
kill -0 "$pid" 2>/dev/null || fail "weftrun ended on SIGUSR1"
grep -q "received SIGUSR1: asked 3 of 3 ranks for a flight-recorder dump in $dumps (read them with: weft-doctor $dumps)" "$tmp/out" \
  || fail "weftrun did not say where the dumps are"
out=$("$DOCTOR" "$dumps") || fail "weft-doctor exited $?"
echo "$out"
grep -q "verdict: rank(s) 2 are behind" <<<"$out" || fail "weft-doctor did not name rank 2"
wait "$pid"; rc=$?
[ $rc -eq 0 ] || fail "the job exited $rc after the straggler caught up (a rank died of SIGUSR1?)"
grep -q "rank 0 done" "$tmp/out" && grep -q "rank 2 done" "$tmp/out" || fail "ranks did not finish"
echo "ok: SIGUSR1 to weftrun: 3 dumps, doctor names rank 2, the job finished"

# 2. --timeout during the stall: dumps first, then SIGTERM, exit 124.
rm -rf "$dumps"
"$WEFTRUN" -n 3 --timeout 3 --grace 2 -- "$STRAGGLER" 2 3 60 100000 >"$tmp/out" 2>&1 &
pid=$!
wait "$pid"; rc=$?
[ $rc -eq 124 ] || fail "weftrun --timeout exited $rc, expected 124"
grep -q "timeout: the job ran longer than 3 s: asked 3 of 3 ranks for a flight-recorder dump" "$tmp/out" \
  || fail "no dump request on timeout"
[ "$(count "$dumps")" -eq 3 ] || fail "expected 3 dumps after --timeout, found $(count "$dumps")"
"$DOCTOR" "$dumps" | grep -q "verdict: rank(s) 2 are behind" || fail "doctor after --timeout"
echo "ok: --timeout: 3 dumps before SIGTERM, exit 124"
echo PASS
