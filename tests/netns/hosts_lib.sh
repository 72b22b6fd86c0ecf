# Sourced by the multi-host scripts (tests/netns/hosts_test.sh, bench/netns_hosts_bench.sh,
# tests/sim/validate_netns.sh):
# H "hosts" on this machine, each a network namespace, joined through a "switch"
# namespace that holds one bridge per rail. Host h has R interfaces named rail0..rail<R-1>
# (so WEFT_SOCKET_IFNAME=rail selects them all); rail k of every host is on its own subnet,
# 10.234.k.0/24, host h at 10.234.k.<h+1>. With a rate, every host link is shaped with tc
# tbf in both directions (the host's egress on railk, its ingress on the switch port), as a
# full-duplex NIC of that rate. The kernel here has no netem, so there is no added delay.
#
#   hosts_up H R [GBIT]   create (returns non-zero when namespaces cannot be made);
#                         HOSTS_BURST_MS, HOSTS_DELAY_US, HOSTS_TBF_LATENCY: see
#                         hosts_shape
#   hosts_has_qdisc Q     true when the kernel has qdisc Q (tbf, netem)
#   hosts_down            delete every namespace created (traps call it; idempotent)
#   host_ns h             the namespace of host h
#   host_addr h k         host h's address on rail k
#   rail_tx_bytes h k     bytes host h has sent on rail k so far
#   hosts_drops H R       packets the shapers dropped so far
#   hosts_run H L OUTDIR CMD...   L ranks per host, torchrun-style variables, rank r's
#                         output in OUTDIR/out.r; returns the first non-zero exit code
#
# Addresses exist only inside the namespaces; the root namespace is never touched.
# Names carry a per-run id, so concurrent runs do not collide.
HOSTS_ID=$(printf '%05d' $(( ($$ + RANDOM) % 100000 )))
HOSTS_SW="wrsw$HOSTS_ID"
HOSTS_CREATED=()
HOSTS_PIDS=()
HOSTS_RANK_TIMEOUT=${HOSTS_RANK_TIMEOUT:-200}  # per-rank wall-clock bound (seconds)

host_ns() { echo "wrh$HOSTS_ID$1"; }
host_addr() { echo "10.234.$2.$(($1 + 1))"; }

hosts_down() {
  local p ns pids
  for p in "${HOSTS_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  # Every process inside these namespaces is one this run started (a rank whose timeout
  # wrapper died first would otherwise live on): TERM, a moment, then KILL.
  for ns in "${HOSTS_CREATED[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] || kill -TERM $pids 2>/dev/null
  done
  sleep 0.3
  for p in "${HOSTS_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for ns in "${HOSTS_CREATED[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
  done
  HOSTS_PIDS=()
  for ns in "${HOSTS_CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  HOSTS_CREATED=()
}

# tbf at GBIT with a bucket of 2 ms of the rate (a small bucket loses capacity when the
# refill timer fires late on a loaded machine; tests/sim/validate_netns.sh measured it).
# HOSTS_BURST_MS changes it; a link idle for that long sends its next burst at veth speed.
# HOSTS_DELAY_US adds that one-way delay with netem under the tbf, where the kernel has
# netem (hosts_has_netem; minimal kernels often lack CONFIG_NET_SCH_NETEM).
# HOSTS_TBF_LATENCY (default 50ms) is how long a packet may wait in the shaper's queue
# before it is dropped: the depth of the emulated switch buffer.
hosts_shape() {  # ns dev gbit
  local burst
  burst=$(awk -v g="$3" -v ms="${HOSTS_BURST_MS:-2}" 'BEGIN { printf "%d", g * 1e9 / 8 * ms / 1000 }')
  if [ "${HOSTS_DELAY_US:-0}" != 0 ]; then
    ip netns exec "$1" tc qdisc add dev "$2" root handle 1: netem delay "${HOSTS_DELAY_US}us" \
      limit 100000 || return 1
    ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: tbf rate "${3}gbit" \
      burst "$burst" latency "${HOSTS_TBF_LATENCY:-50ms}"
  else
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "${3}gbit" burst "$burst" latency "${HOSTS_TBF_LATENCY:-50ms}"
  fi
}

# True when this kernel has the qdisc named $1 (tbf, netem): tried on a scratch namespace.
hosts_has_qdisc() {
  local ns="wrq$HOSTS_ID" ok=1
  ip netns add "$ns" 2>/dev/null || return 1
  ip netns exec "$ns" tc qdisc add dev lo root "$1" $([ "$1" = tbf ] && echo rate 1gbit burst 16kb latency 50ms) \
    2>/dev/null && ok=0
  ip netns del "$ns" 2>/dev/null
  return $ok
}

hosts_up() {  # H R [GBIT]
  local H=$1 R=$2 G=${3:-} h k ns err
  if ! err=$(ip netns add "$HOSTS_SW" 2>&1); then
    echo "cannot create a network namespace (ip netns add: $err)" >&2
    return 1
  fi
  HOSTS_CREATED+=("$HOSTS_SW")
  ip -n "$HOSTS_SW" link set lo up
  for k in $(seq 0 $((R - 1))); do
    ip -n "$HOSTS_SW" link add "br$k" type bridge && ip -n "$HOSTS_SW" link set "br$k" up || return 1
  done
  for h in $(seq 0 $((H - 1))); do
    ns=$(host_ns "$h")
    ip netns add "$ns" || return 1
    HOSTS_CREATED+=("$ns")
    ip -n "$ns" link set lo up
    # No slow start after idle: a message after a pause should not pay for the pause.
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0 2>/dev/null
    for k in $(seq 0 $((R - 1))); do
      ip link add "p${h}r$k" netns "$HOSTS_SW" type veth peer name "rail$k" netns "$ns" || return 1
      ip -n "$HOSTS_SW" link set "p${h}r$k" master "br$k" && ip -n "$HOSTS_SW" link set "p${h}r$k" up || return 1
      ip -n "$ns" addr add "$(host_addr "$h" "$k")/24" dev "rail$k" && ip -n "$ns" link set "rail$k" up || return 1
      if [ -n "$G" ]; then
        hosts_shape "$ns" "rail$k" "$G" && hosts_shape "$HOSTS_SW" "p${h}r$k" "$G" || return 1
      fi
    done
  done
  # Bounded wait until every rail passes traffic (a fresh veth needs a moment): a refused
  # connection to host 0 proves the path.
  local reply ok
  for h in $(seq 1 $((H - 1))); do
    for k in $(seq 0 $((R - 1))); do
      ok=0
      for _ in $(seq 50); do
        reply=$(ip netns exec "$(host_ns "$h")" bash -c "exec 3<>/dev/tcp/$(host_addr 0 "$k")/9" 2>&1) || true
        [[ $reply == *refused* ]] && { ok=1; break; }
        sleep 0.1
      done
      [ $ok = 1 ] || echo "note: could not confirm host $h reaches host 0 on rail $k; continuing" >&2
    done
  done
}

# Packets the shapers of H hosts x R rails dropped so far (each a TCP retransmission).
hosts_drops() {  # H R
  local h k d total=0
  for h in $(seq 0 $(($1 - 1))); do
    for k in $(seq 0 $(($2 - 1))); do
      for d in $(ip netns exec "$(host_ns "$h")" tc -s qdisc show dev "rail$k" | sed -n 's/.*(dropped \([0-9]*\).*/\1/p') \
               $(ip netns exec "$HOSTS_SW" tc -s qdisc show dev "p${h}r$k" | sed -n 's/.*(dropped \([0-9]*\).*/\1/p'); do
        total=$((total + d))
      done
    done
  done
  echo $total
}

rail_tx_bytes() {  # h k
  ip netns exec "$(host_ns "$1")" cat "/sys/class/net/rail$2/statistics/tx_bytes"
}

hosts_run() {  # H L OUTDIR CMD...
  local H=$1 L=$2 dir=$3 h l r rc rc_all=0
  shift 3
  local port=$((29700 + RANDOM % 200))
  HOSTS_PIDS=()
  for h in $(seq 0 $((H - 1))); do
    for l in $(seq 0 $((L - 1))); do
      r=$((h * L + l))
      ip netns exec "$(host_ns "$h")" timeout -k 5 "$HOSTS_RANK_TIMEOUT" \
        env RANK=$r WORLD_SIZE=$((H * L)) LOCAL_RANK=$l LOCAL_WORLD_SIZE=$L \
            MASTER_ADDR="$(host_addr 0 0)" MASTER_PORT=$port \
            WEFT_SOCKET_IFNAME="${WEFT_SOCKET_IFNAME:-rail}" WEFT_TIMEOUT="${WEFT_TIMEOUT:-60}" \
            "$@" >"$dir/out.$r" 2>&1 &
      HOSTS_PIDS+=($!)
    done
  done
  for r in $(seq 0 $((H * L - 1))); do
    wait "${HOSTS_PIDS[$r]}"
    rc=$?
    if [ $rc -ne 0 ]; then
      [ $rc_all -ne 0 ] || rc_all=$rc
      echo "rank $r exited with code $rc$([ $rc -eq 124 ] && echo ' (timed out)')" >&2
    fi
  done
  HOSTS_PIDS=()
  return $rc_all
}
