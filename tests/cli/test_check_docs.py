"""scripts/check-docs.sh on a small repository made for each test: a clean tree passes, and each
kind of finding (the banned word in prose, a comment, a script or a test name; a large file in
docs/results that no page links; a broken relative link) fails with the file and line named."""
import os
import re
import shutil
import subprocess
import unittest

from gpubench_cli import SOURCE_DIR, tempdir

SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check-docs.sh")
# Spelled in two parts so that this file does not trip the check it tests.
WORD = "ses" + "sion"
with open(SCRIPT, encoding="utf-8") as script:
    LIMIT = int(re.search(r"^RESULTS_LIMIT = ([0-9_]+)$", script.read(), re.M).group(1))
CLEAN = {
    "README.md": "# tool\n\nSee [the usage](docs/usage.md) and [results](docs/results/).\n",
    "docs/usage.md": "# Usage\n\n[Back](../README.md), [figures](results/gpu-1/README.md#top).\n"
                     "[A site](https://example.com/a.md) and [an anchor](#usage).\n",
    "docs/results/gpu-1/README.md": "# Figures\n\n[The JSON](run.json)\n",
    "docs/results/gpu-1/run.json": "{}\n",
    "lib/a.cpp": "// Catch::Session is an API name and allowed.\nint a() { return 1; }\n",
}


class CheckDocs(unittest.TestCase):
    def setUp(self):
        self._dir = tempdir()
        self.root = self._dir.name
        self.write_files(CLEAN)
        os.makedirs(os.path.join(self.root, "scripts"))
        shutil.copy(SCRIPT, os.path.join(self.root, "scripts", "check-docs.sh"))

    def tearDown(self):
        self._dir.cleanup()

    def write_files(self, files):
        for name, text in files.items():
            path = os.path.join(self.root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            mode = "wb" if isinstance(text, bytes) else "w"
            with open(path, mode) as f:
                f.write(text)

    def check(self):
        """Tracks every file of the tree (the script reads `git ls-files`) and runs the script."""
        subprocess.run(["git", "init", "-q", self.root], check=True)
        subprocess.run(["git", "-C", self.root, "add", "-A"], check=True)
        return subprocess.run(["bash", os.path.join(self.root, "scripts", "check-docs.sh")],
                              capture_output=True, text=True, timeout=60)

    def assert_finding(self, result, where, what):
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        lines = [line for line in result.stdout.splitlines() if line.startswith(where + ":")]
        self.assertEqual(len(lines), 1, result.stdout)
        self.assertIn(what, lines[0])
        self.assertIn("check-docs: 1 finding(s)", result.stderr)

    def test_a_clean_tree_passes(self):
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout.strip(), "check-docs: no finding")

    def test_the_word_in_prose_fails_in_any_case(self):
        self.write_files({"docs/usage.md": CLEAN["docs/usage.md"] + "\nIn the third "
                          + WORD.capitalize() + " we measured.\n"})
        self.assert_finding(self.check(), "docs/usage.md:6", f"the word '{WORD}'")

    def test_docs_results_above_the_limit_fails(self):
        # One file 1,000 bytes over the limit, linked so only the total counts; CLEAN's own
        # results README adds its 35 bytes.
        with open(os.path.join(self.root, "docs", "results", "big.bin"), "wb") as f:
            f.write(os.urandom(LIMIT + 1000))
        self.write_files({"docs/usage.md": CLEAN["docs/usage.md"] + "\n[big](results/big.bin)\n"})
        self.assert_finding(self.check(), "docs/results:1", f"{LIMIT + 1035:,} bytes")

    def test_the_word_in_a_code_comment_fails(self):
        self.write_files({"lib/b.cpp": f"int b() {{\n  return 2; // tuned in one {WORD}\n}}\n"})
        self.assert_finding(self.check(), "lib/b.cpp:2", WORD)

    def test_the_word_in_a_script_fails(self):
        self.write_files({"scripts/run.sh": f"#!/bin/sh\necho the {WORD.upper()} is over\n"})
        self.assert_finding(self.check(), "scripts/run.sh:2", WORD.upper())

    def test_the_word_in_a_test_name_fails(self):
        self.write_files({"tests/cli/test_x.py": f"def test_last_{WORD}_figures():\n    pass\n"})
        self.assert_finding(self.check(), "tests/cli/test_x.py:1", f"test_last_{WORD}_figures")

    def test_the_word_in_a_results_readme_fails(self):
        self.write_files({"docs/results/gpu-1/README.md": f"# Figures\n\nThe second {WORD}.\n"})
        self.assert_finding(self.check(), "docs/results/gpu-1/README.md:3", WORD)

    def test_the_api_name_beside_the_word_still_fails(self):
        self.write_files({"lib/c.cpp": f"// Catch::Session, set up in this {WORD}\n"})
        self.assert_finding(self.check(), "lib/c.cpp:1", WORD)

    def test_a_work_items_number_in_code_fails(self):
        self.write_files({"lib/x.cpp": "// Multi-GPU (" + "iss" + "ue 16): ranks\nint x;\n"})
        self.assert_finding(self.check(), "lib/x.cpp:1", "a work item's number")

    def test_a_work_items_number_in_the_changelog_passes(self):
        self.write_files({"CHANGELOG.md": "# Changelog\n\n- fixed " + "iss" + "ue 16\n"})
        proc = self.check()
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_an_untracked_file_is_not_read(self):
        result = self.check()  # tracks the clean tree
        self.write_files({"notes.md": f"the {WORD} notes\n"})
        result = subprocess.run(["bash", os.path.join(self.root, "scripts", "check-docs.sh")],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_a_large_unlinked_results_file_fails(self):
        self.write_files({"docs/results/gpu-1/raw.json": b"0" * ((1 << 20) + 1)})
        self.assert_finding(self.check(), "docs/results/gpu-1/raw.json:1", "no doc links it")

    def test_a_large_results_file_that_a_page_links_passes(self):
        self.write_files({"docs/results/gpu-1/run.json": b"0" * (2 << 20)})
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_a_file_of_exactly_one_mebibyte_passes(self):
        self.write_files({"docs/results/gpu-1/raw.json": b"0" * (1 << 20)})
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_a_broken_link_in_the_readme_fails(self):
        self.write_files({"README.md": CLEAN["README.md"] + "\n[Install](docs/install.md)\n"})
        self.assert_finding(self.check(), "README.md:5", "link to a missing file: docs/install.md")

    def test_a_broken_link_in_a_results_page_fails(self):
        self.write_files({"docs/results/gpu-1/README.md": "# Figures\n\n[Plot](plots/a.png)\n"})
        self.assert_finding(self.check(), "docs/results/gpu-1/README.md:3", "plots/a.png")

    def test_a_broken_link_with_an_anchor_fails(self):
        self.write_files({"docs/usage.md": "[Methods](methodology.md#timing)\n"})
        self.assert_finding(self.check(), "docs/usage.md:1", "methodology.md")

    def test_links_in_code_blocks_urls_and_anchors_are_not_checked(self):
        self.write_files({"docs/usage.md": CLEAN["docs/usage.md"]
                          + "\n```\n[not a link](missing.md)\n```\n"})
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
