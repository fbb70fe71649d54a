#!/usr/bin/env python3
"""Eleventh session: samples, every PERIOD s until PID exits, the host's CPU time split
(/proc/stat, steal included) and each thread of PID: CPU time, run-queue wait
(/proc/PID/task/TID/schedstat), context switches and the CPU it last ran on. One JSON line a
sample, to OUT. Used by host-pace.sh to see why a host-launched row's pace varies."""
import json
import os
import sys
import time


def cpu_line():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                v = [int(x) for x in line.split()[1:]]
                keys = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
                return dict(zip(keys, v))
    return {}


def threads(pid):
    out = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                s = f.read()
            rest = s[s.rindex(")") + 2:].split()
            comm = s[s.index("(") + 1:s.rindex(")")]
            with open(f"{base}/{tid}/schedstat") as f:
                run_ns, wait_ns, slices = (int(x) for x in f.read().split())
            ctx = {}
            with open(f"{base}/{tid}/status") as f:
                for line in f:
                    if "ctxt_switches" in line:
                        k, v = line.split(":")
                        ctx[k.strip()] = int(v)
            out[tid] = {"comm": comm, "utime": int(rest[11]), "stime": int(rest[12]),
                        "cpu": int(rest[36]), "run_ns": run_ns, "wait_ns": wait_ns,
                        "slices": slices, **ctx}
        except (OSError, ValueError, IndexError):
            continue
    return out


def main():
    pid, out, period = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    with open(out, "w") as f:
        while os.path.exists(f"/proc/{pid}"):
            try:
                rec = {"t": time.monotonic(), "cpu": cpu_line(), "threads": threads(pid)}
            except OSError:
                break
            f.write(json.dumps(rec) + "\n")
            time.sleep(period)


if __name__ == "__main__":
    main()
