#!/usr/bin/env bash
# Two "hosts" on one machine: two network namespaces joined by a veth pair, 2 ranks of
# collectives_check in each (4 ranks), bootstrapped the torchrun way (RANK, WORLD_SIZE,
# LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR = host 0's address, MASTER_PORT), with
# WEFT_SOCKET_IFNAME naming each namespace's veth. Ranks on one host talk over shm and
# across hosts over tcp (weft counts a network namespace as a host), unless the caller
# sets WEFT_TRANSPORT=tcp (or ofi: libfabric's endpoint is bound to the veth through the
# same WEFT_SOCKET_IFNAME).
#
# Usage: two_hosts_test.sh COLLECTIVES_CHECK [collectives_check args...]
# NETNS_EXPECT_LOG=REGEX (optional): rank 0's output must also match REGEX (grep -E), e.g.
# the planner's WEFT_DEBUG=INFO line for a choice the test relies on; NETNS_EXPECT_LOG2:
# a second REGEX that must match as well.
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN for `ip netns`; otherwise prints SKIP and exits 77.
# The namespaces (and with them the veth pair) are always deleted on exit. Addresses
# are assigned only inside the namespaces; the root namespace is never touched.
set -u
CHECK=$1
shift
LIMIT=${NETNS_RANK_TIMEOUT:-200}  # per-rank wall-clock bound (seconds)
ID="$$$RANDOM"
ID=${ID:0:10}                      # interface names are limited to 15 characters
NS=("weftns${ID}a" "weftns${ID}b")
VETH=("wv${ID}a" "wv${ID}b")
ADDR=("10.231.0.1" "10.231.0.2")
TMP=$(mktemp -d /tmp/weft_netns.XXXXXX)
PIDS=()
CREATED=()

cleanup() {
  local p ns
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }

command -v ip >/dev/null || skip "iproute2 ('ip') is not installed"
for ns in "${NS[@]}"; do
  if ! err=$(ip netns add "$ns" 2>&1); then
    skip "cannot create a network namespace (ip netns add: $err); run as root or with CAP_SYS_ADMIN"
  fi
  CREATED+=("$ns")
done
ip link add "${VETH[0]}" netns "${NS[0]}" type veth peer name "${VETH[1]}" netns "${NS[1]}" \
  || die "cannot create the veth pair"
for h in 0 1; do
  ip -n "${NS[$h]}" link set lo up || die "lo up in ${NS[$h]}"
  ip -n "${NS[$h]}" addr add "${ADDR[$h]}/24" dev "${VETH[$h]}" || die "address on ${VETH[$h]}"
  ip -n "${NS[$h]}" link set "${VETH[$h]}" up || die "${VETH[$h]} up"
done
# The veth must pass traffic before ranks rely on it (bounded: 5 s).
ip netns exec "${NS[0]}" timeout 5 ping -c 1 -W 1 "${ADDR[1]}" >/dev/null 2>&1 \
  || echo "note: ping across the veth failed (ping may be missing); continuing"

echo "two hosts: ${NS[0]} (${ADDR[0]}, ${VETH[0]}) and ${NS[1]} (${ADDR[1]}, ${VETH[1]});" \
     "WEFT_TRANSPORT=${WEFT_TRANSPORT:-auto}"
t0=$(date +%s)
for h in 0 1; do
  for l in 0 1; do
    r=$((h * 2 + l))
    ip netns exec "${NS[$h]}" timeout -k 5 "$LIMIT" \
      env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$l LOCAL_WORLD_SIZE=2 \
          MASTER_ADDR="${ADDR[0]}" MASTER_PORT=29500 \
          WEFT_SOCKET_IFNAME="=${VETH[$h]}" WEFT_TIMEOUT="${WEFT_TIMEOUT:-60}" \
          "$CHECK" "$@" >"$TMP/out.$r" 2>&1 &
    PIDS+=($!)
  done
done
rc_all=0
for r in 0 1 2 3; do
  wait "${PIDS[$r]}"
  rc=$?
  [ $rc -eq 0 ] || { [ $rc_all -ne 0 ] || rc_all=$rc; }
  sed "s/^/[host $((r / 2)) rank $r] /" "$TMP/out.$r"
  [ $rc -eq 0 ] || echo "rank $r exited with code $rc$([ $rc -eq 124 ] && echo ' (timed out)')"
done
PIDS=()
echo "elapsed: $(( $(date +%s) - t0 )) s"
[ $rc_all -eq 0 ] || die "at least one rank failed (first code $rc_all)"
for r in 0 1 2 3; do
  grep -q "collectives_check: [0-9]* passed, 0 failed" "$TMP/out.$r" || die "rank $r: no clean summary"
done
for expect in "${NETNS_EXPECT_LOG:-}" "${NETNS_EXPECT_LOG2:-}"; do
  [ -n "$expect" ] || continue
  grep -Eq "$expect" "$TMP/out.0" || die "rank 0's output does not match '$expect'"
  echo "rank 0's output matches '$expect'"
done
echo "PASS"
