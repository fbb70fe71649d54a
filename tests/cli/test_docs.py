#!/usr/bin/env python3
"""Executable docs: every command in the code blocks of README.md and docs/*.md is checked.

Each fenced block is declared by a hidden comment on the line(s) above its fence:

    <!-- doc-test: MODE
         dry-run: --n 1G | --n 1Ki:1Gi
         fixture: baseline.json=tests/data/synthetic-h200.json
         fixture: photos/=png
         vars: OLD_BINARY=gpubench
         exit: 77 -->

MODE is how the block's commands are checked where there is no GPU:
  cpu-only  run here; a gpubench subcommand that offers --cpu-only gets it; one that picks GPUs
            (--device) without offering it (devices, pipeline) needs a GPU: only listed here
  run       run here as written
  dry-run   run here with --dry-run (parsed and planned, nothing measured)
  gpu       needs a GPU: listed here, run by `test_docs.py --gpu OUT_DIR` (scripts/gpu-check.sh)
  syntax    installs or builds: `bash -n` only
  script    one shell script (an integration example: a node health check, a plugin): the block
            is parsed whole with `bash -n`; each "when: N -> M" line runs it with a stand-in
            `gpubench` that exits N (printing a FAIL line) and expects the script to exit M;
            "prelude: TEXT" is shell run before it (the host tool's helpers), "then: TEXT" after
  yaml      a CI workflow: parsed as YAML, each run/script step checked with `bash -n`
  text      not commands (output, data, a diagram, a usage synopsis)
Lines of the comment after the first: "MODE: TEXT | TEXT" gives that mode to the commands that
contain one of the texts; "fixture: NAME [NAME...]=PATH" copies a file of the repository to each
NAME in the folder the block runs in ("NAME/=png": a folder of small PNG pictures);
"stand-in: NAME [NAME...]=PATH" does the same only where the block's GPU commands, which make
NAME, do not run; "vars: A=B C=D" replaces the placeholders A and C (the value gpubench stands
for the binary under test); "exit: N" is the exit status the block's commands end with here
(default 0; on a GPU machine, 0 where it says 77).

The commands of a block run in order in one fresh folder (configs/, scripts/, tests/ and docs/
linked from the source tree), through bash, with a `gpubench` on PATH that adds the block's
options (--cpu-only, --dry-run) and short measurement options (--min-samples 2 --max-samples 3
--min-time 0 --timeout 0.2 --warmup 0, each where the command does not give it): the check is
that the command works and exits as the docs say, not what it measures.

A block without a declaration fails the test, so a new example cannot go unchecked.

As a script: `test_docs.py --gpu OUT_DIR [--fast] [--skip-passed LOG]` runs every command meant to run (cpu-only,
run, dry-run and gpu blocks) as written with the binary in $GPUBENCH (default
build-gpu/app/gpubench), and writes OUT_DIR/docs-commands.txt (one line per command: status,
seconds, where it came from); --fast adds the short measurement options there too;
--skip-passed LOG leaves out the blocks whose commands all passed in an earlier run's output.
"""
import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.environ.get("GPUBENCH_SOURCE_DIR", os.path.join(HERE, "..", "..")))
MODES = ("cpu-only", "run", "dry-run", "gpu", "syntax", "script", "yaml", "text")
FAST = [("--min-samples", "2"), ("--max-samples", "3"), ("--min-time", "0"),
        ("--timeout", "0.2"), ("--warmup", "0")]
LINKED = ("configs", "scripts", "tests", "docs")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
DECLARATION = re.compile(r"<!--\s*doc-test:(.*?)-->", re.S)


def doc_files():
    docs = os.path.join(SOURCE_DIR, "docs")
    return [os.path.join(SOURCE_DIR, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))


class Block:
    """One fenced code block and its declaration."""

    def __init__(self, path, line, lang, lines, declaration):
        self.where = f"{os.path.relpath(path, SOURCE_DIR)}:{line}"
        self.lang = lang
        self.lines = lines
        self.mode = None
        self.overrides = []  # (mode, text)
        self.fixtures = []  # (name, source)
        self.stand_ins = []  # (name, source): only where the commands that make NAME do not run
        self.vars = {}
        self.exit = 0
        self.when = []  # script: (the stand-in's exit, the script's expected exit)
        self.prelude = ""
        self.then = ""
        self.error = None
        if declaration is None:
            self.error = "no <!-- doc-test: MODE --> declaration above the block"
            return
        first, *rest = [l.strip() for l in declaration.strip().splitlines()] or [""]
        self.mode = first
        if first not in MODES:
            self.error = f"mode '{first}' is not one of {', '.join(MODES)}"
        for item in rest:
            key, _, value = item.partition(":")
            key, value = key.strip(), value.strip()
            if key in MODES:
                self.overrides += [(key, t.strip()) for t in value.split("|") if t.strip()]
            elif key == "fixture":
                names, _, source = value.partition("=")
                self.fixtures += [(name, source.strip()) for name in names.split()]
            elif key == "stand-in":
                names, _, source = value.partition("=")
                self.stand_ins += [(name, source.strip()) for name in names.split()]
            elif key == "vars":
                for pair in value.split():
                    name, _, val = pair.partition("=")
                    self.vars[name] = val
            elif key == "exit":
                self.exit = int(value)
            elif key == "when":
                given, _, expected = value.partition("->")
                self.when.append((int(given), int(expected)))
            elif key == "prelude":
                self.prelude = value
            elif key == "then":
                self.then = value
            elif item:
                self.error = f"'{item}' is not MODE: TEXT, fixture:, vars: or exit:"

    def commands(self):
        """The block's commands: lines joined at a trailing backslash, comment lines dropped;
        in a transcript (lines starting with '$ '), only those lines."""
        lines = self.lines
        if any(l.startswith("$ ") for l in lines):
            lines = [l[2:] for l in lines if l.startswith("$ ")]
        out, pending = [], ""
        for line in lines:
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            if text and not text.startswith("#"):
                out.append(text)
        return out

    def mode_of(self, command):
        for mode, text in self.overrides:
            if text in command:
                return mode
        return self.mode


def find_blocks():
    blocks = []
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            fence, start = m.group(1), i
            end = start + 1
            while end < len(lines) and not lines[end].strip().startswith(fence):
                end += 1
            # The declaration: the comment that ends on the last non-blank line above the fence.
            above = start - 1
            while above >= 0 and not lines[above].strip():
                above -= 1
            declaration = None
            if above >= 0 and lines[above].rstrip().endswith("-->"):
                top = above
                while top > 0 and "<!--" not in lines[top]:
                    top -= 1
                d = DECLARATION.search("\n".join(lines[top:above + 1]))
                declaration = d.group(1) if d else None
            blocks.append(Block(path, start + 1, m.group(2), lines[start + 1:end], declaration))
            i = end + 1
    return blocks


def gpubench_calls(command):
    """The subcommands of every gpubench the command runs (after `gpubench`, `mpirun ...
    gpubench`, `venv/bin/gpubench`)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    subs = []
    for i, w in enumerate(words):
        if (w == "gpubench" or w.endswith("/gpubench")) and i + 1 < len(words):
            subs.append(words[i + 1])
    return subs


_OFFERS = {}


def offers(binary, sub, option):
    """Whether `gpubench SUB --help` lists OPTION as an option of its own."""
    if sub not in _OFFERS:
        p = subprocess.run([binary, sub, "--help"], capture_output=True, text=True, timeout=60)
        _OFFERS[sub] = set(re.findall(r"^\s*(?:-\w,)?(--[\w-]+)", p.stdout, re.M))
    return option in _OFFERS[sub]


def plan(binary, blocks):
    """(block, command, how) for every command: how is cpu-only, run, dry-run (run here), gpu,
    syntax, yaml (not run here), or text (not a command)."""
    rows = []
    for b in blocks:
        if b.error:
            continue
        if b.mode == "text":
            rows.append((b, None, "text"))
            continue
        if b.mode == "script":
            rows.append((b, "\n".join(b.lines), "script"))
            continue
        if b.mode == "yaml":
            try:
                rows += [(b, c, "yaml") for c in yaml_steps(b)]
            except ImportError:  # python3-yaml: CI has it; the GPU machine need not
                rows.append((b, None, "yaml"))
            continue
        for c in b.commands():
            how = b.mode_of(c)
            if how == "cpu-only":
                # A subcommand that picks GPUs (--device) but has no --cpu-only needs a GPU
                # (devices, pipeline); compare, report, doctor and completions run anywhere.
                subs = gpubench_calls(c)
                if any(offers(binary, s, "--device") and not offers(binary, s, "--cpu-only")
                       for s in subs):
                    how = "gpu"
            rows.append((b, c, how))
    return rows


def yaml_steps(block):
    """The shell text of each run: and script: entry of a CI workflow block."""
    import yaml
    found = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("run", "script") and isinstance(v, str):
                    found.append(v)
                elif k == "script" and isinstance(v, list):
                    found.extend(str(s) for s in v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(yaml.safe_load("\n".join(block.lines)))
    return found


STAND_IN = """#!/bin/sh
echo "GPU               check                 figure   reference   ratio  verdict reason"
echo "node1:0           hbm_triad           4.2 TB/s    4.4 TB/s   0.955  FAIL    HBM triad slow"
exit "$STAND_IN_EXIT"
"""


def run_script(block, given):
    """The block as one script, after its prelude and before its epilogue, with a stand-in
    gpubench on PATH that exits `given`; returns (status, output)."""
    with tempfile.TemporaryDirectory() as d:
        stand_in = os.path.join(d, "gpubench")
        with open(stand_in, "w", encoding="utf-8") as f:
            f.write(STAND_IN)
        os.chmod(stand_in, 0o755)
        text = "\n".join([block.prelude, "\n".join(block.lines), block.then])
        env = dict(os.environ, PATH=d + os.pathsep + os.environ.get("PATH", ""),
                   STAND_IN_EXIT=str(given))
        p = subprocess.run(["bash", "-c", text], capture_output=True, text=True, timeout=60,
                           env=env, cwd=d)
        return p.returncode, p.stdout + p.stderr


def bash_syntax(text):
    p = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stderr


def write_png(path, size=64):
    """A small RGB PNG (a gradient), for examples that read a folder of pictures."""
    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 4 % 256, y * 4 % 256, (x + y) * 2 % 256))
                           for x in range(size))
        for y in range(size))

    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload +
                struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2,
                                                                   0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


SHIM = """#!/bin/sh
# gpubench for the docs test: the real binary, with the block's options added.
exec "{python}" "{script}" --shim "$@"
"""


def shim_main(argv):
    """Runs the real binary with the options of the block's mode added (see the module doc)."""
    real = os.environ["DOCTEST_REAL"]
    args = list(argv)
    if args and not args[0].startswith("-"):
        sub, given = args[0], set(a.split("=")[0] for a in args)
        extra = []
        mode = os.environ.get("DOCTEST_MODE", "run")
        if mode == "cpu-only" and offers(real, sub, "--cpu-only") and "--cpu-only" not in given:
            extra.append("--cpu-only")
        if mode == "dry-run" and offers(real, sub, "--dry-run") and "--dry-run" not in given:
            extra.append("--dry-run")
        if os.environ.get("DOCTEST_FAST") == "1" and offers(real, sub, "--min-samples"):
            for option, value in FAST:
                if option not in given:
                    extra += [option, value]
        with open(os.environ["DOCTEST_LOG"], "a", encoding="utf-8") as log:
            log.write(shlex.join(["gpubench", *args, *extra]) + "\n")
        args += extra
    os.execv(real, [real, *args])


def prepare_folder(block, folder, on_gpu):
    for name in LINKED:
        os.symlink(os.path.join(SOURCE_DIR, name), os.path.join(folder, name))
    for name, source in block.fixtures + ([] if on_gpu else block.stand_ins):
        target = os.path.join(folder, name.rstrip("/"))
        if name.endswith("/") and source == "png":
            os.makedirs(target, exist_ok=True)
            for i in range(3):
                write_png(os.path.join(target, f"picture-{i}.png"))
        else:
            os.makedirs(os.path.dirname(target) or folder, exist_ok=True)
            shutil.copy(os.path.join(SOURCE_DIR, source), target)
    bindir = os.path.join(folder, ".doctest-bin")
    os.mkdir(bindir)
    shim = os.path.join(bindir, "gpubench")
    with open(shim, "w", encoding="utf-8") as f:
        f.write(SHIM.format(python=sys.executable, script=os.path.abspath(__file__)))
    os.chmod(shim, 0o755)
    # `python3 scripts/plot.py` in the docs: the interpreter the test runs under (ctest picks one
    # with matplotlib), not whichever python3 comes first on PATH.
    os.symlink(sys.executable, os.path.join(bindir, "python3"))
    return bindir


def substitute(block, command, binary):
    for name, value in block.vars.items():
        command = command.replace(name, binary if value == "gpubench" else value)
    return command


def run_block(block, rows, binary, mode_for, fast, on_gpu=False, timeout=600):
    """Runs the commands of `rows` (all from `block`) in order in a fresh folder; yields
    (command, how, exit status, expected, seconds, output tail)."""
    with tempfile.TemporaryDirectory(prefix="gpubench-doctest-") as folder:
        bindir = prepare_folder(block, folder, on_gpu)
        log = os.path.join(folder, ".doctest-log")
        for command, how in rows:
            env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
                   "DOCTEST_REAL": binary, "DOCTEST_LOG": log, "DOCTEST_MODE": mode_for(how),
                   "DOCTEST_FAST": "1" if fast else "0", "HOME": folder,
                   # scripts that take their binary from GPUBENCH (ci-regression.sh) get the shim
                   "GPUBENCH": os.path.join(bindir, "gpubench")}
            t0 = time.monotonic()
            try:
                p = subprocess.run(["bash", "-c", substitute(block, command, binary)], cwd=folder,
                                   env=env, capture_output=True, text=True, timeout=timeout)
                status, tail = p.returncode, (p.stdout + p.stderr)[-2000:]
            except subprocess.TimeoutExpired:
                status, tail = "timeout", f"killed after {timeout} s"
            yield command, how, status, time.monotonic() - t0, tail


def local_binary():
    return os.path.abspath(shutil.which(os.environ.get("GPUBENCH", "gpubench")) or "gpubench")


class DocsCommandsTest(unittest.TestCase):
    """Every documented command works as the docs say (what can run without a GPU)."""

    @classmethod
    def setUpClass(cls):
        cls.binary = local_binary()
        cls.blocks = find_blocks()
        cls.rows = plan(cls.binary, cls.blocks)

    def test_every_block_declares_how_it_is_checked(self):
        bad = [f"{b.where}: {b.error}" for b in self.blocks if b.error]
        self.assertEqual(bad, [], "\n".join(bad))

    def test_install_and_build_commands_parse(self):
        for b, c, how in self.rows:
            if how == "yaml" and c is None:
                with self.subTest(where=b.where):
                    self.skipTest("python3-yaml is not installed: the workflow's steps are "
                                  "not checked")
                continue
            if how in ("syntax", "yaml"):
                with self.subTest(where=b.where, command=c):
                    rc, err = bash_syntax(substitute(b, c, "gpubench"))
                    self.assertEqual(rc, 0, err)
            if how == "script":
                with self.subTest(where=b.where):
                    rc, err = bash_syntax(c)
                    self.assertEqual(rc, 0, err)
                for given, expected in b.when:
                    with self.subTest(where=b.where, gpubench_exits=given):
                        rc, out = run_script(b, given)
                        self.assertEqual(rc, expected, out)

    def test_commands_run_as_documented(self):
        t0 = time.monotonic()
        by_block = {}
        for b, c, how in self.rows:
            if how in ("cpu-only", "run", "dry-run"):
                by_block.setdefault(b, []).append((c, how))
        have_matplotlib = subprocess.run([sys.executable, "-c", "import matplotlib"],
                                         capture_output=True).returncode == 0
        # "exit: 77" is a block's status where there is no GPU (`doctor` finding no driver); on a
        # GPU machine the same commands end with 0.
        gpu_here = subprocess.run([self.binary, "devices", "--format", "json"],
                                  capture_output=True, check=False).returncode == 0
        times = {}
        for b, rows in by_block.items():
            for c, how, status, seconds, tail in run_block(b, rows, self.binary, lambda h: h,
                                                          fast=True):
                times[(b, c)] = seconds
                with self.subTest(where=b.where, command=c):
                    if "scripts/plot.py" in c and not have_matplotlib and status != b.exit:
                        self.skipTest("python3-matplotlib is not installed")
                    expected = 0 if gpu_here and b.exit == 77 else b.exit
                    self.assertEqual(status, expected, f"{b.where}: {c} ({how}):\n{tail}")
        summary(self.rows, sys.stderr, times)
        print(f"docs commands run here in {time.monotonic() - t0:.1f} s", file=sys.stderr)


def summary(rows, out, times=None):
    counts = {}
    for _, c, how in rows:
        counts[how] = counts.get(how, 0) + 1
    commands = sum(v for k, v in counts.items() if k != "text")
    print(f"{commands} documented commands: " +
          ", ".join(f"{counts.get(k, 0)} {k}" for k in MODES if k != "text") +
          f" (cpu-only/run/dry-run run here; gpu run by test_docs.py --gpu; syntax/yaml: bash -n;"
          f" script: bash -n and run with a stand-in gpubench);"
          f" {counts.get('text', 0)} blocks of output, data or synopses", file=out)
    for b, c, how in rows:
        if c is not None:
            took = f"{times[(b, c)]:5.1f} s" if times and (b, c) in times else "       "
            line = " ".join(c.split())
            print(f"  {how:8} {took} {b.where:24} {line[:80]}", file=out)


def passed_earlier(log):
    """(where, command) of each "ok" line of an earlier --gpu run's output or docs-commands.txt."""
    done = set()
    if log:
        with open(log, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"ok\s+exit 0\s+[0-9.]+ s (\S+:[0-9]+): (.*)$", line.rstrip("\n"))
                if m:
                    done.add((m.group(1), m.group(2)))
    return done


def gpu_main(out_dir, fast, skip_passed=None):
    """Runs every command meant to run, as written, on a GPU machine; with `skip_passed` (an
    earlier run's log), a block whose commands all passed there is not run again."""
    binary = os.path.abspath(os.environ.get("GPUBENCH", os.path.join(SOURCE_DIR, "build-gpu",
                                                                    "app", "gpubench")))
    blocks = find_blocks()
    undeclared = [b.where for b in blocks if b.error]
    rows = plan(binary, blocks)
    os.makedirs(out_dir, exist_ok=True)
    by_block = {}
    for b, c, how in rows:
        if how in ("cpu-only", "run", "dry-run", "gpu"):
            by_block.setdefault(b, []).append((c, how))
    failed = 0
    earlier = passed_earlier(skip_passed)
    with open(os.path.join(out_dir, "docs-commands.txt"), "w", encoding="utf-8") as f:
        summary(rows, f)
        for b, block_rows in by_block.items():
            if earlier and all((b.where, c) in earlier for c, _ in block_rows):
                for c, _ in block_rows:
                    line = f"ok (earlier run) {b.where}: {c}"
                    print(line, flush=True)
                    f.write(line + "\n")
                continue
            # As written: dry-run stays a dry run only where the docs themselves say --dry-run.
            for c, how, status, seconds, tail in run_block(
                    b, block_rows, binary, lambda h: "run", fast=fast, on_gpu=True):
                ok = status == 0
                skipped = not ok and "plot.py" in c and "no module" in tail.lower() and \
                    "matplotlib" in tail
                failed += not ok and not skipped
                verdict = "ok  " if ok else "SKIP (no matplotlib)" if skipped else "FAIL"
                line = f"{verdict} exit {status} {seconds:7.1f} s {b.where}: {c}"
                print(line, flush=True)
                f.write(line + "\n")
                if not ok and not skipped:
                    f.write("    " + tail.replace("\n", "\n    ") + "\n")
        for w in undeclared:
            f.write(f"FAIL {w}: no doc-test declaration\n")
    print(f"docs commands on the GPU: {failed} failed; {out_dir}/docs-commands.txt")
    return 1 if failed or undeclared else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--shim":
        shim_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpu", metavar="OUT_DIR", help="run every command on this GPU machine")
    parser.add_argument("--fast", action="store_true", help="short measurement options")
    parser.add_argument("--skip-passed", metavar="LOG", help="with --gpu: skip the blocks whose "
                        "commands all passed in this earlier --gpu run's output")
    parser.add_argument("--list", action="store_true", help="list the commands and how each is "
                        "checked")
    a, rest = parser.parse_known_args()
    if a.gpu:
        sys.exit(gpu_main(a.gpu, a.fast, a.skip_passed))
    if a.list:
        summary(plan(local_binary(), find_blocks()), sys.stdout)
        sys.exit(0)
    unittest.main(argv=[sys.argv[0], *rest])
