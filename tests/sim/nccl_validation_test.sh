#!/usr/bin/env bash
# The NCCL reference model's validation table in docs/SIMULATOR.md cannot go stale:
#  1. a refit (`weft-sim nccl-validate --fit`) of sim/calibration/published.csv must give
#     the figures checked in as sim/calibration/nccl_figures.json (to 1%), and
#  2. the predictions with those figures must equal the table's "predicted" column (to 1%,
#     the table printing 4 significant digits), row for row, with the same published values,
#     the same choice of algorithm and the same summary lines;
#  3. `weft-sim collective --model nccl` prints the same prediction as the table (16 p5
#     nodes, 8 GiB).
# Usage: nccl_validation_test.sh WEFT_SIM
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$root/sim/calibration/nccl_figures.json" "$tmp/refit.json"
"$sim" nccl-validate --fit --figures "$tmp/refit.json" > /dev/null
"$sim" nccl-validate --markdown > "$tmp/predicted.md"
"$sim" collective --model nccl --instance p5.48xlarge --nodes 16 -b 8G -e 8G > "$tmp/collective.txt"
sed -n '/<!-- nccl-validation:begin -->/,/<!-- nccl-validation:end -->/p' \
    "$root/docs/SIMULATOR.md" > "$tmp/doc.md"

python3 - "$root/sim/calibration/nccl_figures.json" "$tmp/refit.json" \
          "$tmp/predicted.md" "$tmp/doc.md" "$tmp/collective.txt" <<'PY'
import json, sys
shipped, refit, predicted, doc, collective = sys.argv[1:]
bad = []
a, b = json.load(open(shipped))["sets"], json.load(open(refit))["sets"]
for s, t in zip(a, b):
    for k, v in s.items():
        if isinstance(v, float) and abs(v - t[k]) > max(0.01 * abs(t[k]), 1e-3):
            bad.append(f"figure {s['name']}.{k}: checked in {v}, refit {t[k]}")

def rows(path):
    return [l.strip() for l in open(path) if l.startswith("| ") and "---" not in l
            and not l.startswith("| source")]

def summary(path):
    return [l.strip() for l in open(path) if l.startswith("- fit rows") or l.startswith("- holdout rows")]

p, d = rows(predicted), rows(doc)
if not d:
    bad.append("docs/SIMULATOR.md has no nccl-validation table")
if len(p) != len(d):
    bad.append(f"{len(p)} predicted rows, {len(d)} in the table")
for x, y in zip(p, d):
    cx, cy = [c.strip() for c in x.split("|")], [c.strip() for c in y.split("|")]
    same = cx[1:7] == cy[1:7] and cx[9] == cy[9]
    px, py = float(cx[7]), float(cy[7])
    if not same or abs(px - py) > 0.01 * py:
        bad.append(f"table: {y}\n  now: {x}")
if summary(predicted) != summary(doc):
    bad.append(f"summary now: {summary(predicted)}\n  table: {summary(doc)}")
row = [l.split() for l in open(collective) if not l.startswith("#")][0]
want = [float(l.split("|")[7]) for l in open(predicted)
        if l.startswith("| cg-hyperpod | holdout | p5.48xlarge | 16 | 8G |")][0]
if not row[3].startswith("nccl:") or abs(float(row[6]) - want) > 0.01 * want:
    bad.append(f"collective --model nccl: {row}, nccl-validate: {want}")
for m in bad:
    print("nccl_validation_test:", m)
sys.exit(1 if bad else 0)
PY
echo "nccl_validation_test: OK"
