"""Reads the conformance runs' junit XML and judges weft against gloo.

For every world size: counts passed/failed/skipped per backend; fails (exit 1) when a
test passes on gloo but fails or is skipped on weft, unless expected_skips.txt names it
(a skip weft takes on purpose, with its reason), or when a weft test fails outright.
"""
import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def outcomes(xml_file):
    """{test name: 'passed' | 'failed' | 'skipped'} from one junit file."""
    result = {}
    for case in ET.parse(xml_file).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            result[case.get("name")] = "failed"
        elif case.find("skipped") is not None:
            result[case.get("name")] = "skipped"
        else:
            result[case.get("name")] = "passed"
    return result


def expected_skips(path):
    """{test name: reason}; lines are `name  reason`, # starts a comment."""
    skips = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, reason = line.partition(" ")
            if not reason.strip():
                sys.exit(f"compare.py: {path}: {name} has no reason")
            skips[name] = reason.strip()
    return skips


def counts(result):
    return {k: sum(1 for v in result.values() if v == k) for k in ("passed", "failed", "skipped")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--expected-skips", required=True)
    ap.add_argument("--backends", default="weft gloo", help="the runs to expect")
    ap.add_argument("out")
    ap.add_argument("world_sizes", nargs="+")
    args = ap.parse_args()
    allowed = expected_skips(args.expected_skips)
    problems = []
    for ws in args.world_sizes:
        runs = {}
        for backend in args.backends.split():
            f = Path(args.out) / f"{backend}-{ws}.xml"
            if f.is_file():
                runs[backend] = outcomes(f)
                c = counts(runs[backend])
                print(f"world size {ws}, {backend}: {c['passed']} passed, "
                      f"{c['failed']} failed, {c['skipped']} skipped")
            else:
                problems.append(f"world size {ws}: no result for {backend} ({f})")
        weft, gloo = runs.get("weft", {}), runs.get("gloo", {})
        for name, outcome in sorted(weft.items()):
            if outcome == "failed":
                problems.append(f"world size {ws}: weft fails {name}")
            elif outcome == "skipped" and gloo.get(name) == "passed" and name not in allowed:
                problems.append(f"world size {ws}: weft skips {name}, which gloo passes, "
                                "and expected_skips.txt gives no reason")
    for p in problems:
        print("conformance:", p)
    print("conformance:", "FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
