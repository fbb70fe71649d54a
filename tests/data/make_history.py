#!/usr/bin/python3
"""Writes a SYNTHETIC history: N result files made from synthetic-h200.json, one per "commit".

usage: make_history.py OUT_DIR [N] [--slow K]

Run i gets meta.git "synthetic-<i>" and meta.started_at one day after run i-1; every sample is
redrawn around the original median with 1% noise. From run K on (default N // 2; 0 for none)
every GPU measurement of vecadd n=1048576 is 20% slower, so compare calls a regression between
runs K-1 and K. For the history report's tests and scripts/check-html.sh; not a measurement.
"""
import argparse
import datetime
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("n", nargs="?", type=int, default=6)
    parser.add_argument("--slow", type=int, default=None)
    args = parser.parse_args()
    slow = args.n // 2 if args.slow is None else args.slow
    with open(os.path.join(HERE, "synthetic-h200.json"), encoding="utf-8") as f:
        base = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    start = datetime.datetime(2026, 11, 1, 12, 0, 0)
    for i in range(args.n):
        rng = random.Random(1000 + i)
        doc = json.loads(json.dumps(base))
        doc["meta"]["git"] = f"synthetic-{i:03d}"
        doc["meta"]["started_at"] = (start + datetime.timedelta(days=i)).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        for r in doc["results"]:
            slower = (0 < slow <= i and r["benchmark"] == "vecadd"
                      and r["params"].get("n") == 1048576)
            for m in r["measurements"]:
                factor = 1.2 if slower and m["clock"] == "gpu" else 1.0
                mid = m["stats"]["median"] * factor
                samples = [mid * (1 + rng.gauss(0, 0.01)) for _ in m["samples"]]
                s = sorted(samples)
                k = len(s)
                med = s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2
                mean = sum(s) / k
                sd = (sum((x - mean) ** 2 for x in s) / (k - 1)) ** 0.5
                m["samples"] = samples
                m["stats"].update({"min": s[0], "max": s[-1], "median": med, "mean": mean,
                                   "stddev": sd, "rel_stddev": sd / mean})
                for key in m.get("rates", {}):
                    work = m["bytes"] if key == "bytes_per_s" else m["items"]
                    m["rates"][key] = work / med
        with open(os.path.join(args.out, f"run-{i:03d}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
