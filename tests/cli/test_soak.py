"""Soak (docs/reliability.md, "Soak"): a 2,000-point --cpu-only sweep with its journal. Peak RSS
after 2,000 points is at most 1.5x that after 200, the time per point stays flat (the last 200
points within 20% of the first 200 after warm-up), and the final file holds exactly what the
journal held. The figures are printed for CI's log."""
import json
import os
import subprocess
import time
import unittest

from gpubench_cli import FAST, GPUBENCH, tempdir, validate

WARMUP_POINTS = 50


def sweep(points):
    """`points` equal CPU points: vecadd of 1,000 to 999+points elements, one thread."""
    return ["vecadd", "--cpu-only", "--n", f"1000:{999 + points}:1", *FAST, "--cpu-threads", "1",
            "--quiet"]


def peak_rss_kib(args, out):
    """Peak RSS of a whole run of `args`, from the kernel's accounting of the child."""
    proc = subprocess.Popen([GPUBENCH, *args, "--output", out], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    return os.waitstatus_to_exitcode(status), stderr, usage.ru_maxrss


class Soak(unittest.TestCase):
    def test_two_thousand_points_stay_flat_in_memory_and_time(self):
        with tempdir() as d:
            out200 = os.path.join(d, "s200.json")
            code, stderr, rss200 = peak_rss_kib(sweep(200), out200)
            self.assertEqual(code, 0, stderr)

            out = os.path.join(d, "s2000.json")
            journal = out + ".journal"
            proc = subprocess.Popen([GPUBENCH, *sweep(2000), "--output", out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            began = time.monotonic()
            handle, chunks = None, []
            while True:
                if handle is None:
                    try:
                        handle = open(journal, "rb")  # pylint: disable=consider-using-with
                    except FileNotFoundError:
                        pass
                if handle is not None:
                    chunks.append(handle.read())
                _, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if _ != 0:
                    break
                time.sleep(0.02)
            wall = time.monotonic() - began
            self.assertIsNotNone(handle, "the run wrote no journal")
            chunks.append(handle.read())  # the rest, read after the run deleted the journal
            handle.close()
            stderr = proc.stderr.read().decode()
            proc.stderr.close()
            self.assertEqual(os.waitstatus_to_exitcode(status), 0, stderr)
            rss2000 = usage.ru_maxrss
            self.assertFalse(os.path.exists(journal), "a finished run removes its journal")

            lines = [json.loads(x) for x in b"".join(chunks).decode().split("\n")[:-1]]
            header, points = lines[0], lines[1:]
            self.assertEqual(header["planned"], 2000)
            self.assertEqual([p["point"] for p in points], list(range(2000)))
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            validate(doc)
            self.assertEqual(len(doc["results"]), 2000)
            for p in points:
                self.assertEqual(doc["results"][p["point"]], p["result"],
                                 f"point {p['point']}: the file and the journal differ")

            t = [p["t"] for p in points]
            first = (t[WARMUP_POINTS + 199] - t[WARMUP_POINTS - 1]) / 200
            last = (t[1999] - t[1799]) / 200
            print(f"soak: 2000 points in {wall:.1f} s; peak RSS {rss200} KiB after 200 points, "
                  f"{rss2000} KiB after 2000 ({rss2000 / rss200:.2f}x); time per point "
                  f"{first * 1e3:.2f} ms (points {WARMUP_POINTS + 1}-{WARMUP_POINTS + 200}), "
                  f"{last * 1e3:.2f} ms (points 1801-2000, {last / first:.2f}x)")
            self.assertLessEqual(rss2000, 1.5 * rss200)
            self.assertLessEqual(last, 1.2 * first, "the time per point grows along the sweep")


if __name__ == "__main__":
    unittest.main()
