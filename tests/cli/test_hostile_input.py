"""Hostile input (docs/errors.md, "Hostile input"), run against the real binary.

The rows are read from the page's own table, so documentation and behaviour cannot drift apart:
each row is a command (after `gpubench`), the exit code it must give and a text its stderr must
contain, run in a fresh folder holding the fixtures this file makes. Every row must also finish
quickly (nothing hangs on a FIFO or reads /dev/zero without end) and print one short line."""
import json
import os
import shlex
import struct
import subprocess
import tempfile
import time
import unittest
import zlib

from gpubench_cli import GPUBENCH, SANITIZED, SYNTHETIC_H200, run
from test_errors import page

DEPTH = 100000


def hostile_rows():
    for _, header, rows in page():
        if header == ["case", "command", "exit", "stderr contains"]:
            for case, command, code, message in rows:
                yield case, command, int(code), message


def png_claiming(width, height):
    """A small PNG whose header claims width x height RGB pixels (the data is a stub)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
            chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


def make_fixtures(folder):
    def write(name, text, mode="w"):
        with open(os.path.join(folder, name), mode) as f:
            f.write(text)

    deep = "[" * DEPTH + "]" * DEPTH
    write("deep.json", deep)
    with open(SYNTHETIC_H200, encoding="utf-8") as f:
        result = json.load(f)
    result["results"][0]["params"]["deep"] = "@DEEP@"
    write("deep-result.json", json.dumps(result).replace('"@DEEP@"', deep))
    write("dup.json", '{"benchmarks": [{"benchmark": "vecadd", "benchmark": "augment"}]}')
    write("nul.json", b'{"benchmarks": [{"benchmark": "vecadd"}]}\0garbage', "wb")
    entry = '"benchmarks": [{"benchmark": "vecadd"}]'
    write("huge-number.json", '{"options": {"timeout": 1e400}, ' + entry + "}")
    write("tiny-number.json", '{"options": {"timeout": 1e-400}, ' + entry + "}")
    write("big-seed.json", '{"options": {"seed": 18446744073709551616}, ' + entry + "}")
    write("max-seed.json",
          '{"options": {"seed": 18446744073709551615, "cpu_only": true}, ' + entry + "}")
    write("long-key.json", '{"' + "k" * 100000 + '": 1, ' + entry + "}")
    os.mkfifo(os.path.join(folder, "fifo"))
    os.mkdir(os.path.join(folder, "folder"))
    with open(os.path.join(folder, "big.json"), "wb") as f:
        f.truncate(257 << 20)  # sparse: no disk used
    escape = json.loads(json.dumps(result))
    escape["results"][0]["measurements"][0]["name"] = "kernel\x1b[2J\nFAKE ROW"
    write("escape.json", json.dumps(escape))
    for name, value in (("tiny-sample.json", 5e-324), ("huge-sample.json", 1e308)):
        extreme = json.loads(json.dumps(result))
        m = extreme["results"][0]["measurements"][0]
        m["samples"] = [value] * len(m["samples"])
        write(name, json.dumps(extreme))
    write("title.json", json.dumps({"name": "x\x1b]0;owned\x07",
                                    "benchmarks": [{"benchmark": "vecadd"}]}))
    os.mkdir(os.path.join(folder, "bomb"))
    write(os.path.join("bomb", "bomb.png"), png_claiming(16384, 16384), "wb")


class HostileInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpubench-hostile-")
        cls.dir = cls.tmp.name
        make_fixtures(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def gpubench(self, *args, timeout=30):
        return subprocess.run([GPUBENCH, *args], cwd=self.dir, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def test_the_page_lists_cases(self):
        self.assertGreaterEqual(len(list(hostile_rows())), 25)

    def test_every_row(self):
        for case, command, code, message in hostile_rows():
            with self.subTest(case=case, command=command):
                start = time.monotonic()
                proc = self.gpubench(*shlex.split(command))
                self.assertLess(time.monotonic() - start, 20, "must answer at once")
                self.assertEqual(proc.returncode, code, proc.stderr[:2000])
                self.assertIn(message, proc.stderr)
                lines = proc.stderr.strip().splitlines()
                if "Error:" in proc.stderr:
                    self.assertEqual(len(lines), 1, proc.stderr[:2000])
                # The offending text is quoted briefly, whatever its size.
                self.assertLess(max(len(line) for line in lines), 400, proc.stderr[:2000])

    def test_running_out_of_memory_while_loading_names_the_file(self):
        # 20 million array elements take about 740 MB to parse; under a 600 MB address-space cap
        # the parse runs out. nlohmann's destructor then needed memory to free the partial
        # document and the process aborted (exit 134) instead of naming the file.
        if SANITIZED:
            self.skipTest("an address-space cap leaves no room for AddressSanitizer's shadow memory")
        import resource

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))

        with tempfile.TemporaryDirectory(prefix="gpubench-oom-") as folder:
            path = os.path.join(folder, "bigarr.json")
            with open(path, "w", encoding="ascii") as f:
                f.write('{"name": [' + "1," * 19999999 + "1]}")
            probe = subprocess.run([GPUBENCH, "--version"], capture_output=True, text=True,
                                   timeout=30, preexec_fn=cap, check=False)
            if probe.returncode != 0:
                self.skipTest("the binary cannot start under a 600 MB cap: " + probe.stderr[:200])
            for args, what in ((["run", path, "--dry-run"], "run file"),
                               (["report", path], "result file"),
                               (["compare", path, path], "result file")):
                with self.subTest(command=args[0]):
                    proc = subprocess.run([GPUBENCH, *args], capture_output=True, text=True,
                                          timeout=60, preexec_fn=cap, check=False)
                    self.assertEqual(proc.returncode, 2, proc.stderr[:2000])
                    self.assertIn(f"bigarr.json: out of memory while loading the {what}",
                                  proc.stderr)

    def test_a_seed_of_2_64_minus_1_is_accepted_in_run_files_as_on_the_command_line(self):
        proc = self.gpubench("run", "max-seed.json", "--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = self.gpubench("vecadd", "--cpu-only", "--n", "1K", "--min-samples", "2",
                             "--max-samples", "2", "--min-time", "0", "--warmup", "0",
                             "--seed", "18446744073709551615", "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_subnormal_numbers_are_numbers(self):
        # std::stod refused 1e-320 as "not a number"; it is a double, and only float32 refuses it.
        proc = self.gpubench("pipeline", "--lr", "1e-320")
        self.assertIn("too small for float32", proc.stderr)
        self.assertNotIn("not a number", proc.stderr)
        proc = self.gpubench("vecadd", "--cpu-only", "--n", "1K", "--min-samples", "2",
                             "--max-samples", "2", "--warmup", "0", "--min-time", "1e-320",
                             "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_decimal_integers_are_decimal(self):
        # CLI11 alone reads "010" as octal 8; gpubench reads it as 10, like a run file would.
        proc = self.gpubench("vecadd", "--cpu-only", "--n", "1K", "--min-samples", "010",
                             "--max-samples", "010", "--warmup", "0", "--min-time", "0",
                             "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        samples = json.loads(proc.stdout)["results"][0]["measurements"][0]["samples"]
        self.assertEqual(len(samples), 10)


if __name__ == "__main__":
    unittest.main()
