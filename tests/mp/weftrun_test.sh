#!/usr/bin/env bash
# Behaviour tests of weftrun itself (no weft library calls): output prefixing, fail-fast
# teardown, the grace period, --timeout, signal forwarding, environment, and that no
# rank outlives weftrun. Usage: weftrun_test.sh WEFTRUN CASE
# Every weftrun run is bounded by `timeout`; leftover processes are found by pid.
set -u
WEFTRUN=$1
CASE=$2
TMP=$(mktemp -d /tmp/weftrun_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

# Alive and not a zombie (an orphan may sit as a zombie until init reaps it).
alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

# Waits up to 5 s for every pid in the files $TMP/pid.* to be gone.
expect_no_leftovers() {
  local f p
  for f in "$TMP"/pid.*; do
    [ -e "$f" ] || fail "rank never wrote its pid file $f"
    p=$(cat "$f")
    for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
    if alive "$p"; then kill -9 "$p" 2>/dev/null; fail "process $p ($f) outlived weftrun"; fi
  done
}

now_ms() { date +%s%3N; }

case "$CASE" in
  prefix)
    out=$(timeout 30 "$WEFTRUN" -n 3 sh -c 'echo hi $WEFT_RANK; echo oops $WEFT_RANK >&2; printf "tail $WEFT_RANK"' 2>"$TMP/err")
    rc=$?
    [ $rc -eq 0 ] || fail "exit code $rc"
    for r in 0 1 2; do
      grep -qx "\[$r\] hi $r" <<<"$out" || fail "no '[$r] hi $r' in stdout: $out"
      grep -qx "\[$r\] tail $r" <<<"$out" || fail "partial line of rank $r not flushed: $out"
      grep -qx "\[$r\] oops $r" "$TMP/err" || fail "no '[$r] oops $r' in stderr: $(cat "$TMP/err")"
    done
    [ "$(wc -l <<<"$out")" -eq 6 ] || fail "expected 6 stdout lines: $out"
    out=$(timeout 30 "$WEFTRUN" -n 2 --no-prefix -- echo plain) || fail "--no-prefix run failed"
    [ "$out" = $'plain\nplain' ] || fail "--no-prefix output: $out"
    ;;
  env)
    out=$(timeout 30 "$WEFTRUN" -n 2 -x FOO=bar -x EMPTY= sh -c \
      'echo "$WEFT_RANK/$WEFT_WORLD_SIZE/$WEFT_LOCAL_RANK/$WEFT_LOCAL_WORLD_SIZE/$FOO/${EMPTY-unset}/${RANK-none}/$WEFT_STORE_ADDR"') \
      || fail "exit code $?"
    for r in 0 1; do
      grep -Eq "^\[$r\] $r/2/$r/2/bar//none/127\.0\.0\.1:[0-9]+$" <<<"$out" || fail "rank $r env: $out"
    done
    # Both ranks are told the same store address, and it has a real port.
    [ "$(sed 's/.*\///' <<<"$out" | sort -u | wc -l)" -eq 1 ] || fail "ranks disagree on the store: $out"
    grep -q ':0$' <<<"$out" && fail "store port 0 leaked: $out"
    # WEFT_AUX_PORT: one port for every rank, a real one, not the store's.
    aux=$(timeout 30 "$WEFTRUN" -n 2 --no-prefix sh -c 'echo "$WEFT_AUX_PORT ${WEFT_STORE_ADDR##*:}"') \
      || fail "exit code $?"
    [ "$(cut -d' ' -f1 <<<"$aux" | sort -u | wc -l)" -eq 1 ] \
      || fail "ranks disagree on WEFT_AUX_PORT: $aux"
    read -r aux_port store_port <<<"$(head -1 <<<"$aux")"
    [[ "$aux_port" =~ ^[0-9]+$ ]] && [ "$aux_port" -gt 0 ] && [ "$aux_port" -lt 65536 ] \
      || fail "WEFT_AUX_PORT is not a port: $aux"
    [ "$aux_port" != "$store_port" ] || fail "WEFT_AUX_PORT is the store's port: $aux"
    # -x NAME passes weftrun's own value (mpirun's form); an unset NAME is an error.
    mine=$(FROM_HERE=v1 timeout 30 "$WEFTRUN" -n 1 --no-prefix -x FROM_HERE sh -c 'echo "$FROM_HERE"') \
      || fail "-x NAME run failed"
    [ "$mine" = v1 ] || fail "-x FROM_HERE gave '$mine', expected v1"
    err=$(env -u NOT_SET_ANYWHERE timeout 10 "$WEFTRUN" -n 1 -x NOT_SET_ANYWHERE true 2>&1) \
      && fail "-x of an unset variable accepted"
    grep -q "NAME of a variable set in weftrun's environment, got 'NOT_SET_ANYWHERE'" <<<"$err" \
      || fail "-x unset: message was: $err"
    timeout 10 "$WEFTRUN" -n 1 /nonexistent/prog 2>/dev/null; rc=$?
    [ $rc -eq 127 ] || fail "missing program: exit $rc, expected 127"
    ;;
  secret)
    # Every rank gets the same fresh 64-hex-digit WEFT_SECRET; a new run gets another one;
    # the user's own (environment or -x) is passed through instead.
    out=$(timeout 30 "$WEFTRUN" -n 2 --no-prefix sh -c 'echo "$WEFT_SECRET"') || fail "exit code $?"
    [ "$(sort -u <<<"$out" | wc -l)" -eq 1 ] || fail "ranks got different secrets: $out"
    grep -Eq '^[0-9a-f]{64}$' <<<"$out" || fail "not 32 random bytes in hex: $out"
    again=$(timeout 30 "$WEFTRUN" -n 1 --no-prefix sh -c 'echo "$WEFT_SECRET"') || fail "exit code $?"
    [ "$again" != "$(head -1 <<<"$out")" ] || fail "two runs got the same secret"
    mine=$(WEFT_SECRET=from-env timeout 30 "$WEFTRUN" -n 1 --no-prefix sh -c 'echo "$WEFT_SECRET"')
    [ "$mine" = from-env ] || fail "WEFT_SECRET from the environment not kept: $mine"
    mine=$(timeout 30 "$WEFTRUN" -n 1 --no-prefix -x WEFT_SECRET=from-x sh -c 'echo "$WEFT_SECRET"')
    [ "$mine" = from-x ] || fail "-x WEFT_SECRET not kept: $mine"
    ;;
  failfast)
    # Rank 1 exits 3 after a moment; ranks 0 and 2 would sleep for a minute.
    t0=$(now_ms)
    timeout 60 "$WEFTRUN" -n 3 sh -c \
      'if [ $WEFT_RANK = 1 ]; then sleep 0.5; exit 3; fi; echo $$ > '"$TMP"'/pid.$WEFT_RANK; exec sleep 60' \
      2>"$TMP/err"
    rc=$?; dt=$(( $(now_ms) - t0 ))
    [ $rc -eq 3 ] || fail "exit code $rc, expected 3"
    [ $dt -lt 4000 ] || fail "took ${dt} ms to tear down (sleepers die on SIGTERM)"
    grep -q "weftrun: rank 1 exited with code 3" "$TMP/err" || fail "no failure message: $(cat "$TMP/err")"
    expect_no_leftovers
    ;;
  keep_going)
    # --keep-going: rank 1 fails at once; the others still finish their work and exit 0;
    # weftrun's code is the failing rank's.
    timeout 60 "$WEFTRUN" -n 3 --keep-going sh -c \
      'echo $$ > '"$TMP"'/pid.$WEFT_RANK; if [ $WEFT_RANK = 1 ]; then exit 3; fi; sleep 1; echo done $WEFT_RANK' \
      >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 3 ] || fail "exit code $rc, expected 3"
    grep -q "weftrun: rank 1 exited with code 3" "$TMP/err" || fail "no failure message: $(cat "$TMP/err")"
    for r in 0 2; do grep -qx "\[$r\] done $r" "$TMP/out" || fail "rank $r did not finish: $(cat "$TMP/out")"; done
    expect_no_leftovers
    ;;
  grace)
    # Rank 0 dies by SIGKILL; rank 1 ignores SIGTERM, so only SIGKILL after --grace ends it.
    t0=$(now_ms)
    timeout 60 "$WEFTRUN" -n 2 --grace 1 sh -c \
      'trap "" TERM; echo $$ > '"$TMP"'/pid.$WEFT_RANK; sleep 0.3; if [ $WEFT_RANK = 0 ]; then kill -9 $$; fi; while :; do sleep 0.1; done' \
      2>"$TMP/err"
    rc=$?; dt=$(( $(now_ms) - t0 ))
    [ $rc -eq 137 ] || fail "exit code $rc, expected 137 (128+SIGKILL)"
    grep -q "weftrun: rank 0 killed by signal 9" "$TMP/err" || fail "no signal message: $(cat "$TMP/err")"
    [ $dt -ge 1200 ] && [ $dt -lt 6000 ] || fail "took ${dt} ms; expected the 1 s grace period"
    expect_no_leftovers
    ;;
  timeout)
    t0=$(now_ms)
    timeout 60 "$WEFTRUN" -n 2 --timeout 1 --grace 1 sh -c 'echo $$ > '"$TMP"'/pid.$WEFT_RANK; exec sleep 60' 2>"$TMP/err"
    rc=$?; dt=$(( $(now_ms) - t0 ))
    [ $rc -eq 124 ] || fail "exit code $rc, expected 124"
    [ $dt -lt 5000 ] || fail "took ${dt} ms for --timeout 1"
    grep -q "timeout" "$TMP/err" || fail "no timeout message: $(cat "$TMP/err")"
    expect_no_leftovers
    # A job that finishes in time is unaffected.
    timeout 30 "$WEFTRUN" -n 2 --timeout 20 true || fail "a short job under --timeout failed"
    ;;
  signal)
    # SIGINT to weftrun reaches the ranks; weftrun exits 128+2.
    timeout 60 "$WEFTRUN" -n 2 sh -c 'echo $$ > '"$TMP"'/pid.$WEFT_RANK; exec sleep 60' 2>"$TMP/err" &
    wr=$!
    for _ in $(seq 100); do [ -e "$TMP/pid.1" ] && [ -e "$TMP/pid.0" ] && break; sleep 0.05; done
    kill -INT $wr
    wait $wr; rc=$?
    [ $rc -eq 130 ] || fail "exit code $rc, expected 130"
    expect_no_leftovers
    ;;
  parent_death)
    # weftrun killed with SIGKILL cannot clean up; PR_SET_PDEATHSIG must end the ranks.
    timeout 60 "$WEFTRUN" -n 2 sh -c 'echo $$ > '"$TMP"'/pid.$WEFT_RANK; exec sleep 60' &
    wr=$!
    for _ in $(seq 100); do [ -e "$TMP/pid.1" ] && [ -e "$TMP/pid.0" ] && break; sleep 0.05; done
    # `timeout` is the parent of weftrun: kill weftrun itself, by pid.
    kill -9 "$(pgrep -P $wr)" || fail "could not find weftrun under timeout ($wr)"
    wait $wr
    expect_no_leftovers
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$CASE]"
