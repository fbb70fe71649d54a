#!/usr/bin/env python3
"""Tables in README.md and docs/ rendered from the result files they quote, and the check that
each still says what its data says.

A table declares its source on the line before it:

    <!-- table: rows results/FOLDER/json.tar.xz:run.json --columns median,rel.sd,n,stop -->
    <!-- table: ab results/FOLDER/json.tar.xz -->

`rows` lists every measured row of one or more result files (`--rows REGEX` keeps those whose
label matches), `ab` the before/after medians of scripts/figures-ab.sh's runs (files NAME-old-R.json
and NAME-new-R.json; `--rows REGEX` likewise). A SOURCE is a JSON file, or ARCHIVE.tar.xz:MEMBER, or a whole .tar.xz
(`ab`), relative to the markdown file. The rendered block is the table, then, where a row carries
one, a blank line and the line of marks: `*` telemetry flagged (thermal, hw slowdown, another
process), `^` host-bound (the host's launches paced the GPU), and the stop reason where a limit,
not the stopping rule, ended sampling.

    scripts/doc_tables.py check [FILE.md ...]   every declared table (default: README.md, docs/)
    scripts/doc_tables.py fix [FILE.md ...]     rewrite them from their data
    scripts/doc_tables.py render SPEC...        print one (SPEC as in a declaration)

check exits 1 naming each table whose figures or marks differ from its data (file:line, the
first differing row), 2 when a declaration or its source is broken.
"""
import argparse
import glob
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile

DECLARATION = re.compile(r"^<!-- table: (.+?) -->\s*$")
LIMIT_STOPS = ("max-n", "timeout", "intr")
FLAGS = ("thermal", "hw_slowdown", "contention")


class Broken(Exception):
    """A declaration that cannot be rendered (bad syntax, missing source)."""


def load_sources(spec, base):
    """[(name, parsed JSON)] for one SOURCE: FILE.json, ARCHIVE.tar.xz:MEMBER or ARCHIVE.tar.xz
    (every .json member)."""
    archive, _, member = spec.partition(":") if ".tar" in spec else (spec, "", "")
    path = os.path.normpath(os.path.join(base, archive))
    if not os.path.isfile(path):
        raise Broken(f"{spec}: no such file ({path})")
    if not archive.endswith((".tar.xz", ".tgz", ".tar.gz", ".tar")):
        with open(path, encoding="utf-8") as f:
            return [(os.path.basename(path), json.load(f))]
    out = []
    with tarfile.open(path) as tar:
        for info in tar.getmembers():
            if not info.isfile() or not info.name.endswith(".json"):
                continue
            if member and info.name != member and os.path.basename(info.name) != member:
                continue
            out.append((info.name, json.load(io.TextIOWrapper(tar.extractfile(info), "utf-8"))))
    if not out:
        raise Broken(f"{spec}: no {member or '.json file'} in {archive}")
    return sorted(out)


def flagged(m):
    flags = (m.get("telemetry") or {}).get("flags") or []
    return any(f in FLAGS for f in flags)


def stop_of(m):
    """The stop reason as the terminal table shows it ("yes"/"no" for files that name none)."""
    if "stop_reason" in m:
        return {"max_samples": "max-n", "interrupted": "intr"}.get(m["stop_reason"],
                                                                  m["stop_reason"])
    return "yes" if m.get("converged", True) else "no"


def limited(stop):
    return stop in LIMIT_STOPS or stop == "no"


def seconds(s):
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def scaled(v, unit):
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= factor:
            return f"{v / factor:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def label_of(doc_name, result, m, varying):
    params = result.get("params", {})
    shown = " ".join(f"{k}={params[k]}" for k in sorted(varying) if k in params)
    return " ".join(x for x in (result.get("benchmark", doc_name), shown, m["name"]) if x)


COLUMNS = {
    "median": lambda m: seconds(m["stats"]["median"]),
    "min": lambda m: seconds(m["stats"]["min"]),
    "rel.sd": lambda m: f"{m['stats'].get('rel_stddev', 0) * 100:.1f}%"
    if m["stats"].get("count", 0) > 1 else "-",
    "n": lambda m: str(m["stats"].get("count", m.get("samples", 0))),
    "stop": lambda m: stop_of(m) + (" (not converged)" if limited(stop_of(m)) else ""),
    "bandwidth": lambda m: scaled(m.get("rates", {}).get("bytes_per_s", 0), "B/s")
    if m.get("rates", {}).get("bytes_per_s") else "",
    "rate": lambda m: scaled(m.get("rates", {}).get("items_per_s", 0),
                             f"{m.get('item_unit', 'items')}/s")
    if m.get("rates", {}).get("items_per_s") else "",
}


def marks_line(flag, host, stops):
    parts = []
    if flag:
        parts.append("`*` telemetry flagged (thermal, hw slowdown or another process on the GPU)")
    if host:
        parts.append("`^` host-bound (the host's launches paced the GPU)")
    if stops:
        parts.append("a stop reason in brackets: a limit, not the stopping rule, ended sampling "
                     "(not converged)")
    return ["", "Marks: " + "; ".join(parts) + "."] if parts else []


def render_rows(args, base):
    p = argparse.ArgumentParser(prog="rows", add_help=False)
    p.add_argument("sources", nargs="+")
    p.add_argument("--rows", default="")
    p.add_argument("--columns", default="median,rel.sd,n,stop")
    a = p.parse_args(args)
    columns = a.columns.split(",")
    for c in columns:
        if c not in COLUMNS:
            raise Broken(f"unknown column {c!r} (known: {', '.join(COLUMNS)})")
    docs = [d for s in a.sources for d in load_sources(s, base)]
    entries = []
    for name, doc in docs:
        for r in doc.get("results", []):
            for m in r.get("measurements", []):
                if m.get("stats", {}).get("median") is not None:
                    entries.append((name, r, m))
    # Parameters that differ between the rows name them; the rest are the file's.
    varying = set()
    by_bench = {}
    for _, r, _ in entries:
        by_bench.setdefault(r.get("benchmark"), []).append(r.get("params", {}))
    for plist in by_bench.values():
        keys = {k for p in plist for k in p}
        varying |= {k for k in keys if len({json.dumps(p.get(k)) for p in plist}) > 1}
    pattern = re.compile(a.rows)
    lines = ["| row | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    any_flag = any_host = any_stop = False
    for name, r, m in entries:
        label = label_of(name, r, m, varying)
        if not pattern.search(label):
            continue
        marks = ("*" if flagged(m) else "") + ("^" if m.get("host_bound") else "")
        any_flag |= flagged(m)
        any_host |= bool(m.get("host_bound"))
        if marks:
            label += " " + marks
        if "stop" not in columns and limited(stop_of(m)):
            label += f" [{stop_of(m)}]"
            any_stop = True
        lines.append("| " + " | ".join([label] + [COLUMNS[c](m) for c in columns]) + " |")
    if len(lines) == 2:
        raise Broken(f"no row matches {a.rows!r}")
    return lines + marks_line(any_flag, any_host, any_stop)


def ab_rows(doc):
    """(key, median, flagged, host-bound, stop) per measurement of one figures-ab run."""
    results = doc.get("results", [])
    base = ("n", "batch", "impl", "scenario")

    def tag_of(p, keys):
        return ",".join(f"{k}={p[k]}" for k in keys if k in p)

    # Points the usual parameters do not tell apart (gemm's dtypes at one shape) also name the
    # parameters that differ between them.
    groups = {}
    for r in results:
        groups.setdefault(tag_of(r.get("params", {}), base), []).append(r.get("params", {}))
    for r in results:
        p = r.get("params", {})
        peers = groups[tag_of(p, base)]
        extra = [k for k in p if k not in base and any(q.get(k) != p[k] for q in peers)]
        tag = tag_of(p, list(base) + extra)
        for m in r.get("measurements", []):
            med = m.get("stats", {}).get("median")
            if med:
                yield f"{r['benchmark']} {tag} {m['name']}", med, flagged(m), bool(
                    m.get("host_bound")), stop_of(m)


def render_ab(args, base):
    """scripts/figures-ab.sh's table: per measurement, the median over the rounds of each side's
    median, and the new side's change; marks where any round of either side carried one."""
    p = argparse.ArgumentParser(prog="ab", add_help=False)
    p.add_argument("source")
    p.add_argument("--rows", default="")
    a = p.parse_args(args)
    pattern = re.compile(a.rows)
    path = os.path.join(base, a.source)
    if os.path.isdir(path):
        docs = []
        for f in sorted(glob.glob(os.path.join(path, "*-*-*.json"))):
            with open(f, encoding="utf-8") as fh:
                docs.append((os.path.basename(f), json.load(fh)))
    else:
        docs = load_sources(a.source, base)
    medians, marks, stops = {}, {}, {}
    for name, doc in docs:
        mt = re.match(r"(.+)-(old|new)-(\d+)\.json$", os.path.basename(name))
        if not mt:
            continue
        for key, med, flag, host, stop in ab_rows(doc):
            key = f"{mt.group(1)}: {key}"
            if not pattern.search(key):
                continue
            medians.setdefault((key, mt.group(2)), []).append(med)
            mk = marks.setdefault(key, set())
            if flag:
                mk.add("*")
            if host:
                mk.add("^")
            if limited(stop):
                stops.setdefault(key, {}).setdefault(stop, 0)
                stops[key][stop] += 1
    lines = ["| measurement | old median (us) | new median (us) | change | rounds |",
             "|---|---|---|---|---|"]
    used = set()
    for key in sorted({k for k, _ in medians}):
        o, n = medians.get((key, "old")), medians.get((key, "new"))
        if not o or not n:
            continue
        om, nm = statistics.median(o), statistics.median(n)
        label = key
        mk = "".join(x for x in "*^" if x in marks.get(key, ()))
        if mk:
            label += " " + mk
            used |= set(mk)
        if key in stops:
            label += " [" + ", ".join(f"{s} in {c} of {len(o) + len(n)}"
                                      for s, c in sorted(stops[key].items())) + "]"
            used.add("stop")
        lines.append(f"| {label} | {om * 1e6:.2f} | {nm * 1e6:.2f} | {100 * (nm / om - 1):+.2f}% "
                     f"| {len(o)}/{len(n)} |")
    return lines + marks_line("*" in used, "^" in used, "stop" in used)


RENDERERS = {"rows": render_rows, "ab": render_ab}


def render(spec, base):
    words = spec.split()
    if not words or words[0] not in RENDERERS:
        raise Broken(f"unknown table kind in {spec!r} (known: {', '.join(RENDERERS)})")
    try:
        return RENDERERS[words[0]](words[1:], base)
    except SystemExit as e:  # argparse
        raise Broken(f"cannot read {spec!r}") from e
    except (OSError, ValueError, KeyError, tarfile.TarError) as e:
        raise Broken(f"{spec}: {e}") from e


def declared_blocks(lines):
    """(index of the declaration, spec, first line of the block, end of the block) per table."""
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced  # an example inside a code block declares nothing
        mt = None if fenced else DECLARATION.match(line)
        if not mt:
            continue
        start = i + 1
        end = start
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        # The marks line, after one blank line.
        if end + 1 < len(lines) and lines[end] == "" and lines[end + 1].startswith("Marks: "):
            end += 2
        yield i, mt.group(1), start, end


def markdown_files(root):
    out = subprocess.run(["git", "ls-files", "-z", "README.md", "docs"], cwd=root,
                         capture_output=True, check=True).stdout.decode().split("\0")
    return [os.path.join(root, f) for f in out if f.endswith(".md")]


def process(paths, fix):
    problems, broken, tables = [], [], 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        changed = False
        for i, spec, start, end in reversed(list(declared_blocks(lines))):
            tables += 1
            where = f"{os.path.relpath(path)}:{i + 1}"
            try:
                want = render(spec, os.path.dirname(path))
            except Broken as e:
                broken.append(f"{where}: {e}")
                continue
            have = lines[start:end]
            if have == want:
                continue
            if fix:
                lines[start:end] = want
                changed = True
                continue
            diff = next((k for k in range(max(len(have), len(want)))
                         if k >= len(have) or k >= len(want) or have[k] != want[k]), 0)
            problems.append(f"{where}: the table differs from its data at line {start + diff + 1}"
                            f"\n    doc:  {have[diff] if diff < len(have) else '(missing)'}"
                            f"\n    data: {want[diff] if diff < len(want) else '(nothing)'}")
        if changed:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"rewrote {os.path.relpath(path)}")
    for p in broken + problems:
        print(p, file=sys.stderr)
    if broken:
        return 2
    if problems:
        return 1
    print(f"doc tables: {tables} declared, every one as its data says")
    return 0


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "fix", "render"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "render":
        try:
            print("\n".join(render(" ".join(sys.argv[2:]), os.getcwd())))
        except Broken as e:
            print(f"doc_tables: {e}", file=sys.stderr)
            return 2
        return 0
    paths = [os.path.abspath(p) for p in sys.argv[2:]] or markdown_files(root)
    return process(paths, sys.argv[1] == "fix")


if __name__ == "__main__":
    sys.exit(main())
