#!/usr/bin/env python3
"""Checks the layering of lib/ (docs/architecture.md) and prints its folder graph.

    scripts/check-layers.py [--root DIR]

The graph: one node per folder of lib/ (lib/src/F/ and lib/include/gpubench/F/ are folder F), an
edge F -> G when a file of F includes a header of G ("gpubench/G/..."); cuda/ is below every
folder and is shown, not checked. Printed top first: a folder's level is one more than the
highest level it includes, so each folder includes only folders printed below it.

It fails (exit 1), naming the files and lines, on
1. a cycle: folders that include each other, directly or through others;
2. a CUDA runtime call in lib/ (`cudaXxx(` outside comments and strings): lib reaches CUDA only
   through cuda/'s launchers and RAII types (gpubench/cuda/*.hpp). CUDA types (cudaStream_t)
   and constants are allowed;
3. a read of the environment (`getenv(`, `secure_getenv(`, `environ`) anywhere in app/, lib/ or
   cuda/ but lib/src/engine/environment.cpp, the one seam that reads it.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"gpubench/([A-Za-z0-9_]+)/[^"]*"')
CUDA_CALL = re.compile(r"\bcuda[A-Z]\w*\s*\(")
ENV_READ = re.compile(r"\b(?:secure_getenv|getenv)\s*\(|\benviron\b")
ENV_SEAM = os.path.join("lib", "src", "engine", "environment.cpp")
SOURCES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".inl")


def strip_comments_and_strings(text):
    """The text with comments and string/char literals blanked, newlines kept (lines stay put)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            m = re.match(r'R"([^(\s]*)\(', text[i - 1:i + 20]) if c == '"' and i > 0 else None
            if m and text[i - 1] == "R":  # raw string literal R"delim( ... )delim"
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def folder_files(root):
    """{folder: [path relative to root]} for lib/src/F/** and lib/include/gpubench/F/**."""
    folders = {}
    for base in (os.path.join("lib", "src"), os.path.join("lib", "include", "gpubench")):
        top = os.path.join(root, base)
        if not os.path.isdir(top):
            continue
        for folder in sorted(os.listdir(top)):
            if not os.path.isdir(os.path.join(top, folder)):
                continue
            for dirpath, _, names in os.walk(os.path.join(top, folder)):
                for name in sorted(names):
                    if name.endswith(SOURCES):
                        path = os.path.relpath(os.path.join(dirpath, name), root)
                        folders.setdefault(folder, []).append(path)
    return folders


def strongly_connected(nodes, edges):
    """Tarjan's components, each a sorted list."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycle_in(comp, edges):
    """One cycle through the first folder of a component, as a list of folders."""
    start = comp[0]
    members = set(comp)
    path, seen = [start], {start}

    def walk(v):
        for w in sorted(edges.get(v, ())):
            if w == start:
                return True
            if w in members and w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return path + [start]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the repository (default: this script's)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    folders = folder_files(root)
    if not folders:
        print(f"check-layers: no folder under {root}/lib", file=sys.stderr)
        return 2
    edges = {f: set() for f in folders}
    where = {}  # (from, to) -> first "file:line"
    calls = []
    for folder, paths in folders.items():
        for path in paths:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for number, line in enumerate(text.splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) != folder:
                    target = m.group(1)
                    if target not in folders and target != "cuda":
                        continue  # gpubench/dtype.hpp and other headers of cuda/'s top folder
                    edges[folder].add(target)
                    where.setdefault((folder, target), f"{path}:{number}")
            for number, line in enumerate(strip_comments_and_strings(text).splitlines(), 1):
                for m in CUDA_CALL.finditer(line):
                    calls.append((path, number, m.group(0).rstrip("( ")))

    env_reads = []
    for top in ("app", "lib", "cuda"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                path = os.path.relpath(os.path.join(dirpath, name), root)
                if not name.endswith(SOURCES) or path == ENV_SEAM:
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = strip_comments_and_strings(f.read())
                for number, line in enumerate(text.splitlines(), 1):
                    if ENV_READ.search(line):
                        env_reads.append((path, number))

    lib_edges = {f: {t for t in ts if t in folders} for f, ts in edges.items()}
    cycles = [c for c in strongly_connected(folders, lib_edges)
              if len(c) > 1 or c[0] in lib_edges[c[0]]]

    # Levels: cuda is 0, a folder is one above the highest folder it includes (cycles: none).
    level = {}

    def level_of(f, trail=()):
        if f == "cuda":
            return 0
        if f in level:
            return level[f]
        if f in trail:
            return 0
        level[f] = 1 + max((level_of(t, trail + (f,)) for t in edges[f]), default=0)
        return level[f]

    for f in folders:
        level_of(f)
    print("lib/ folder graph (F -> G: F includes G's headers), top first:")
    width = max(len(f) for f in folders)
    for f in sorted(folders, key=lambda f: (-level[f], f)):
        below = sorted(edges[f], key=lambda t: (-level.get(t, 0), t))
        print(f"  {level[f]:>2}  {f:<{width}}  -> {', '.join(below) if below else '(nothing)'}")

    findings = []
    for comp in cycles:
        cycle = cycle_in(comp, lib_edges)
        steps = "; ".join(f"{a} -> {b} ({where[(a, b)]})" for a, b in zip(cycle, cycle[1:]))
        findings.append(f"cycle among {', '.join(comp)}: {' -> '.join(cycle)}: {steps}")
    findings.extend(f"{path}:{number}: CUDA runtime call {call}(): go through cuda/'s wrappers "
                    "(gpubench/cuda/*.hpp)" for path, number, call in sorted(calls))
    findings.extend(f"{path}:{number}: reads the environment: only {ENV_SEAM} does "
                    "(process_environment(), gpubench/engine/environment.hpp)"
                    for path, number in sorted(env_reads))
    for finding in findings:
        print(finding)
    if findings:
        print(f"check-layers: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    print(f"check-layers: {len(folders)} folders, no cycle, no CUDA runtime call in lib/, "
          "the environment read in one place")
    return 0


if __name__ == "__main__":
    sys.exit(main())
