"""A result names its code exactly (docs/json-schema.md, meta.build): the build embeds the SHA-256
of every source file it compiles (scripts/source-hash.cmake), the same for a copy of the tree
without git and changed by any edit; --version prints it, every result records it, and compare
says "same code" only when the hashes match."""
import json
import os
import re
import shutil
import subprocess
import unittest

from gpubench_cli import FAST, SOURCE_DIR, SYNTHETIC_H200, run, tempdir

SCRIPT = os.path.join(SOURCE_DIR, "scripts", "source-hash.cmake")
HASHED = ["CMakeLists.txt", "app", "lib", "cuda", "cmake", "references"]


def source_hash(tree, out):
    subprocess.run(["cmake", f"-DSRC={tree}", f"-DOUT={out}", "-P", SCRIPT], check=True)
    with open(out, encoding="utf-8") as f:
        return re.search(r'source_hash_text = "([0-9a-f]{64})"', f.read()).group(1)


class SourceHash(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.tree = os.path.join(self.tmp.name, "copy")
        os.mkdir(self.tree)
        for name in HASHED:
            src = os.path.join(SOURCE_DIR, name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(self.tree, name))
            else:
                shutil.copy(src, self.tree)
        self.out = os.path.join(self.tmp.name, "source_hash.cpp")

    def test_a_copy_without_git_has_the_hash_of_its_tree_and_any_edit_changes_it(self):
        self.assertFalse(os.path.exists(os.path.join(self.tree, ".git")))
        first = source_hash(self.tree, self.out)
        self.assertEqual(source_hash(self.tree, self.out), first, "the same tree, the same hash")
        self.assertEqual(source_hash(SOURCE_DIR, self.out + ".src"), first,
                         "the checkout and its copy without git")
        target = os.path.join(self.tree, "lib", "src", "engine", "env.cpp")
        with open(target, "rb") as f:
            text = bytearray(f.read())
        text[-2] ^= 1  # one bit of one byte
        with open(target, "wb") as f:
            f.write(text)
        edited = source_hash(self.tree, self.out)
        self.assertNotEqual(edited, first)
        os.rename(target, target + ".moved")  # a file renamed is another tree too
        self.assertNotEqual(source_hash(self.tree, self.out), edited)

    def test_the_binary_prints_and_records_the_hash_of_the_tree_it_was_built_from(self):
        want = source_hash(SOURCE_DIR, self.out)
        version = run("--version").stdout
        self.assertIn(f"Sources: sha256 {want}", version)
        result = os.path.join(self.tmp.name, "r.json")
        proc = run("vecadd", "--cpu-only", "--n", "1K", *FAST, "-q", "--output", result)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(result, encoding="utf-8") as f:
            meta = json.load(f)["meta"]
        self.assertEqual(meta["build"], {"git": meta["git"], "source_sha256": want})


class SameCode(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.a = os.path.join(self.tmp.name, "a.json")
        self.assertEqual(run("vecadd", "--cpu-only", "--n", "1K", *FAST, "-q", "--output",
                             self.a).returncode, 0)

    def edited(self, name, source_sha256):
        with open(self.a, encoding="utf-8") as f:
            doc = json.load(f)
        if source_sha256 is None:
            del doc["meta"]["build"]
        else:
            doc["meta"]["build"]["source_sha256"] = source_sha256
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def compare(self, base, new):
        proc = run("compare", base, new)
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        js = run("compare", base, new, "--format", "json")
        return proc.stdout, json.loads(js.stdout)["same_code"]

    def test_same_code_only_when_the_hashes_match(self):
        text, same = self.compare(self.a, self.a)
        self.assertIn("Code: same (sources sha256 ", text)
        self.assertIs(same, True)
        other = self.edited("other.json", "0" * 64)
        text, same = self.compare(self.a, other)
        self.assertIn("Code: DIFFERS", text)
        self.assertIn("NEW 000000000000", text)
        self.assertIs(same, False)
        old = self.edited("old.json", None)
        text, same = self.compare(old, self.a)
        self.assertIn("Code: not known to be the same (sources sha256: BASE not recorded", text)
        self.assertIsNone(same)
        # A file written before meta.build existed still loads and compares.
        text, same = self.compare(SYNTHETIC_H200, SYNTHETIC_H200)
        self.assertIsNone(same)

    def test_a_malformed_hash_is_refused(self):
        proc = run("report", self.edited("bad.json", "xyz"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("meta.build.source_sha256 must be 64 lowercase hex digits", proc.stderr)


if __name__ == "__main__":
    unittest.main()
