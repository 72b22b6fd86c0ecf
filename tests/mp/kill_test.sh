#!/usr/bin/env bash
# kill -9 a random rank at a random point of a loop of collectives (kill_loop.cc), TRIALS
# times per world size in 2..4, over one transport: every survivor must return an error
# naming the dead rank within 2 x WEFT_TIMEOUT, no process may hang or outlive the job.
# Usage: kill_test.sh WEFTRUN KILL_LOOP TRANSPORT TRIALS [SEED]  (world sizes: $KILL_TEST_SIZES,
# default "2 3 4"; a failing trial prints its seed, which reproduces it)
# Every run is bounded by `timeout`; leftover processes are found by pid and killed.
set -u
WEFTRUN=$1
KILL_LOOP=$2
TRANSPORT=$3
TRIALS=$4
SEED=${5:-$(( $(date +%s) % 100000 ))}
TIMEOUT_S=5   # WEFT_TIMEOUT: survivors must report within 2x this (short, with room for 8 ranks on 2 busy cores)
TMP=$(mktemp -d /tmp/weft_kill_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "kill_test: transport $TRANSPORT, $TRIALS trial(s) per world size (${KILL_TEST_SIZES:-2 3 4}), seed $SEED"
failures=0
max_ms=0
detections=()

alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

for n in ${KILL_TEST_SIZES:-2 3 4}; do
  for t in $(seq "$TRIALS"); do
    seed=$(( SEED * 10000 + n * 1000 + t ))
    dir="$TMP/n$n.t$t"
    mkdir -p "$dir"
    start=$(date +%s%N)
    timeout -k 5 40 "$WEFTRUN" -n "$n" --keep-going --timeout 30 --grace 2 \
      -x WEFT_TRANSPORT="$TRANSPORT" -x WEFT_TIMEOUT=$TIMEOUT_S -- \
      "$KILL_LOOP" "$seed" "$dir" >"$dir/out" 2>&1
    rc=$?
    took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    survivors=$(grep -c "SURVIVOR rank" "$dir/out")
    problem=""
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 -a ! -e "$dir/death" ] && problem="job timed out (rc $rc)"
    grep -q "FAIL" "$dir/out" && problem="a rank failed the check"
    [ "$survivors" -eq $(( n - 1 )) ] || problem="$survivors of $((n - 1)) survivors reported"
    [ -e "$dir/death" ] || problem="no rank died"
    for f in "$dir"/pid.*; do
      [ -e "$f" ] || continue
      p=$(cat "$f")
      for _ in $(seq 30); do alive "$p" || break; sleep 0.1; done
      if alive "$p"; then kill -9 "$p" 2>/dev/null; problem="process $p ($f) outlived the job"; fi
    done
    if [ -n "$problem" ]; then
      failures=$((failures + 1))
      echo "FAIL n=$n seed=$seed ($took_ms ms): $problem"
      sed 's/^/    /' "$dir/out"
    else
      ms=$(grep -o "detected in [0-9.]* ms" "$dir/out" | awk '{print $3}' | sort -n | tail -1)
      detections+=("$ms")
      echo "ok   n=$n seed=$seed ($took_ms ms): slowest survivor detected the death in $ms ms"
      grep "SURVIVOR" "$dir/out" | head -1 | cut -c1-400 | sed 's/^/    e.g. /'
    fi
  done
done
if [ ${#detections[@]} -gt 0 ]; then
  printf '%s\n' "${detections[@]}" | sort -n | awk '{a[NR]=$1} END {printf "kill_test: %d ok trials; slowest-survivor detection ms: median %s, max %s (bound %d ms)\n", NR, a[int((NR+1)/2)], a[NR], 2000*'$TIMEOUT_S'}'
fi
if [ $failures -gt 0 ]; then echo "kill_test: $failures trial(s) failed"; exit 1; fi
echo "kill_test: all trials passed"
