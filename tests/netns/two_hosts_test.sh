#!/usr/bin/env bash
# Two "hosts" on one machine: two network namespaces behind a bridge (hosts_lib.sh), 2
# ranks of collectives_check in each (4 ranks), bootstrapped the torchrun way (RANK, WORLD_SIZE,
# LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR = host 0's address, MASTER_PORT), with
# WEFT_SOCKET_IFNAME naming each namespace's interface. Ranks on one host talk over shm and
# across hosts over tcp (weft counts a network namespace as a host), unless the caller
# sets WEFT_TRANSPORT=tcp (or ofi: libfabric's endpoint is bound to that interface through the
# same WEFT_SOCKET_IFNAME).
#
# Usage: two_hosts_test.sh COLLECTIVES_CHECK [collectives_check args...]
# NETNS_EXPECT_LOG=REGEX (optional): rank 0's output must also match REGEX (grep -E), e.g.
# the planner's WEFT_DEBUG=INFO line for a choice the test relies on; NETNS_EXPECT_LOG2:
# a second REGEX that must match as well. NETNS_EXPECT_EVERY_RANK=REGEX: every rank's
# output must match it (e.g. the transports of its links at WEFT_DEBUG=INFO).
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN for `ip netns`; otherwise prints SKIP and exits 77.
# The namespaces (and with them the veth pairs) are always deleted on exit. Addresses
# are assigned only inside the namespaces; the root namespace is never touched.
set -u
CHECK=$1
shift
# shellcheck source=hosts_lib.sh
source "$(dirname "$0")/hosts_lib.sh"
HOSTS_RANK_TIMEOUT=${NETNS_RANK_TIMEOUT:-200}  # per-rank wall-clock bound (seconds)
TMP=$(mktemp -d /tmp/weft_netns.XXXXXX)
trap 'hosts_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }

command -v ip >/dev/null || skip "iproute2 ('ip') is not installed"
hosts_up 2 1 || skip "cannot create network namespaces; run as root or with CAP_SYS_ADMIN"

echo "two hosts: $(host_ns 0) ($(host_addr 0 0)) and $(host_ns 1) ($(host_addr 1 0)), interface" \
     "rail0 each; WEFT_TRANSPORT=${WEFT_TRANSPORT:-auto}"
t0=$(date +%s)
rc_all=0
WEFT_SOCKET_IFNAME="=rail0" hosts_run 2 2 "$TMP" "$CHECK" "$@" || rc_all=$?
for r in 0 1 2 3; do sed "s/^/[host $((r / 2)) rank $r] /" "$TMP/out.$r"; done
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
if [ -n "${NETNS_EXPECT_EVERY_RANK:-}" ]; then
  for r in 0 1 2 3; do
    grep -Eq "$NETNS_EXPECT_EVERY_RANK" "$TMP/out.$r" ||
      die "rank $r's output does not match '$NETNS_EXPECT_EVERY_RANK'"
  done
  echo "every rank's output matches '$NETNS_EXPECT_EVERY_RANK'"
fi
echo "PASS"
