# Sourced by scripts/compare.sh --netns: two "hosts" on this machine, network namespaces
# NS[0] and NS[1] joined by a veth pair (VETH[0] in NS[0], VETH[1] in NS[1]) with
# addresses ADDR[0] and ADDR[1]. Addresses exist only inside the namespaces; the root
# namespace is never touched. netns_down deletes both (and with them the veth pair);
# the caller traps it on EXIT.
ID="$$$RANDOM"
ID=${ID:0:10}  # interface names are limited to 15 characters
NS=("weftcmp${ID}a" "weftcmp${ID}b")
VETH=("wc${ID}a" "wc${ID}b")
ADDR=("10.232.0.1" "10.232.0.2")
NETNS_CREATED=()

netns_down() {
  local ns
  for ns in "${NETNS_CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  NETNS_CREATED=()
}

netns_up() {
  local ns h
  for ns in "${NS[@]}"; do
    ip netns add "$ns" || { echo "compare: cannot create a network namespace (root needed)" >&2; return 1; }
    NETNS_CREATED+=("$ns")
  done
  ip link add "${VETH[0]}" netns "${NS[0]}" type veth peer name "${VETH[1]}" netns "${NS[1]}" || return 1
  for h in 0 1; do
    ip -n "${NS[$h]}" link set lo up &&
    ip -n "${NS[$h]}" addr add "${ADDR[$h]}/24" dev "${VETH[$h]}" &&
    ip -n "${NS[$h]}" link set "${VETH[$h]}" up || return 1
  done
  # Wait (bounded) until the link passes traffic: a fresh veth needs a moment.
  # A refused connection proves the path; captured, not piped (callers run with pipefail).
  local reply
  for _ in $(seq 50); do
    reply=$(ip netns exec "${NS[0]}" bash -c "exec 3<>/dev/tcp/${ADDR[1]}/9" 2>&1) || true
    [[ $reply == *refused* ]] && return 0
    sleep 0.1
  done
  echo "compare: note: could not confirm the veth passes traffic; continuing" >&2
}

# The host (0 or 1) a namespace address belongs to, for the MPI remote-launch agent.
netns_host_of() { [ "$1" = "${ADDR[1]}" ] && echo 1 || echo 0; }
