#!/usr/bin/env python3
"""Sets gpubench's figures beside nvbench's and BabelStream's, from what scripts/gpu-anchors.sh
left in OUT_DIR, and writes OUT_DIR/summary.json and OUT_DIR/summary.md.

    summarize.py OUT_DIR

Reads nvbench.json (nvbench --jsonbin: per-sample GPU times in nvbench.json-bin/*.bin, float32),
gpubench-vecadd-{read,write}.json, gpubench-stream.json (gpubench result files) and
babelstream.csv (BabelStream --csv). nvbench's median is taken from its samples, as gpubench's
is; a difference is (gpubench - nvbench) / nvbench.
"""
import csv
import json
import math
import os
import struct
import sys

# Targets for the seed kernel (docs/methodology.md, "Checked against nvbench").
WRITE_TOLERANCE = 0.03  # --l2-flush write, every n
READ_TOLERANCE = 0.01  # default (read), n >= 2^26
READ_FROM_N = 1 << 26


def median(xs):
    xs = sorted(xs)
    if not xs:
        return math.nan
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else 0.5 * (xs[mid - 1] + xs[mid])


def named_values(values):
    """nvbench's [{name, type, value}] list as a dict of typed values."""
    out = {}
    for v in values or []:
        raw = v.get("value")
        if v.get("type") == "int64":
            out[v["name"]] = int(raw)
        elif v.get("type") == "float64":
            out[v["name"]] = float(raw)
        else:
            out[v["name"]] = raw
    return out


def nvbench_states(path):
    """{(benchmark, axis values as a sorted tuple): {median_s, mean_s, samples}} of every state
    nvbench measured."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    states = {}
    for bench in doc.get("benchmarks", []):
        for st in bench.get("states", []):
            if st.get("is_skipped"):
                continue
            axes = named_values(st.get("axis_values"))
            summaries = {s["tag"]: named_values(s.get("data")) for s in st.get("summaries", [])}
            entry = {"mean_s": summaries.get("nv/cold/time/gpu/mean", {}).get("value", math.nan),
                     "min_s": summaries.get("nv/cold/time/gpu/min", {}).get("value", math.nan),
                     "samples": 0, "median_s": math.nan}
            times = next((v for tag, v in summaries.items()
                          if tag.endswith("nv/cold/sample_times") and "filename" in v), None)
            if times is not None:
                # Relative to the JSON file's folder (nvbench 0.3.0); an absolute path as it is.
                name = times["filename"]
                bin_path = name if os.path.isabs(name) else os.path.join(base, name)
                with open(bin_path, "rb") as f:
                    raw = f.read()
                samples = struct.unpack(f"<{len(raw) // 4}f", raw)
                entry["samples"] = len(samples)
                entry["median_s"] = median(samples)
            elif "nv/cold/time/gpu/median" in summaries:
                entry["median_s"] = summaries["nv/cold/time/gpu/median"]["value"]
            states[(bench["name"], tuple(sorted(axes.items())))] = entry
    return states


def gpubench_medians(path, key_params):
    """{(param values..., measurement name): (median_s, l2_flush)} of a gpubench result file."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = {}
    for r in doc.get("results", []):
        if r.get("status") not in ("ok", "failed"):
            continue
        key = tuple(r["params"].get(p) for p in key_params)
        for m in r.get("measurements", []):
            if m.get("clock") == "gpu":
                out[key + (m["name"],)] = (m["stats"]["median"], m.get("l2_flush"),
                                           m["stats"]["min"])
    return out


def babelstream_rows(path):
    """{function (lower case): {min_s, max_s, avg_s, n}} from BabelStream's --csv output, which
    its device lines precede."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("function,")), None)
    if start is None:
        return {}
    rows = {}
    for row in csv.DictReader(lines[start:]):
        rows[row["function"].lower()] = {"min_s": float(row["min_runtime"]),
                                         "max_s": float(row["max_runtime"]),
                                         "avg_s": float(row["avg_runtime"]),
                                         "n": int(row["n_elements"]),
                                         "times": int(row["num_times"])}
    return rows


def diff(x, ref):
    return (x - ref) / ref if ref and not math.isnan(ref) and not math.isnan(x) else math.nan


def us(s):
    return "" if s is None or math.isnan(s) else f"{s * 1e6:.2f}"


def gbs(x):
    return "" if math.isnan(x) else f"{x:.0f}"


def pct(d):
    return "" if math.isnan(d) else f"{d * 100:+.1f}%"


def power_name(n):
    k = int(math.log2(n))
    return f"2^{k}" if 1 << k == n else str(n)


def present(path):
    """False, said on stderr, when a step left no output (its .err file says why)."""
    if os.path.exists(path):
        return True
    print(f"summarize.py: {path} is missing; its columns stay empty", file=sys.stderr)
    return False


def main():
    out = sys.argv[1]
    path = os.path.join(out, "nvbench.json")
    nv = nvbench_states(path) if present(path) else {}
    modes = {}
    for mode in ("read", "write"):
        path = os.path.join(out, f"gpubench-vecadd-{mode}.json")
        modes[mode] = gpubench_medians(path, ("n", "kernel")) if present(path) else {}
    summary = {"vecadd": [], "stream": [], "nvbench_stream": [], "targets": {}}
    md = ["# gpubench beside nvbench and BabelStream", ""]

    md += ["## vecadd, cold (f32, block 256): medians in us; difference from nvbench", "",
           "| kernel | n | nvbench | gpubench read | gpubench write | read vs nvbench "
           "| write vs nvbench |", "|---|---|---:|---:|---:|---:|---:|"]
    write_ok = read_ok = True
    keys = {(k[1], k[0]) for m in modes.values() for k in m}  # (kernel, n) gpubench measured
    keys |= {(dict(axes)["kernel"], dict(axes)["n"]) for bench, axes in nv if bench == "vecadd"}
    for kernel, n in sorted(keys):
        st = nv.get(("vecadd", tuple(sorted({"kernel": kernel, "n": n}.items()))),
                    {"median_s": math.nan, "mean_s": math.nan, "samples": 0})
        read = modes["read"].get((n, kernel, "kernel"), (math.nan, None, math.nan))
        write = modes["write"].get((n, kernel, "kernel"), (math.nan, None, math.nan))
        row = {"kernel": kernel, "n": n, "nvbench_median_s": st["median_s"],
               "nvbench_mean_s": st["mean_s"], "nvbench_samples": st["samples"],
               "gpubench_read_median_s": read[0], "gpubench_read_l2_flush": read[1],
               "gpubench_write_median_s": write[0], "gpubench_write_l2_flush": write[1],
               "read_vs_nvbench": diff(read[0], st["median_s"]),
               "write_vs_nvbench": diff(write[0], st["median_s"])}
        summary["vecadd"].append(row)
        if kernel == "seed":
            if not abs(row["write_vs_nvbench"]) <= WRITE_TOLERANCE:
                write_ok = False
            if n >= READ_FROM_N and not abs(row["read_vs_nvbench"]) <= READ_TOLERANCE:
                read_ok = False
        md.append(f"| {kernel} | {power_name(n)} | {us(st['median_s'])} | {us(read[0])} "
                  f"| {us(write[0])} | {pct(row['read_vs_nvbench'])} "
                  f"| {pct(row['write_vs_nvbench'])} |")
    if not any(r["kernel"] == "seed" for r in summary["vecadd"]):
        write_ok = read_ok = None  # nothing measured: no verdict
    summary["targets"] = {
        "seed_write_within_3pct_every_n": write_ok,
        "seed_read_within_1pct_from_2^26": read_ok,
    }
    verdict = {True: "yes", False: "NO", None: "not measured"}
    md += ["", f"Seed kernel, --l2-flush write within 3% of nvbench at every n: "
           f"{verdict[write_ok]}; default (read) within 1% at n >= 2^26: {verdict[read_ok]}.",
           ""]

    path = os.path.join(out, "gpubench-stream.json")
    stream = gpubench_medians(path, ("n",)) if present(path) else {}
    path = os.path.join(out, "babelstream.csv")
    babel = babelstream_rows(path) if present(path) else {}
    weights = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}
    md += ["## stream at 2^28 f32: times in us, bandwidth in GB/s (10^9 bytes/s)", "",
           "| kernel | nvbench median | gpubench median | gpubench GB/s | BabelStream min "
           "| BabelStream avg | BabelStream GB/s (min) | gpubench vs BabelStream min |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    n28 = 1 << 28
    for op, weight in weights.items():
        nvst = nv.get(("stream", tuple(sorted({"n": n28, "op": op}.items()))), {})
        g = stream.get((n28, op), (math.nan, None, math.nan))
        b = babel.get(op, {})
        nbytes = weight * 4 * n28
        row = {"kernel": op, "n": n28, "nvbench_median_s": nvst.get("median_s", math.nan),
               "gpubench_median_s": g[0], "gpubench_l2_flush": g[1],
               "gpubench_gb_per_s": nbytes / g[0] / 1e9 if g[0] == g[0] else math.nan,
               "babelstream_min_s": b.get("min_s", math.nan),
               "babelstream_avg_s": b.get("avg_s", math.nan),
               "babelstream_gb_per_s": nbytes / b["min_s"] / 1e9 if b else math.nan,
               "gpubench_vs_babelstream_min": diff(g[0], b.get("min_s", math.nan))}
        summary["stream"].append(row)
        md.append(f"| {op} | {us(row['nvbench_median_s'])} | {us(g[0])} "
                  f"| {gbs(row['gpubench_gb_per_s'])} | {us(row['babelstream_min_s'])} "
                  f"| {us(row['babelstream_avg_s'])} | {gbs(row['babelstream_gb_per_s'])} "
                  f"| {pct(row['gpubench_vs_babelstream_min'])} |")

    md += ["", "## nvbench, stream's kernels (cold, f32): medians in us", "",
           "| kernel | " + " | ".join(power_name(1 << k) for k in range(20, 31, 2)) + " |",
           "|---|" + "---:|" * 6]
    for op in weights:
        cells = []
        for k in range(20, 31, 2):
            st = nv.get(("stream", tuple(sorted({"n": 1 << k, "op": op}.items()))), {})
            cells.append(us(st.get("median_s", math.nan)))
            summary["nvbench_stream"].append({"kernel": op, "n": 1 << k,
                                              "median_s": st.get("median_s", math.nan)})
        md.append(f"| {op} | " + " | ".join(cells) + " |")

    def clean(x):  # JSON has no NaN
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(clean(summary), f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
