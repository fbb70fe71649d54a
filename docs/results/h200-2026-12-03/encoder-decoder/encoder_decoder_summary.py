"""Summary of encoder-decoder-ab.sh's JSON: per file, scenario and batch, each
mode's median step time, host enqueue time per step, the host-bound mark, the overlap efficiency
and, where measured, the energy per step and its CV.
    python3 encoder_decoder_summary.py DIR"""
import glob
import json
import os
import sys


def main(folder):
    print(f"{'file':<16} {'scen':<6} {'B':>4} {'row':<12} {'median us':>10} {'host us':>8} "
          f"{'^':>1} {'eff %':>6} {'mJ/step':>8} {'CV %':>6}")
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"{os.path.basename(path)}: {e}")
            continue
        for r in doc.get("results", []):
            p = r.get("params", {})
            d = r.get("derived", {})
            scen = "ed" if p.get("scenario") == "encoder-decoder" else "at"
            for m in r.get("measurements", []):
                name = m["name"]
                host = d.get(f"{name.replace('-', '_')}_host_seconds_per_step")
                eff = d.get(f"{name.replace('-', '_')}_overlap_efficiency")
                e = m.get("energy") or {}
                med = m.get("stats", {}).get("median", 0)
                host_s = "" if host is None else "%.1f" % (1e6 * host)
                eff_s = "" if eff is None else "%.0f" % (100 * eff)
                mj = "%.3f" % (1e3 * e.get("j_per_op", 0)) if e.get("supported") else ""
                cv = "%.2f" % (100 * e.get("cv", 0)) if e.get("supported") else ""
                mark = "^" if m.get("host_bound") else ""
                base = os.path.basename(path)[:-5]
                print(f"{base:<16} {scen:<6} {p.get('batch', ''):>4} {name:<12} {1e6 * med:>10.2f} "
                      f"{host_s:>8} {mark:>1} {eff_s:>6} {mj:>8} {cv:>6}")
            v = r.get("verification", {})
            if v.get("performed"):
                print(f"{'':<16} verify: {'passed' if v.get('passed') else 'FAILED'}, "
                      f"mismatches {v.get('mismatches')}")


if __name__ == "__main__":
    main(sys.argv[1])
