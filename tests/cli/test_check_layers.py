"""scripts/check-layers.py: the repository's lib/ has no folder cycle and no CUDA runtime call,
docs/architecture.md shows its graph as the script prints it, and each planted problem (a cycle of two or three folders, the engine including the registry, a
CUDA runtime call) fails with the folders, files and lines named."""
import os
import re
import shutil
import subprocess
import sys
import unittest

from gpubench_cli import SOURCE_DIR, tempdir

SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check-layers.py")


def check(root):
    return subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                          text=True, timeout=60)


def graph_lines(stdout):
    """{folder: [folders it includes]} from the printed graph."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\w+)\s+-> (.*)$", line)
        if m:
            out[m.group(2)] = [] if m.group(3) == "(nothing)" else m.group(3).split(", ")
    return out


class TheRepository(unittest.TestCase):
    def test_lib_has_no_cycle_and_no_cuda_call(self):
        r = check(SOURCE_DIR)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("no cycle, no CUDA runtime call in lib/", r.stdout)

    def test_architecture_md_shows_the_graph_as_printed(self):
        r = check(SOURCE_DIR)
        with open(os.path.join(SOURCE_DIR, "docs", "architecture.md")) as f:
            doc = f.read()
        self.assertIn(r.stdout, doc, "docs/architecture.md, 'Layers inside lib/': paste the "
                      "output of scripts/check-layers.py")

    def test_the_registry_is_on_top_and_the_engine_knows_no_workload(self):
        r = check(SOURCE_DIR)
        graph = graph_lines(r.stdout)
        order = list(graph)  # printed top first
        # check runs the benchmarks' own points: it alone sits above the registry.
        self.assertEqual(order[:2], ["check", "registry"], r.stdout)
        self.assertEqual([f for f, below in graph.items() if "registry" in below], ["check"])
        for workload in ("vecadd", "augment", "pipeline", "stream"):
            self.assertIn(workload, graph["registry"])
            self.assertLess(order.index(workload), order.index("engine"))
        for lower in ("engine", "results", "telemetry", "input", "core"):
            self.assertFalse({"registry", "vecadd", "augment", "pipeline", "stream", "scale"}
                             & set(graph[lower]), f"{lower}: {graph[lower]}")
        self.assertNotIn("engine", graph["results"])
        self.assertNotIn("engine", graph["telemetry"])
        self.assertNotIn("results", graph["telemetry"])


class PlantedProblems(unittest.TestCase):
    def setUp(self):
        self._dir = tempdir()
        self.root = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def clean_tree(self):
        self.write("lib/include/gpubench/low/a.hpp", "#pragma once\n#include <cuda_runtime_api.h>\n"
                   "void a(cudaStream_t s);\n")
        self.write("lib/src/low/a.cpp", '#include "gpubench/low/a.hpp"\n'
                   '#include "gpubench/cuda/stream.hpp"\n'
                   "// cudaStreamSynchronize(s) would be a call; in a comment it is prose.\n"
                   "/* cudaFree(p); */\n"
                   'const char* why = "cudaMemcpy( in a string";\n'
                   "void a(cudaStream_t s) { gpubench::cuda::synchronize(s); }\n")
        self.write("lib/src/high/b.cpp", '#include "gpubench/low/a.hpp"\n'
                   '#include "gpubench/dtype.hpp"\n'
                   "int b = cudaMemcpyHostToDevice;\n")

    def test_a_clean_tree_passes_and_prints_its_graph(self):
        self.clean_tree()
        r = check(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(graph_lines(r.stdout), {"high": ["low"], "low": ["cuda"]})
        self.assertIn("check-layers: 2 folders, no cycle", r.stdout)

    def test_a_cycle_of_two_folders_is_named_with_the_includes(self):
        self.clean_tree()
        self.write("lib/include/gpubench/low/c.hpp", "#pragma once\n\n"
                   '#include "gpubench/high/b.hpp"\n')
        self.write("lib/include/gpubench/high/b.hpp", "#pragma once\n")
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        findings = [line for line in r.stdout.splitlines() if line.startswith("cycle")]
        self.assertEqual(len(findings), 1, r.stdout)
        self.assertIn("cycle among high, low: high -> low -> high", findings[0])
        self.assertIn("high -> low (lib/src/high/b.cpp:1)", findings[0])
        self.assertIn("low -> high (lib/include/gpubench/low/c.hpp:3)", findings[0])
        self.assertIn("check-layers: 1 finding(s)", r.stderr)

    def test_a_cycle_through_three_folders_is_found(self):
        self.clean_tree()
        self.write("lib/src/mid/m.cpp", '#include "gpubench/high/b.hpp"\n')
        self.write("lib/include/gpubench/low/c.hpp", '#include "gpubench/mid/m.hpp"\n')
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("cycle among high, low, mid: high -> low -> mid -> high", r.stdout)

    def test_the_engine_including_the_registry_is_a_cycle(self):
        shutil.copytree(os.path.join(SOURCE_DIR, "lib"), os.path.join(self.root, "lib"))
        runner = os.path.join(self.root, "lib", "src", "engine", "runner.cpp")
        with open(runner) as f:
            text = f.read()
        with open(runner, "w") as f:
            f.write('#include "gpubench/registry/registry.hpp"\n' + text)
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"cycle among [a-z, ]*engine[a-z, ]*registry")
        self.assertIn("engine -> registry (lib/src/engine/runner.cpp:1)", r.stdout)

    def test_a_read_of_the_environment_outside_the_seam_is_named(self):
        self.clean_tree()
        self.write("cuda/src/x/loader.cpp", "// getenv(\"IN_A_COMMENT\") is prose\n"
                   "const char* p = std::getenv(\"GPUBENCH_X\");\n")
        self.write("app/main.cpp", "extern char** environ;\n")
        self.write("lib/src/engine/environment.cpp", "const char* v = getenv(\"OK_HERE\");\n")
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        findings = [line for line in r.stdout.splitlines() if "reads the environment" in line]
        self.assertEqual([f.split(": ")[0] for f in findings],
                         ["app/main.cpp:1", "cuda/src/x/loader.cpp:2"], r.stdout)

    def test_a_cuda_runtime_call_is_named_with_its_line(self):
        self.clean_tree()
        self.write("lib/src/high/copy.cpp", "void f(void* d, const void* s) {\n"
                   "  // a comment first\n"
                   "  cudaMemcpy (d, s, 4, cudaMemcpyHostToDevice);\n"
                   "}\n")
        self.write("lib/include/gpubench/high/sync.hpp",
                   "inline void g() { cudaGraphLaunch(0, 0); }\n")
        r = check(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        findings = [line for line in r.stdout.splitlines() if "CUDA runtime call" in line]
        self.assertEqual(len(findings), 2, r.stdout)
        self.assertTrue(findings[0].startswith("lib/include/gpubench/high/sync.hpp:1: CUDA runtime "
                                               "call cudaGraphLaunch()"), findings)
        self.assertTrue(findings[1].startswith("lib/src/high/copy.cpp:3: CUDA runtime call "
                                               "cudaMemcpy()"), findings)
        self.assertIn("check-layers: 2 finding(s)", r.stderr)


if __name__ == "__main__":
    unittest.main()
