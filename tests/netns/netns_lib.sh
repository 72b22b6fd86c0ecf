# Two "hosts" on one machine, for scripts to source: two network namespaces joined by a
# veth pair, optionally shaped with tc tbf. Addresses are assigned only inside the
# namespaces; the root namespace is never touched. Needs CAP_SYS_ADMIN/CAP_NET_ADMIN.
#
#   netns_create [RATE]   creates them (RATE, e.g. 2gbit: a tbf qdisc on both veth ends,
#                         so each direction is limited; NETNS_TBF_LATENCY, default 20ms,
#                         is how long a packet may queue before the shaper drops it);
#                         sets NETNS_NS[0..1], NETNS_VETH[0..1], NETNS_ADDR[0..1]; returns
#                         once the veth passes traffic (bounded, 5 s); returns 77 when
#                         namespaces cannot be created here, 1 on another failure
#   netns_destroy         deletes what netns_create made (the veth goes with them)
# Used by the two-host tests here, tools/ofi-vs-tcp.sh and scripts/compare.sh --netns;
# the N-host bridge topology is hosts_lib.sh.
NETNS_ID="$$$RANDOM"
NETNS_ID=${NETNS_ID:0:10}  # interface names are limited to 15 characters
NETNS_NS=("weftns${NETNS_ID}a" "weftns${NETNS_ID}b")
NETNS_VETH=("wv${NETNS_ID}a" "wv${NETNS_ID}b")
NETNS_ADDR=("10.231.0.1" "10.231.0.2")
NETNS_CREATED=()

netns_create() {
  local rate=${1:-} ns h err
  command -v ip >/dev/null || { echo "netns: iproute2 ('ip') is not installed" >&2; return 77; }
  for ns in "${NETNS_NS[@]}"; do
    if ! err=$(ip netns add "$ns" 2>&1); then
      echo "netns: cannot create a network namespace (ip netns add: $err)" >&2
      return 77
    fi
    NETNS_CREATED+=("$ns")
  done
  ip link add "${NETNS_VETH[0]}" netns "${NETNS_NS[0]}" type veth peer name "${NETNS_VETH[1]}" \
    netns "${NETNS_NS[1]}" || { echo "netns: cannot create the veth pair" >&2; return 1; }
  for h in 0 1; do
    ip -n "${NETNS_NS[$h]}" link set lo up || return 1
    ip -n "${NETNS_NS[$h]}" addr add "${NETNS_ADDR[$h]}/24" dev "${NETNS_VETH[$h]}" || return 1
    ip -n "${NETNS_NS[$h]}" link set "${NETNS_VETH[$h]}" up || return 1
    if [ -n "$rate" ]; then
      # Token bucket: RATE sustained, a burst of 1 ms at that rate (at least 64 KiB), and
      # packets wait in the queue up to 20 ms before being dropped.
      ip netns exec "${NETNS_NS[$h]}" tc qdisc add dev "${NETNS_VETH[$h]}" root tbf \
        rate "$rate" burst 256kb latency "${NETNS_TBF_LATENCY:-20ms}" \
        || { echo "netns: tc tbf $rate on ${NETNS_VETH[$h]} failed" >&2; return 1; }
    fi
  done
  # A fresh veth needs a moment before it passes traffic. A refused TCP connection to
  # the discard port proves the path (no ping needed); captured, not piped, so callers
  # running with pipefail are not affected.
  local reply
  for _ in $(seq 50); do
    reply=$(ip netns exec "${NETNS_NS[0]}" bash -c "exec 3<>/dev/tcp/${NETNS_ADDR[1]}/9" 2>&1) || true
    [[ $reply == *refused* ]] && return 0
    sleep 0.1
  done
  echo "netns: note: could not confirm that the veth passes traffic; continuing" >&2
  return 0
}

netns_destroy() {
  local ns
  for ns in "${NETNS_CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  NETNS_CREATED=()
}
