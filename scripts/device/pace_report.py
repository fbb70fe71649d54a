#!/usr/bin/env python3
"""Eleventh session: summaries of host-pace data.
  pace_report.py energy FILE.json...   one line per --energy row: J/op, CV, the rate of every
                                       window and its CV, busy fractions, the counter poller
  pace_report.py threads FILE.jsonl    per 0.5 s from host_pace_sampler.py: steal, host CPU busy,
                                       each thread's CPU share over its life, and
                                       the two busiest threads' run share, run-queue wait and
                                       context switches"""
import json
import statistics as st
import sys


def cv(x):
    return st.stdev(x) / st.mean(x) * 100 if len(x) > 1 else 0.0


def energy(files):
    for f in files:
        d = json.load(open(f))
        for r in d["results"]:
            for m in r["measurements"]:
                e = m.get("energy")
                if not e or not e.get("supported"):
                    continue
                rate = [w["ops"] / w["seconds"] for w in e["per_window"]]
                share = e.get("counter_read_share")
                print(f"{f.rsplit('/', 1)[-1]:22s} {m['name'][:14]:14s} J/op {e['j_per_op']:.5g} "
                      f"cv {e['cv'] * 100:5.2f}% net {e['j_per_op_net']:.5g} "
                      f"rate {st.mean(rate):.6g}/s rate-cv {cv(rate):5.2f}% "
                      f"busy {e.get('busy_fraction', 0):.2f} min {e.get('busy_fraction_min', 0):.2f} "
                      f"host_bound {e.get('host_bound')} read {e['counter_read_s'] * 1e3:.2f} ms "
                      f"read-share {'-' if share is None else f'{share:.2f}'}")


def threads(path):
    recs = [json.loads(line) for line in open(path)]
    first, last = recs[0]["threads"], recs[-1]["threads"]
    total = {t: last[t]["run_ns"] - first.get(t, {"run_ns": 0})["run_ns"] for t in last}
    top = sorted(total, key=total.get, reverse=True)[:2]
    print(path, "busiest threads", [(last[t]["comm"], round(total[t] / 1e9, 2)) for t in top])
    seen = {}  # every thread that ran 50 ms or more: how long it lived and its CPU share then
    for r in recs:
        for t, v in r["threads"].items():
            s = seen.setdefault(t, [r["t"], r["t"], v["comm"], v["run_ns"], v["run_ns"]])
            s[1], s[4] = r["t"], v["run_ns"]
    for t, (t0, t1, comm, r0, r1) in seen.items():
        if r1 - r0 > 5e7:
            print(f"  thread {t} {comm}: lived {t1 - t0:.1f} s, ran {(r1 - r0) / 1e9 / max(t1 - t0, 1e-9):.2f} of it")
    step = 10
    for i in range(0, len(recs) - step, step):
        a, b = recs[i], recs[i + step]
        dt = b["t"] - a["t"]
        jiffies = max(sum(b["cpu"].values()) - sum(a["cpu"].values()), 1)
        steal = (b["cpu"]["steal"] - a["cpu"]["steal"]) / jiffies * 100
        busy = 100 - (b["cpu"]["idle"] - a["cpu"]["idle"]) / jiffies * 100
        row = []
        for t in top:
            if t in a["threads"] and t in b["threads"]:
                x, y = a["threads"][t], b["threads"][t]
                row.append(f"{(y['run_ns'] - x['run_ns']) / dt / 1e7:5.1f}% run "
                           f"{(y['wait_ns'] - x['wait_ns']) / dt / 1e7:4.1f}% wait "
                           f"nvcsw {y['nonvoluntary_ctxt_switches'] - x['nonvoluntary_ctxt_switches']:3d} "
                           f"cpu {y['cpu']:2d}")
        print(f"  t={a['t'] - recs[0]['t']:5.1f} s steal {steal:4.1f}% host busy {busy:5.1f}% | "
              + " | ".join(row))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("energy", "threads"):
        sys.exit(__doc__)
    if sys.argv[1] == "energy":
        energy(sys.argv[2:])
    else:
        threads(sys.argv[2])
