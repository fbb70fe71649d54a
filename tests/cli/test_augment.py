"""gpubench augment: the CPU-only result, the OpenCV baseline row (present, verified and faster than
the float reference; or absent and said so), --save-samples pictures, --input directories, and the
usage errors (exit 2, the message names the option)."""
import json
import os
import struct
import subprocess
import tempfile
import unittest
import zlib

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")
QUICK = ["--min-samples", "1", "--max-samples", "2", "--min-time", "0", "--warmup", "0"]
SMALL = ["--size", "48", "--crop", "32", "--resize", "40"]


def gpubench(*args, timeout=300, env=None):
    return subprocess.run([GPUBENCH, *args], capture_output=True, text=True, timeout=timeout,
                          check=False, env=None if env is None else {**os.environ, **env})


def opencv_built_in():
    """Whether this gpubench has the OpenCV baseline (its --version says)."""
    out = gpubench("--version").stdout
    return "OpenCV: built in" in out


def png_chunks(data):
    """(type, payload) of every chunk of a PNG, checking the signature and each CRC."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos = 8
    chunks = []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        payload = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + payload) & 0xFFFFFFFF != crc:
            raise ValueError(f"bad CRC in {kind!r}")
        chunks.append((kind, payload))
        pos += 12 + length
    return chunks


def decode_png(path):
    """Width, height, channels and the raw scanlines (filter byte + pixels) of an 8-bit PNG."""
    with open(path, "rb") as f:
        chunks = png_chunks(f.read())
    kind, ihdr = chunks[0]
    assert kind == b"IHDR"
    width, height, depth, color = struct.unpack(">IIBB", ihdr[:10])
    assert depth == 8
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw = zlib.decompress(b"".join(p for k, p in chunks if k == b"IDAT"))
    assert chunks[-1][0] == b"IEND"
    return width, height, channels, raw


def write_png(path, width, height, channels, pixel):
    """An 8-bit PNG whose pixel (x, y) is pixel(x, y) -> tuple of `channels` bytes."""
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width))
                    for y in range(height))

    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload +
                struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows)))
        f.write(chunk(b"IEND", b""))


class AugmentCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def run_json(self, *args, env=None):
        proc = gpubench("augment", "--cpu-only", "--format", "json", "-q", *QUICK, *args, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def assert_usage_error(self, args, *fragments):
        proc = gpubench("augment", *args)
        self.assertEqual(proc.returncode, 2, (args, proc.stdout, proc.stderr))
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr, args)


class CpuOnly(AugmentCase):
    def test_one_result_per_batch_with_the_cpu_rows(self):
        doc = self.run_json("--batch", "2,3", *SMALL)
        self.assertEqual([r["params"]["batch"] for r in doc["results"]], [2, 3])
        with_opencv = opencv_built_in()
        for r in doc["results"]:
            self.assertEqual(r["device"], -1)
            self.assertEqual([m["name"] for m in r["measurements"]],
                             ["cpu_reference", "cpu_opencv"] if with_opencv else ["cpu_reference"])
            for m in r["measurements"]:
                self.assertEqual(m["clock"], "host")
                self.assertEqual(m["items"], r["params"]["batch"])
                self.assertGreater(m["rates"]["items_per_s"], 0)
            self.assertIn("cpu_reference_images_per_s", r["derived"])
            # Without a GPU the only check is OpenCV's output against the float reference.
            self.assertEqual(r["verification"]["performed"], with_opencv)
            self.assertNotIn("impl", r["params"])
            for key in ("height", "width", "channels", "crop", "resize", "degrees", "interp",
                        "blur", "sigma", "mean", "std"):
                self.assertIn(key, r["params"])

    def test_parameters_reach_the_result(self):
        doc = self.run_json("--batch", "1", "--height", "40", "--width", "60", "--channels", "4",
                            "--crop", "40", "--resize", "24", "--degrees", "90", "--interp",
                            "bilinear", "--blur", "3", "--sigma", "0.5", "--mean", "1,2,3,4",
                            "--std", "2")
        p = doc["results"][0]["params"]
        self.assertEqual((p["height"], p["width"], p["channels"]), (40, 60, 4))
        self.assertEqual((p["crop"], p["resize"], p["blur"]), (40, 24, 3))
        self.assertEqual(p["interp"], "bilinear")
        self.assertEqual(p["sigma"], "0.5:0.5")
        self.assertEqual(p["mean"], [1, 2, 3, 4])
        self.assertEqual(p["std"], [2])

    def test_table_has_the_summary(self):
        proc = gpubench("augment", "--cpu-only", "-q", "--batch", "2", *QUICK, *SMALL)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("cpu_reference", proc.stdout)
        self.assertIn("augment summary", proc.stdout)


class OpenCvBaseline(AugmentCase):
    """The OpenCV row: the same pipeline and parameters through OpenCV's C++ API."""

    @unittest.skipUnless(opencv_built_in(), "this gpubench was built without OpenCV")
    def test_row_is_present_verified_and_faster_than_the_float_reference(self):
        # The default shape (3 x 256 x 256, crop 128 -> 256), enough samples for stable medians.
        proc = gpubench("augment", "--cpu-only", "--format", "json", "-q", "--batch", "16",
                        "--cpu-threads", "2", "--min-samples", "5", "--max-samples", "20",
                        "--min-time", "0.2", "--warmup", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        r = doc["results"][0]
        names = [m["name"] for m in r["measurements"]]
        self.assertEqual(names, ["cpu_reference", "cpu_opencv"])
        row = r["measurements"][1]
        self.assertIn("OpenCV", row["description"])
        self.assertIn("2 threads", row["description"])
        check = r["verification"]["details"]["cpu_opencv"]
        self.assertTrue(r["verification"]["passed"], check)
        self.assertTrue(check["passed"])
        self.assertEqual(check["checked"], 16 * 3 * 256 * 256)
        self.assertGreaterEqual(check["within_tolerance_fraction"], 0.995)
        self.assertEqual(check["non_finite"], 0)
        self.assertIn("|opencv - ref| <= 1 / std", check["method"])
        d = r["derived"]
        self.assertGreater(d["cpu_opencv_images_per_s"], d["cpu_reference_images_per_s"])
        self.assertEqual(d["fastest_cpu"], "cpu_opencv")
        self.assertGreater(d["speedup_cpu_opencv_vs_cpu_reference"], 1.0)
        self.assertNotIn("cpu_opencv_absent", d)

    @unittest.skipUnless(opencv_built_in(), "this gpubench was built without OpenCV")
    def test_the_summary_shows_both_cpu_rows(self):
        proc = gpubench("augment", "--cpu-only", "-q", "--batch", "2", *QUICK, *SMALL)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary = proc.stdout[proc.stdout.index("augment summary"):]
        header = summary.splitlines()[1].split()
        self.assertEqual(header[:4], ["batch", "cpu_reference", "cpu_opencv", "opencv/ref"])
        self.assertRegex(summary.splitlines()[2], r"^\s*2\s+\S+( [kM])?\s+\S+( [kM])?\s+[0-9.]+x\s")
        self.assertIn("OpenCV 4.", gpubench("--version").stdout)

    def test_without_opencv_the_row_says_not_built_in(self):
        # A build without OpenCV, or (for this test, in any build) one told to behave as one.
        env = {"GPUBENCH_TEST_PRETEND_NO_OPENCV": "1"}
        doc = self.run_json("--batch", "2", *SMALL, env=env)
        r = doc["results"][0]
        self.assertEqual([m["name"] for m in r["measurements"]], ["cpu_reference"])
        self.assertIn("not built in", r["derived"]["cpu_opencv_absent"])
        self.assertEqual(r["derived"]["fastest_cpu"], "cpu_reference")
        self.assertFalse(r["verification"]["performed"])
        proc = gpubench("augment", "--cpu-only", "-q", "--batch", "2", *QUICK, *SMALL, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"\n\s*2\s+[0-9.]+( [kM])?\s+not built in\s")
        self.assertIn("cpu_opencv: not built in", proc.stdout)
        # The line wraps to the output's width.
        self.assertIn("the CPU baseline is cpu_reference", " ".join(proc.stdout.split()))
        version = gpubench("--version", env=env).stdout
        self.assertIn("OpenCV: not built in", version)


    def test_version_and_doctor_say_whether_opencv_is_built_in(self):
        pretend = {"GPUBENCH_TEST_PRETEND_NO_OPENCV": "1"}
        for env, built_in in ((None, opencv_built_in()), (pretend, False)):
            proc = gpubench("doctor", "--format", "json", env=env)
            self.assertIn(proc.returncode, (0, 77), proc.stderr)
            doc = json.loads(proc.stdout)
            self.assertEqual(doc["gpubench"]["opencv"], built_in)
            self.assertEqual(doc["opencv"]["built_in"], built_in)
            if built_in:
                self.assertRegex(doc["opencv"]["version"], r"^\d+\.\d+")
            else:
                self.assertIn("not built in", doc["opencv"]["reason"])
            table = gpubench("doctor", env=env).stdout
            self.assertRegex(table, r"OpenCV \(augment\) +" +
                             ("compiled in \(\d" if built_in else "not compiled in"))


class SaveSamples(AugmentCase):
    def test_pictures_exist_and_decode(self):
        out = self.path("samples")
        self.run_json("--batch", "3", "--height", "50", "--width", "70", "--crop", "40",
                      "--resize", "64", "--save-samples", out)
        names = sorted(os.listdir(out))
        self.assertEqual(names, ["sample_0.png", "sample_1.png", "sample_2.png"])
        for name in names:
            width, height, channels, raw = decode_png(os.path.join(out, name))
            # Input (70 wide) + 8 px gap + output (64), as tall as the taller of the two.
            self.assertEqual((width, height, channels), (70 + 8 + 64, 64, 3))
            self.assertEqual(len(raw), height * (1 + width * channels))

    def test_one_channel_gives_gray_and_at_most_four_pictures(self):
        out = self.path("gray")
        self.run_json("--batch", "6", "--channels", "1", *SMALL, "--save-samples", out)
        names = sorted(os.listdir(out))
        self.assertEqual(len(names), 4)
        _, _, channels, _ = decode_png(os.path.join(out, names[0]))
        self.assertEqual(channels, 1)

    def test_a_trailing_slash_names_the_folder(self):
        # "out/" and "out//" are the folder out of the current directory, created there.
        for name in ("out/", "deeper//"):
            proc = subprocess.run([GPUBENCH, "augment", "--cpu-only", "-q", *QUICK, "--batch", "2",
                                   *SMALL, "--save-samples", name], cwd=self.tmp.name,
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(sorted(os.listdir(self.path(name.rstrip("/")))),
                             ["sample_0.png", "sample_1.png"])
        self.run_json("--batch", "1", *SMALL, "--save-samples", self.path("abs") + "/")
        self.assertEqual(os.listdir(self.path("abs")), ["sample_0.png"])

    def test_missing_parent_is_a_usage_error(self):
        self.assert_usage_error(["--cpu-only", "--save-samples", self.path("no", "such", "dir")],
                                "--save-samples")


class Input(AugmentCase):
    def test_png_files_become_the_batch(self):
        pictures = self.path("pictures")
        os.mkdir(pictures)
        write_png(os.path.join(pictures, "a.png"), 30, 20, 3, lambda x, y: (x * 8, y * 12, 100))
        write_png(os.path.join(pictures, "b.png"), 100, 90, 1, lambda x, y: ((x + y) % 256,))
        with open(os.path.join(pictures, ".hidden"), "w", encoding="utf-8") as f:
            f.write("ignored")
        out = self.path("samples")
        doc = self.run_json("--batch", "3", *SMALL, "--input", pictures, "--save-samples", out)
        self.assertEqual(doc["results"][0]["params"]["input"], pictures)
        self.assertEqual(len(os.listdir(out)), 3)

    def test_a_file_that_is_not_an_image_is_a_usage_error(self):
        pictures = self.path("mixed")
        os.mkdir(pictures)
        write_png(os.path.join(pictures, "a.png"), 8, 8, 3, lambda x, y: (1, 2, 3))
        with open(os.path.join(pictures, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("not a picture")
        self.assert_usage_error(["--cpu-only", "--input", pictures], "--input", "notes.txt",
                                "not a PNG or JPEG")

    def test_a_truncated_png_is_a_usage_error(self):
        pictures = self.path("broken")
        os.mkdir(pictures)
        write_png(os.path.join(pictures, "a.png"), 16, 16, 3, lambda x, y: (x, y, 0))
        with open(os.path.join(pictures, "a.png"), "rb") as f:
            data = f.read()
        with open(os.path.join(pictures, "a.png"), "wb") as f:
            f.write(data[:20])
        self.assert_usage_error(["--cpu-only", "--input", pictures], "--input", "a.png")

    def test_missing_or_empty_directory_is_a_usage_error(self):
        self.assert_usage_error(["--cpu-only", "--input", self.path("none")], "--input")
        os.mkdir(self.path("empty"))
        self.assert_usage_error(["--cpu-only", "--input", self.path("empty")], "--input",
                                "no image files")

    def test_more_than_four_channels_cannot_come_from_pictures(self):
        pictures = self.path("pictures")
        os.mkdir(pictures)
        write_png(os.path.join(pictures, "a.png"), 8, 8, 3, lambda x, y: (1, 2, 3))
        self.assert_usage_error(["--cpu-only", "--input", pictures, "--channels", "5"],
                                "--channels")


class UsageErrors(AugmentCase):
    def test_each_bad_value_names_its_option(self):
        cases = [
            (["--crop", "300"], "--crop 300 is larger than the image (256x256)"),
            (["--height", "100", "--crop", "128"], "--crop"),
            (["--blur", "6"], "--blur"),
            (["--blur", "0"], "--blur"),
            (["--blur", "33"], "--blur"),
            (["--resize", "4", "--blur", "9"], "--blur"),
            (["--sigma", "2:1"], "--sigma"),
            (["--sigma", "0:1"], "--sigma"),
            (["--sigma", "-1"], "--sigma"),
            (["--sigma", "a:b"], "--sigma"),
            (["--channels", "0"], "--channels"),
            (["--channels", "17"], "--channels"),
            (["--mean", "1,2"], "--mean"),
            (["--std", "0"], "--std"),
            (["--std", "1,-1,1"], "--std"),
            (["--degrees", "-1"], "--degrees"),
            (["--degrees", "181"], "--degrees"),
            (["--interp", "cubic"], "--interp"),
            (["--out-dtype", "f64"], "--out-dtype"),
            (["--impl", "both"], "--impl"),
            (["--batch", "0"], "--batch"),
            (["--batch", "many"], "batch"),
            (["--size", "0"], "--size"),
            (["--resize", "0"], "--resize"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                self.assert_usage_error(["--cpu-only", *args], fragment)
                # The same check happens before any device is looked for.
                self.assert_usage_error(args, fragment)

    def test_a_batch_that_cannot_fit_in_device_memory(self):
        proc = gpubench("augment", "--batch", "1048576", "--size", "2048", "--crop", "1024",
                        "--resize", "2048")
        if proc.returncode == 77:
            self.skipTest("no usable CUDA device: " + proc.stderr.strip())
        # The point is skipped with its reason (the error policy: a batch that does not fit is
        # checked per point, so a sweep's smaller batches still run) and the exit is 3.
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn("point skipped: out of memory", proc.stderr)
        self.assertIn("--batch 1048576", proc.stderr)
        self.assertIn("GB of device memory", proc.stderr)
        self.assertIn("free", proc.stderr)


if __name__ == "__main__":
    unittest.main()
