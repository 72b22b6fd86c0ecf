#!/usr/bin/env bash
# A peer's host vanishes while nothing flows: two network namespaces joined by a veth
# pair, rank 0 in one, rank 1 in the other (tcp). Rank 0 waits in a receive from rank 1,
# which sleeps; then rank 1's side of the veth goes down, so no FIN or RST ever arrives.
# Rank 0 must fail within about WEFT_TCP_KEEPALIVE (bound: 2x + 2 s) with an error
# naming rank 1, although WEFT_TIMEOUT is 120 s. Usage: partition_test.sh WAIT_FOR_PEER
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN; otherwise prints SKIP and exits 77. The namespaces
# are always deleted and the ranks killed by pid on exit.
set -u
PROG=$1
KEEPALIVE=${WEFT_TCP_KEEPALIVE:-4}
ID="$$$RANDOM"
ID=${ID:0:10}
NS=("weftns${ID}a" "weftns${ID}b")
VETH=("wv${ID}a" "wv${ID}b")
ADDR=("10.232.0.1" "10.232.0.2")
TMP=$(mktemp -d /tmp/weft_partition.XXXXXX)
PIDS=()
CREATED=()

cleanup() {
  local p ns
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; for r in 0 1; do sed "s/^/[rank $r] /" "$TMP/out.$r" 2>/dev/null; done; exit 1; }

command -v ip >/dev/null || skip "iproute2 ('ip') is not installed"
for ns in "${NS[@]}"; do
  err=$(ip netns add "$ns" 2>&1) || skip "cannot create a network namespace: $err"
  CREATED+=("$ns")
done
ip link add "${VETH[0]}" netns "${NS[0]}" type veth peer name "${VETH[1]}" netns "${NS[1]}" \
  || die "cannot create the veth pair"
for h in 0 1; do
  ip -n "${NS[$h]}" link set lo up || die "lo up"
  ip -n "${NS[$h]}" addr add "${ADDR[$h]}/24" dev "${VETH[$h]}" || die "address"
  ip -n "${NS[$h]}" link set "${VETH[$h]}" up || die "veth up"
done

for r in 0 1; do
  ip netns exec "${NS[$r]}" timeout -k 5 90 \
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
        MASTER_ADDR="${ADDR[0]}" MASTER_PORT=29511 WEFT_TRANSPORT=tcp \
        WEFT_SOCKET_IFNAME="=${VETH[$r]}" WEFT_TIMEOUT=120 WEFT_TCP_KEEPALIVE="$KEEPALIVE" \
        "$PROG" 60 >"$TMP/out.$r" 2>&1 &
  PIDS+=($!)
done
for _ in $(seq 300); do
  [ "$(cat "$TMP"/out.* 2>/dev/null | grep -c '^ready')" -eq 2 ] && break
  sleep 0.1
done
[ "$(cat "$TMP"/out.* | grep -c '^ready')" -eq 2 ] || die "ranks did not initialise in 30 s"
sleep 1  # rank 0 is now blocked in its receive; nothing flows
ip -n "${NS[1]}" link set "${VETH[1]}" down || die "cannot take rank 1's link down"
cut_ms=$(date +%s%3N)
echo "rank 1's link down at $cut_ms; WEFT_TCP_KEEPALIVE=$KEEPALIVE, WEFT_TIMEOUT=120"
wait "${PIDS[0]}"
rc=$?
grep -q "^DETECTED" "$TMP/out.0" || die "rank 0 did not report the lost peer (exit $rc)"
detected_ms=$(awk '/^DETECTED/ {print $2}' "$TMP/out.0")
took=$(( detected_ms - cut_ms ))
sed "s/^/[rank 0] /" "$TMP/out.0"
echo "rank 0 noticed the vanished peer $took ms after the link went down"
bound=$(( (2 * KEEPALIVE + 2) * 1000 ))
[ $rc -eq 0 ] || die "rank 0 exited with $rc"
[ $took -le $bound ] || die "took $took ms, over the bound of $bound ms"
echo "PASS"
