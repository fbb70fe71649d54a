"""Picks the environment the rest of encoder-decoder-ab.sh runs with: of
encdec-base.json and encdec-NAME.json (one per VARIANT NAME:VAR=VALUE), the one whose streams row
at batch 32 spends the least host time per step, among those whose serial and graph medians are
within 1% of base's at every batch measured. Prints the table, then the chosen VAR=VALUE (or 'base') on the last line.
    python3 encoder_decoder_pick.py DIR NAME:VAR=VALUE..."""
import json
import os
import sys


def by_batch(path):
    out = {}
    for r in json.load(open(path))["results"]:
        med = {m["name"]: m["stats"]["median"] for m in r["measurements"]}
        out[r["params"].get("batch")] = (med.get("serial"), med.get("graph"),
                                         r["derived"].get("streams_host_seconds_per_step"))
    return out


def figures(path):
    return by_batch(path).get(32)


def gpu_ok(base_path, path):
    """Serial and graph within 1% of base's at every batch both measured."""
    base, new = by_batch(base_path), by_batch(path)
    for batch, b in base.items():
        n = new.get(batch)
        if n is None or None in n or None in b:
            return False
        if n[0] > 1.01 * b[0] or n[1] > 1.01 * b[1]:
            return False
    return True


def main(folder, variants):
    base = figures(os.path.join(folder, "encdec-base.json"))
    if base is None:
        print("base")
        return
    best, best_host = "base", base[2]
    print(f"base: serial {1e6 * base[0]:.1f} us, graph {1e6 * base[1]:.1f} us, "
          f"streams host {1e6 * base[2]:.1f} us")
    for v in variants:
        name, assign = v.split(":", 1)
        try:
            f = figures(os.path.join(folder, f"encdec-{name}.json"))
        except (OSError, ValueError):
            f = None
        if f is None or None in f:
            print(f"{name}: no figures")
            continue
        ok = gpu_ok(os.path.join(folder, "encdec-base.json"),
                    os.path.join(folder, f"encdec-{name}.json"))
        print(f"{name}: serial {1e6 * f[0]:.1f} us, graph {1e6 * f[1]:.1f} us, "
              f"streams host {1e6 * f[2]:.1f} us{'' if ok else ' (slower on the GPU: not taken)'}")
        if ok and f[2] < best_host:
            best, best_host = assign, f[2]
    print(best)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
