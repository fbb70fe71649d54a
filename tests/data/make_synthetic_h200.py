#!/usr/bin/python3
"""Writes synthetic-h200.json: a SYNTHETIC gpubench/1 result shaped like an H200 run.

Not measured: figures are made up (plausible magnitudes, seeded noise) so that the plot, report and
compare tests have GPU-shaped input before a real H200 file is committed beside it.
"""
import json
import os
import random

rng = random.Random(20240501)
H200 = {"id": 0, "name": "NVIDIA H200", "cc": "9.0", "sms": 132, "memory_bytes": 150121668608,
        "l2_bytes": 62914560, "bus_width_bits": 6144, "mem_clock_khz": 3201000,
        "peak_bytes_per_s": 2 * 3201000e3 * 6144 / 8, "pci_bus_id": "0000:19:00.0",
        "async_engines": 3, "measured": {"d2d_bytes_per_s": 4.02e12}}


def measurement(name, seconds, clock="gpu", nbytes=0.0, items=0.0, unit="elements", n=12):
    samples = sorted(seconds * (1 + rng.gauss(0, 0.01)) for _ in range(n))
    rng.shuffle(samples)
    mid = sorted(samples)
    med = (mid[n // 2 - 1] + mid[n // 2]) / 2 if n % 2 == 0 else mid[n // 2]
    mean = sum(samples) / n
    sd = (sum((s - mean) ** 2 for s in samples) / (n - 1)) ** 0.5
    rates = {"items_per_s": items / med}
    if nbytes:
        rates["bytes_per_s"] = nbytes / med
    return {"name": name, "clock": clock, "unit": "s", "cold": clock == "gpu", "converged": True,
            "stats": {"count": n, "min": min(samples), "median": med, "mean": mean,
                      "max": max(samples), "stddev": sd, "rel_stddev": sd / mean},
            "samples": samples, "bytes": nbytes, "items": items, "item_unit": unit,
            "rates": rates}


def verification(passed=True):
    return {"performed": True, "passed": passed, "method": "exact", "tolerance": 0.0,
            "max_abs_error": 0.0, "checked": 1000, "mismatches": 0, "within_tolerance": 1.0,
            "details": {}}


def result(benchmark, params, measurements, derived=None):
    return {"benchmark": benchmark, "device": 0, "status": "ok", "reason": "", "params": params,
            "measurements": measurements, "derived": derived or {},
            "verification": verification(), "converged": True}


results = []
for n in [2 ** k for k in range(16, 29, 4)]:
    for dtype, size in (("f32", 4), ("f16", 2)):
        for kernel, eff in (("seed", 0.70), ("vectorized", 0.82)):
            for memory, link in (("pinned", 53e9), ("pageable", 21e9)):
                b = n * size
                kbw = H200["peak_bytes_per_s"] * eff * min(1.0, b / 2e7 + 0.05)
                ms = [measurement("kernel", 3 * b / kbw + 3e-6, nbytes=3 * b, items=n),
                      measurement("h2d", 2 * b / link + 8e-6, nbytes=2 * b, items=n),
                      measurement("d2h", b / link + 8e-6, nbytes=b, items=n),
                      measurement("end_to_end", 3 * b / link + 3 * b / kbw, nbytes=3 * b, items=n),
                      measurement("end_to_end_overlapped", 3 * b / (1.6 * link), nbytes=3 * b,
                                  items=n),
                      measurement("cpu_reference", 3 * b / 25e9 + 2e-6, clock="host",
                                  nbytes=3 * b, items=n)]
                results.append(result("vecadd", {"n": n, "dtype": dtype, "kernel": kernel,
                                                 "memory": memory, "block": 256, "chunks": 16,
                                                 "streams": 4}, ms,
                                      {"speedup_kernel_vs_cpu_reference":
                                       ms[5]["stats"]["median"] / ms[0]["stats"]["median"]}))
for batch in (1, 8, 32, 128, 512):
    for impl, per_image in (("staged", 40e-6), ("fused", 12e-6)):
        ms = [measurement(impl, 5e-6 + batch * per_image, items=batch, unit="images"),
              measurement("cpu_reference", batch * 4e-3, clock="host", items=batch,
                          unit="images")]
        results.append(result("augment", {"batch": batch, "impl": impl, "crop": 128,
                                          "resize": 256}, ms))
for scenario in ("augment-train", "encoder-decoder"):
    for batch in (8, 32, 128):
        ta, tb = 20e-6 + batch * 2e-6, 30e-6 + batch * 2.5e-6
        for mode, t in (("serial", ta + tb), ("streams", max(ta, tb) * 1.25 + 10e-6),
                        ("graph", max(ta, tb) * 1.15)):
            ms = [measurement("step", t, items=1, unit="steps"),
                  measurement("stage_a", ta, items=1, unit="steps"),
                  measurement("stage_b", tb, items=1, unit="steps")]
            results.append(result("pipeline", {"scenario": scenario, "batch": batch,
                                               "mode": mode, "depth": 2, "steps": 20}, ms,
                                  {"ideal_speedup": (ta + tb) / max(ta, tb)}))

doc = {"schema": "gpubench/1",
       "meta": {"version": "0.1.0", "git": "synthetic",
                "argv": ["gpubench", "run", "SYNTHETIC (tests/data/make_synthetic_h200.py)"],
                "started_at": "2024-05-01T00:00:00Z",
                "host": {"name": "synthetic", "cpu": "synthetic CPU", "cores": 64},
                "cuda": {"driver": "12.4", "runtime": "12.4"},
                "incomplete": False, "incomplete_reason": ""},
       "devices": [H200], "results": results}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic-h200.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(out, len(results), "results")
