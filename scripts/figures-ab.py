#!/usr/bin/env python3
"""Summarises scripts/figures-ab.sh: the median of every measurement per side over the rounds,
and the new side's change against the old. Usage: figures-ab.py OUT_DIR"""
import glob
import json
import os
import re
import statistics
import sys


def rows(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    for r in doc.get("results", []):
        p = r.get("params", {})
        tag = ",".join(f"{k}={p[k]}" for k in ("n", "batch", "impl", "scenario") if k in p)
        for m in r.get("measurements", []):
            med = m.get("stats", {}).get("median")
            if med:
                yield f"{r['benchmark']} {tag} {m['name']}", med


def main():
    out = sys.argv[1]
    medians = {}  # (key, side) -> [median per round]
    for path in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
        m = re.match(r"(.+)-(old|new)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        for key, med in rows(path):
            medians.setdefault((f"{m.group(1)}: {key}", m.group(2)), []).append(med)
    keys = sorted({k for k, _ in medians})
    print("| measurement | old median (us) | new median (us) | change | rounds |")
    print("|---|---|---|---|---|")
    for key in keys:
        o, n = medians.get((key, "old")), medians.get((key, "new"))
        if not o or not n:
            continue
        om, nm = statistics.median(o), statistics.median(n)
        print(f"| {key} | {om * 1e6:.2f} | {nm * 1e6:.2f} | {100 * (nm / om - 1):+.2f}% | {len(o)}/{len(n)} |")


if __name__ == "__main__":
    main()
