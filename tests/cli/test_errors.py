"""Every error case of docs/errors.md, run against the real binary.

The rows are read from the page itself, so the documentation and the behaviour cannot drift apart:
a row is a command (after `gpubench`), the exit code it must give and a text its stderr must
contain. The files the rows use are listed on the page too, with their contents."""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")
SOURCE_DIR = os.environ.get("GPUBENCH_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
ERRORS_MD = os.path.join(SOURCE_DIR, "docs", "errors.md")
SYNTHETIC_H200 = os.path.join(SOURCE_DIR, "tests", "data", "synthetic-h200.json")


def cells(line):
    """The cells of a markdown table row; `\\|` is a literal bar, code spans lose their ticks."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    out = []
    for p in parts:
        p = p.strip().replace("\\|", "|")
        if len(p) >= 2 and p.startswith("`") and p.endswith("`"):
            p = p[1:-1]
        out.append(p)
    return out


def tables(text):
    """(section heading, header cells, rows) for every table of the page."""
    section, header, rows, found = None, None, [], []
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        if line.startswith("|"):
            row = cells(line)
            if header is None:
                header = row
            elif not all(set(c) <= set("-:") for c in row):
                rows.append(row)
            continue
        if header is not None:
            found.append((section, header, rows))
            header, rows = None, []
    return found


def page():
    with open(ERRORS_MD, encoding="utf-8") as f:
        return tables(f.read())


def error_rows():
    """(subcommand section, args, exit code, expected text) for every row of every case table."""
    for section, header, rows in page():
        if header == ["command", "exit", "stderr contains"]:
            for command, code, message in rows:
                yield section, command, int(code), message


def subcommands():
    """The subcommands `gpubench --help` lists."""
    out = subprocess.run([GPUBENCH, "--help"], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    listed = out.split("Subcommands:")[1].split("\n\n")[0]
    # A description wrapped at 100 columns continues on a line indented to its column.
    return [line.split()[0] for line in listed.strip("\n").splitlines()
            if line.startswith("  ") and not line.startswith("   ")]


class ErrorTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        for _, header, rows in page():
            if header != ["file", "content"]:
                continue
            for name, content in rows:
                if content.startswith("{") or content.startswith("[") or content in ("", "{"):
                    with open(os.path.join(cls.dir, name), "w", encoding="utf-8") as f:
                        f.write(content)
        shutil.copy(SYNTHETIC_H200, os.path.join(cls.dir, "h200.json"))
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            other = json.load(f)
        other["devices"][0]["name"] = "NVIDIA A100-SXM4-80GB"
        with open(os.path.join(cls.dir, "a100.json"), "w", encoding="utf-8") as f:
            json.dump(other, f)
        open(os.path.join(cls.dir, "a-file"), "w", encoding="utf-8").close()
        proc = subprocess.run([GPUBENCH, "run", "cpu.json", "--output", "result.json", "-q"],
                              cwd=cls.dir, capture_output=True, text=True, timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        # Rows with exit 77 describe a machine without a usable GPU (CI); on a GPU machine
        # (scripts/gpu-check.sh) those commands would run instead.
        cls.have_gpu = subprocess.run([GPUBENCH, "devices"], capture_output=True, timeout=120,
                                      check=False).returncode == 0

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_page_lists_cases(self):
        self.assertGreater(len(list(error_rows())), 100)

    def test_every_subcommand_has_a_section(self):
        sections = {section for section, _, _, _ in error_rows()}
        for name in subcommands():
            self.assertIn(name, sections, f"docs/errors.md has no table for `gpubench {name}`")

    def test_every_row(self):
        for section, command, code, message in error_rows():
            command = command.replace("{tmp}", self.dir)
            message = message.replace("{tmp}", self.dir)
            with self.subTest(command=command):
                if code == 77 and self.have_gpu:
                    continue
                args = shlex.split(command)
                self.assertEqual(args[0], section, "a row must sit under its subcommand")
                before = set(os.listdir(self.dir))
                proc = subprocess.run([GPUBENCH, *args], cwd=self.dir, capture_output=True,
                                      text=True, timeout=120, check=False)
                self.assertEqual(proc.returncode, code, proc.stderr)
                self.assertIn(message, proc.stderr)
                if code == 2 and "Error:" in proc.stderr:
                    self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
                self.assertEqual(set(os.listdir(self.dir)), before, "an error left a file behind")


if __name__ == "__main__":
    unittest.main()
