#!/usr/bin/env bash
# Multi-host measurements in network namespaces (tests/netns/hosts_lib.sh: H hosts behind
# a switch namespace, R rails each, every rail shaped with tc tbf both ways). Two modes,
# each comparing its variants in the same run, interleaved per repeat so load drift on a
# shared machine hits them alike; the fastest repeat of each size is kept (other jobs only
# add time). Prints a markdown table (and keeps the weft-bench JSON under --out).
#
#   --rails   2 hosts x L ranks, 2 rails per host: weft-bench with WEFT_SOCKET_NRAILS=1
#             against 2 (multi-rail tcp; with WEFT_TRANSPORT=ofi in the environment,
#             WEFT_OFI_NRAILS=1 against 2: multi-rail ofi); busbw per op and size, and the
#             ratio.
#   --hier    H hosts x L ranks, 1 rail: per op, WEFT_ALGO=<op>:ring, <op>:hierarchical, any
#             --also algorithms of that op, and the planner's own choice (read from its
#             WEFT_DEBUG=INFO line); µs per call, and whether the planner's choice was the
#             fastest of the forced algorithms at each size.
#             --also OP:NAME,...   more forced variants, e.g. allreduce:recursive_doubling
#             --cost-model SPEC    WEFT_COST_MODEL for the planner's runs (say
#                                  inter_gbps=0.5 to tell it the shaped rate; default: none,
#                                  the planner's built-in figures)
#
# Usage: netns_hosts_bench.sh --bench WEFT_BENCH (--rails | --hier) [--hosts 4]
#          [--ranks-per-host 1] [--gbit 1] [--ops allreduce,allgather,sendrecv]
#          [--also OP:NAME,...] [--cost-model SPEC]
#          [-b 1M] [-e 64M] [-n 5] [-w 2] [--repeat 2] [--out DIR]
# Needs root (ip netns, tc). Namespaces are deleted on exit; ranks run under timeout.
set -u
BENCH="" MODE="" H="" L=1 G=1 OPS="" MINB=1M MAXB=64M ITERS=5 WARM=2 REPEAT=2 OUT="" ALSO="" COST_MODEL=""
while [ $# -gt 0 ]; do
  case $1 in
    --bench) BENCH=$2; shift ;;  --rails) MODE=rails ;;  --hier) MODE=hier ;;
    --hosts) H=$2; shift ;;  --ranks-per-host) L=$2; shift ;;  --gbit) G=$2; shift ;;
    --ops) OPS=$2; shift ;;  -b) MINB=$2; shift ;;  -e) MAXB=$2; shift ;;
    -n) ITERS=$2; shift ;;  -w) WARM=$2; shift ;;  --repeat) REPEAT=$2; shift ;;
    --out) OUT=$2; shift ;;  --also) ALSO=$2; shift ;;  --cost-model) COST_MODEL=$2; shift ;;
    *) echo "netns_hosts_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BENCH" ] && [ -n "$MODE" ] || { echo "usage: $0 --bench WEFT_BENCH (--rails | --hier) ..." >&2; exit 2; }
if [ $MODE = rails ]; then R=2; H=${H:-2}; OPS=${OPS:-allreduce,allgather,sendrecv}
else R=1; H=${H:-4}; OPS=${OPS:-allreduce,allgather}; fi
source "$(dirname "$0")/../tests/netns/hosts_lib.sh"
HOSTS_RANK_TIMEOUT=${HOSTS_RANK_TIMEOUT:-500}
TMP=$(mktemp -d /tmp/weft_hostsbench.XXXXXX)
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"
trap 'hosts_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

[ "$G" = 0 ] && G="" # 0: unshaped
hosts_up "$H" "$R" "$G" || { echo "SKIP: cannot set up the namespaces (root needed)"; exit 77; }
echo "# $H hosts x $L rank(s), $R rail(s) per host, tbf $G Gbit/s per rail each way;" \
     "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {  # label op json [env...]
  local label=$1 op=$2 json=$3
  shift 3
  if ! hosts_run "$H" "$L" "$TMP" env "$@" "$BENCH" -o "$op" -b "$MINB" -e "$MAXB" -f 2 \
        -n "$ITERS" -w "$WARM" -c 0 --json "$json"; then
    echo "weft-bench $op ($label) failed:"; tail -5 "$TMP"/out.*; exit 1
  fi
  cp "$TMP/out.0" "${json%.json}.log"
}

for rep in $(seq 1 "$REPEAT"); do
  for op in ${OPS//,/ }; do
    if [ $MODE = rails ]; then
      run "1 rail" "$op" "$OUT/$op.rails1.$rep.json" WEFT_SOCKET_NRAILS=1 WEFT_OFI_NRAILS=1
      run "2 rails" "$op" "$OUT/$op.rails2.$rep.json" WEFT_SOCKET_NRAILS=2 WEFT_OFI_NRAILS=2
    else
      run ring "$op" "$OUT/$op.ring.$rep.json" WEFT_ALGO="$op:ring"
      run hierarchical "$op" "$OUT/$op.hierarchical.$rep.json" WEFT_ALGO="$op:hierarchical"
      for extra in ${ALSO//,/ }; do
        [ "${extra%%:*}" = "$op" ] || continue
        run "${extra#*:}" "$op" "$OUT/$op.${extra#*:}.$rep.json" WEFT_ALGO="$extra"
      done
      run planner "$op" "$OUT/$op.planner.$rep.json" WEFT_DEBUG=INFO \
        ${COST_MODEL:+WEFT_COST_MODEL=$COST_MODEL}
    fi
  done
done
[ -z "$COST_MODEL" ] || echo "# the planner's runs: WEFT_COST_MODEL=$COST_MODEL"
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg); packets dropped by the shapers: $(hosts_drops "$H" "$R")"

python3 - "$MODE" "$OUT" "$OPS" "$((H * L))" "$ALSO" <<'PY'
import glob, json, os, re, sys
mode, out, ops, nranks = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
also = [a.split(":", 1) for a in sys.argv[5].split(",") if ":" in a]

def variants_of(op):  # the forced variants of op, then the planner
    if mode == "rails":
        return ["rails1", "rails2"]
    return ["ring", "hierarchical"] + [n for o, n in also if o == op] + ["planner"]

def best(op, var):  # size -> (time_us, busbw) of the fastest repeat
    res = {}
    for f in glob.glob(os.path.join(out, f"{op}.{var}.*.json")):
        for r in json.load(open(f))["results"]:
            m = r["out_of_place"]
            if m and (r["size_bytes"] not in res or m["time_us"] < res[r["size_bytes"]][0]):
                res[r["size_bytes"]] = (m["time_us"], m["busbw_gbps"])
    return res

def choices(op):  # [(lo, hi, algorithm)] from the planner's INFO lines
    out_ = []
    for f in glob.glob(os.path.join(out, f"{op}.planner.*.log")):
        for m in re.finditer(r"planner: (\w+) of (\d+)\.\.(\d+) bytes on \d+ ranks -> (\S+)", open(f).read()):
            if m.group(1) == op:
                out_.append((int(m.group(2)), int(m.group(3)), m.group(4)))
    return out_

def size(b):
    for u, s in ((1 << 20, "M"), (1 << 10, "K")):
        if b >= u and b % u == 0: return f"{b // u}{s}"
    return str(b)

for op in ops:
    variants = variants_of(op)
    data = {v: best(op, v) for v in variants}
    print(f"\n### {op}\n")
    if mode == "rails":
        print("| size | 1 rail busbw GB/s | 2 rails busbw GB/s | 2 rails / 1 rail |")
        print("| --- | --- | --- | --- |")
        for s in sorted(data["rails1"]):
            a, b = data["rails1"][s][1], data["rails2"].get(s, (0, 0))[1]
            print(f"| {size(s)} | {a:.3f} | {b:.3f} | {b / a if a else 0:.2f}x |")
    else:
        ch = choices(op)
        forced = variants[:-1]
        # The planner's runs are more samples of the algorithm it chose: "fastest" pools
        # them with the forced runs of that algorithm (the fastest sample wins).
        print("| size | " + " | ".join(f"{v} µs" for v in forced) +
              " | planner µs (choice) | fastest forced | planner picked it? |")
        print("| --- " * (len(forced) + 4) + "|")
        for s in sorted(data["ring"]):
            plan = data["planner"].get(s, (float("inf"),))[0]
            # The planner logs bytes per call: the whole vector for allreduce and
            # broadcast, one rank's block for allgather and reducescatter.
            b = s if op in ("allreduce", "broadcast") else s // nranks
            pick = next((a for lo, hi, a in ch if lo <= b <= hi), "?")
            t = {v: data[v].get(s, (float("inf"),))[0] for v in forced}
            if pick in t:
                t[pick] = min(t[pick], plan)
            fast = min(forced, key=lambda v: t[v])
            if pick == fast:
                ok = "yes"
            elif pick in t:
                ok = f"no ({pick} {t[pick] / t[fast]:.2f}x the fastest)"
            else:
                ok = "not forced"
            cells = " | ".join(f"{data[v].get(s, (float('inf'),))[0]:.1f}" for v in forced)
            print(f"| {size(s)} | {cells} | {plan:.1f} ({pick}) | {fast} | {ok} |")
PY
