#!/usr/bin/env bash
# A peer's host vanishes: two network namespaces joined by a veth pair, rank 0 in one,
# rank 1 in the other (tcp); then rank 1's side of the veth goes down, so no FIN or RST
# ever arrives. Usage: partition_test.sh WAIT_FOR_PEER [idle|busy]
#   idle: nothing flows. Rank 0 waits in a receive from rank 1, which sleeps. Rank 0 must
#         fail within about WEFT_TCP_KEEPALIVE (TCP keep-alive probes).
#   busy: the link is shaped to 200 Mbit/s and both ranks run 4 MiB allreduces back to
#         back, so the link goes down mid-transfer with unacknowledged data in flight
#         (where keep-alive does not probe; TCP_USER_TIMEOUT does). Both ranks must fail.
# Bound: 2 x WEFT_TCP_KEEPALIVE + 2 s, with an error naming the other rank, although
# WEFT_TIMEOUT is 120 s.
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN; otherwise prints SKIP and exits 77. The namespaces
# are always deleted and the ranks killed by pid on exit.
set -u
PROG=$1
MODE=${2:-idle}
KEEPALIVE=${WEFT_TCP_KEEPALIVE:-4}
TMP=$(mktemp -d /tmp/weft_partition.XXXXXX)
PIDS=()
# shellcheck source=netns_lib.sh
source "$(dirname "$0")/netns_lib.sh"

cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  netns_destroy
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; for r in 0 1; do sed "s/^/[rank $r] /" "$TMP/out.$r" 2>/dev/null; done; exit 1; }

# busy: shaped to 200 Mbit/s, with room for 50 ms of queue, so the link goes down with
# data in flight.
RATE=""
[ "$MODE" = busy ] && RATE=200mbit
NETNS_TBF_LATENCY=50ms netns_create $RATE
case $? in
  0) ;;
  77) skip "network namespaces are not available here" ;;
  *) die "cannot set up the two namespaces" ;;
esac
NS=("${NETNS_NS[@]}") VETH=("${NETNS_VETH[@]}") ADDR=("${NETNS_ADDR[@]}")

for r in 0 1; do
  ip netns exec "${NS[$r]}" timeout -k 5 90 \
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
        MASTER_ADDR="${ADDR[0]}" MASTER_PORT=29511 WEFT_TRANSPORT=tcp \
        WEFT_SOCKET_IFNAME="=${VETH[$r]}" WEFT_TIMEOUT=120 WEFT_TCP_KEEPALIVE="$KEEPALIVE" \
        "$PROG" 60 "$MODE" >"$TMP/out.$r" 2>&1 &
  PIDS+=($!)
done
for _ in $(seq 300); do
  [ "$(cat "$TMP"/out.* 2>/dev/null | grep -c '^ready')" -eq 2 ] && break
  sleep 0.1
done
[ "$(cat "$TMP"/out.* | grep -c '^ready')" -eq 2 ] || die "ranks did not initialise in 30 s"
if [ "$MODE" = busy ]; then
  sleep 0.5  # both ranks are mid-allreduce: 4 MiB takes ~0.3 s at 200 Mbit/s
  REPORTERS=(0 1)
else
  sleep 1  # rank 0 is now blocked in its receive; nothing flows
  REPORTERS=(0)
fi
ip -n "${NS[1]}" link set "${VETH[1]}" down || die "cannot take rank 1's link down"
cut_ms=$(date +%s%3N)
echo "rank 1's link down at $cut_ms ($MODE); WEFT_TCP_KEEPALIVE=$KEEPALIVE, WEFT_TIMEOUT=120"
bound=$(( (2 * KEEPALIVE + 2) * 1000 ))
for r in "${REPORTERS[@]}"; do
  wait "${PIDS[$r]}"
  rc=$?
  grep -q "^DETECTED" "$TMP/out.$r" || die "rank $r did not report the lost peer (exit $rc)"
  detected_ms=$(awk '/^DETECTED/ {print $2}' "$TMP/out.$r")
  took=$(( detected_ms - cut_ms ))
  sed "s/^/[rank $r] /" "$TMP/out.$r"
  echo "rank $r noticed the vanished peer $took ms after the link went down"
  [ $rc -eq 0 ] || die "rank $r exited with $rc"
  [ $took -le $bound ] || die "rank $r took $took ms, over the bound of $bound ms"
done
echo "PASS"
