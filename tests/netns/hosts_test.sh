#!/usr/bin/env bash
# Several "hosts" in network namespaces behind a switch namespace (hosts_lib.sh), with one
# or more rails each, ranks of collectives_check on every host (bootstrapped the torchrun
# way); every rank must end with a clean summary. Ranks on one host talk over shm, hosts
# over tcp (unless the caller sets WEFT_TRANSPORT), selecting the interfaces by
# WEFT_SOCKET_IFNAME=rail (every rail: multi-rail tcp, docs/TRANSPORTS.md).
#
# Usage: hosts_test.sh --hosts H [--rails R] [--ranks-per-host L] [--gbit G]
#          [--rail-share PCT] [--expect-log REGEX] [--expect-rank-log R REGEX]
#          -- CHECK [check args...]
#   --rail-share PCT   every rail must have carried at least PCT% of the bytes the hosts
#                      sent over all rails (tx_bytes of the rail interfaces, summed over
#                      hosts): a behavioural check that messages were striped.
#   --expect-log REGEX rank 0's output must match REGEX (grep -E); may be repeated.
#   --expect-rank-log R REGEX  the same for rank R's output (e.g. which NIC it took).
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN for `ip netns`; otherwise prints SKIP and exits 77.
# The namespaces are deleted on exit, whatever happens.
set -u
H=2 R=1 L=2 G="" SHARE="" EXPECT=() RANK_EXPECT=()
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) H=$2; shift ;;  --rails) R=$2; shift ;;  --ranks-per-host) L=$2; shift ;;
    --gbit) G=$2; shift ;;  --rail-share) SHARE=$2; shift ;;  --expect-log) EXPECT+=("$2"); shift ;;
    --expect-rank-log) RANK_EXPECT+=("$2" "$3"); shift 2 ;;
    --) shift; break ;;
    *) echo "hosts_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ $# -ge 1 ] || { echo "usage: $0 --hosts H ... -- CHECK [args]" >&2; exit 2; }
source "$(dirname "$0")/hosts_lib.sh"
TMP=$(mktemp -d /tmp/weft_hosts.XXXXXX)
trap 'hosts_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
die() { echo "FAIL: $*" >&2; exit 1; }

command -v ip >/dev/null || { echo "SKIP: iproute2 ('ip') is not installed"; exit 77; }
[ -z "$G" ] || command -v tc >/dev/null || { echo "SKIP: tc is not installed"; exit 77; }
# Not in $(...): hosts_up must record what it creates in this shell, for hosts_down.
if ! hosts_up "$H" "$R" "$G" 2>"$TMP/up.err"; then
  err=$(cat "$TMP/up.err")
  # A failure to create the first namespace is a missing capability, not a bug.
  [[ $err == *"cannot create a network namespace"* ]] && { echo "SKIP: $err (run as root)"; exit 77; }
  die "setting up $H hosts x $R rails: $err"
fi
cat "$TMP/up.err" >&2
echo "$H hosts x $L ranks, $R rail(s) each${G:+, tbf $G Gbit/s per rail each way};" \
     "WEFT_TRANSPORT=${WEFT_TRANSPORT:-auto}; load: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A tx0
for h in $(seq 0 $((H - 1))); do
  for k in $(seq 0 $((R - 1))); do tx0[$h.$k]=$(rail_tx_bytes "$h" "$k"); done
done
t0=$(date +%s)
hosts_run "$H" "$L" "$TMP" "$@"
rc_all=$?
N=$((H * L))
for r in $(seq 0 $((N - 1))); do sed "s/^/[host $((r / L)) rank $r] /" "$TMP/out.$r"; done
echo "elapsed: $(( $(date +%s) - t0 )) s"
[ $rc_all -eq 0 ] || die "at least one rank failed (first code $rc_all)"
for r in $(seq 0 $((N - 1))); do
  grep -q "collectives_check: [0-9]* passed, 0 failed" "$TMP/out.$r" || die "rank $r: no clean summary"
done

if [ -n "$SHARE" ]; then
  total=0
  declare -a per_rail
  for k in $(seq 0 $((R - 1))); do
    per_rail[$k]=0
    for h in $(seq 0 $((H - 1))); do
      per_rail[$k]=$(( per_rail[k] + $(rail_tx_bytes "$h" "$k") - tx0[$h.$k] ))
    done
    total=$((total + per_rail[k]))
  done
  [ "$total" -gt 0 ] || die "the rails carried no bytes"
  for k in $(seq 0 $((R - 1))); do
    pct=$(( per_rail[k] * 100 / total ))
    echo "rail $k carried ${per_rail[$k]} of $total bytes ($pct%)"
    [ "$pct" -ge "$SHARE" ] || die "rail $k carried only $pct% of the bytes (at least $SHARE% expected)"
  done
fi
for expect in "${EXPECT[@]}"; do
  grep -Eq "$expect" "$TMP/out.0" || die "rank 0's output does not match '$expect'"
  echo "rank 0's output matches '$expect'"
done
for ((i = 0; i < ${#RANK_EXPECT[@]}; i += 2)); do
  r=${RANK_EXPECT[i]} expect=${RANK_EXPECT[i + 1]}
  grep -Eq "$expect" "$TMP/out.$r" || die "rank $r's output does not match '$expect'"
  echo "rank $r's output matches '$expect'"
done
echo "PASS"
