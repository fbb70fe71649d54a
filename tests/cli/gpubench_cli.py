"""Shared helpers for the CLI tests: run the real binary and read its output."""
import atexit
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import sys
import unittest

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")
SOURCE_DIR = os.environ.get("GPUBENCH_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
SYNTHETIC_H200 = os.path.join(SOURCE_DIR, "tests", "data", "synthetic-h200.json")
SCHEMA = os.path.join(SOURCE_DIR, "docs", "schema", "gpubench-result.schema.json")
# The interpreter that draws charts (scripts/plot.py, --format html): $GPUBENCH_PYTHON as gpubench
# itself reads it, else Debian's /usr/bin/python3 (where python3-matplotlib installs).
PLOT_PYTHON = os.environ.get("GPUBENCH_PYTHON") or (
    "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
# The binary under test is the AddressSanitizer build (scripts/ci-sanitize.sh sets ASAN_OPTIONS):
# every process starts several times slower and some limits cannot apply.
SANITIZED = "ASAN_OPTIONS" in os.environ
# Short measurements: the CLI tests check behaviour, never speed.
FAST = ["--min-samples", "2", "--max-samples", "3", "--min-time", "0", "--timeout", "0.2",
        "--warmup", "0"]
# A CPU sweep that journals its first point at once (2,000 samples of 1,000 elements: tens of
# milliseconds, under AddressSanitizer too) and then holds its output for up to 30 s (2,000 samples
# of 20M elements, about 10 ms each): the tests that need a run in progress start it and kill it.
HOLDING_SWEEP = ["vecadd", "--cpu-only", "--n", "1000,20M", "--min-samples", "2000",
                 "--max-samples", "2000", "--min-time", "0", "--timeout", "30", "--warmup", "0",
                 "--cpu-threads", "1"]


_RECORDED = {}


def recorded_results(folder):
    """A folder holding the JSON recorded in docs/results/FOLDER (e.g. "h200-2026-11-29/first-run"):
    the files beside its README and those packed in its *json.tar.xz, extracted once a process."""
    if folder not in _RECORDED:
        source = os.path.join(SOURCE_DIR, "docs", "results", folder)
        target = tempfile.mkdtemp(prefix="gpubench-recorded-")
        atexit.register(shutil.rmtree, target, True)
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            if name.endswith(".json"):
                shutil.copy(path, target)
            elif name.endswith("json.tar.xz"):
                with tarfile.open(path) as archive:
                    for member in archive.getmembers():
                        if member.isfile() and member.name.endswith(".json"):
                            data = archive.extractfile(member).read()
                            name = os.path.basename(member.name)
                            with open(os.path.join(target, name), "wb") as f:
                                f.write(data)
        _RECORDED[folder] = target
    return _RECORDED[folder]


def run(*args, timeout=300, env=None):
    """Runs gpubench with `args`; `env` adds variables to the environment."""
    return subprocess.run([GPUBENCH, *args], capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


def has_gpu():
    """True when the binary can use a CUDA device (devices exits 0)."""
    return run("devices", "--format", "json").returncode == 0


def validate(document):
    """Validates a result document against docs/schema (python3-jsonschema)."""
    try:
        import jsonschema
    except ImportError as e:  # CI installs python3-jsonschema; a bare GPU box may lack it
        raise unittest.SkipTest("python3-jsonschema is not installed") from e
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.validate(document, json.load(f))


def json_output(test, proc, schema=False):
    """The JSON document a run printed, once `test` has checked that it exited 0 (its stderr in
    the message); `schema=True` also validates the document against docs/schema."""
    test.assertEqual(proc.returncode, 0, proc.stderr)
    document = json.loads(proc.stdout)
    if schema:
        validate(document)
    return document


def tempdir():
    return tempfile.TemporaryDirectory(prefix="gpubench-cli-")


def wait_for_signal_handlers(proc, timeout=60):
    """Waits until `proc` catches SIGINT (bit 2 of SigCgt in /proc/PID/status), i.e. main has
    installed its handlers: on a loaded machine the binary's start alone can take over a second,
    and a signal before that kills it by default. Returns at once where /proc is absent."""
    import time
    status = f"/proc/{proc.pid}/status"
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            with open(status, encoding="ascii") as f:
                caught = next((int(line.split()[1], 16) for line in f if line.startswith("SigCgt:")), 0)
        except OSError:
            return
        if caught & (1 << 1):  # SIGINT is signal 2
            return
        time.sleep(0.02)
