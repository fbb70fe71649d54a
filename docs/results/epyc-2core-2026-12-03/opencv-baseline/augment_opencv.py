#!/usr/bin/env python3
"""gpubench augment's OpenCV baseline, written in Python with Debian's python3-opencv, to compare
with gpubench's C++ cpu_opencv row on the same machine and threads.

The same pipeline and per-image parameters as `gpubench augment` (docs/augment.md): a batch of
3 x 256 x 256 uint8 images (NCHW), per image a 128 x 128 crop at (top, left), bilinear resize to
256 x 256, nearest rotation about (255/2, 255/2) with zero fill, 7 x 7 Gaussian blur (reflect-101)
of sigma in [0.1, 2.0], float32 NCHW out. (top, left, angle, sigma) come from gpubench's
counter-based generator, reimplemented below, so image i gets the values gpubench's image i gets.

Formulations ("--variant"):
  planar-groups  what gpubench's C++ row does: crop planes merged to interleaved uint8, resize and
                 warpAffine interleaved, split to planes, each plane blurred from uint8 into
                 float32 (sepFilter2D with the image's Gaussian taps) into its plane of the NCHW
                 output.
  hwc            the usual Python way: interleaved (HWC) all the way, astype(float32) and
                 cv2.GaussianBlur on 3 channels, then one transpose to CHW.
Threads ("--threading"):
  images         a ThreadPoolExecutor of --threads workers, one image per task, cv2.setNumThreads(1)
                 (cv2 releases the GIL inside each call);
  opencv         the images one after another, each call on OpenCV's own pool (setNumThreads(N)).

Usage: python3 augment_opencv.py --batch 32,256 --threads 2 [--variant ...] [--threading ...]
Prints one line per (variant, threading, batch): the median images/s over --repeats batches.
"""
import argparse
import concurrent.futures
import math
import statistics
import time

import cv2
import numpy as np

MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def random_bits(seed, stream, index):
    return splitmix64((splitmix64(seed ^ splitmix64((stream + 0x632BE59BD9B4E019) & MASK))
                       + index) & MASK)


def draw_params(seed, batch, height=256, width=256, crop=128, degrees=45.0, lo=0.1, hi=2.0):
    """(top, left, angle_deg, cos, sin, sigma) of images 0..batch-1 of step 0, as gpubench."""
    stream = 0x6175676D656E7400  # "augment\0" + step 0
    out = []
    for i in range(batch):
        bits = [random_bits(seed, stream, 4 * i + f) for f in range(4)]
        top = ((bits[0] >> 32) * (height - crop + 1)) >> 32
        left = ((bits[1] >> 32) * (width - crop + 1)) >> 32
        unit = [(b >> 11) * (1.0 / 9007199254740992.0) for b in bits]
        angle = float(np.float32((2.0 * unit[2] - 1.0) * degrees))
        rad = angle * math.pi / 180.0
        cos, sin = float(np.float32(math.cos(rad))), float(np.float32(math.sin(rad)))
        sigma = float(np.float32(lo + (hi - lo) * unit[3]))
        out.append((top, left, angle, cos, sin, sigma))
    return out


def gaussian_taps(sigma, radius):
    """exp(-k^2 / (2 sigma^2)), k = -radius..radius, normalized in double, rounded to float32."""
    w = np.exp(-np.arange(-radius, radius + 1, dtype=np.float64) ** 2 / (2.0 * sigma * sigma))
    return (w / w.sum()).astype(np.float32)


def inverse_map(cos, sin, n):
    c = 0.5 * (n - 1)
    return np.array([[cos, -sin, c - cos * c + sin * c], [sin, cos, c - sin * c - cos * c]])


def augment_planar_groups(img, p, out, crop=128, size=256):
    top, left, _, cos, sin, sigma = p
    crops = [img[c, top:top + crop, left:left + crop] for c in range(img.shape[0])]
    merged = cv2.merge(crops)
    resized = cv2.resize(merged, (size, size), interpolation=cv2.INTER_LINEAR)
    rotated = cv2.warpAffine(resized, inverse_map(cos, sin, size), (size, size),
                             flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    taps = gaussian_taps(sigma, 3)
    for c, plane in enumerate(cv2.split(rotated)):
        cv2.sepFilter2D(plane, cv2.CV_32F, taps, taps, dst=out[c],
                        borderType=cv2.BORDER_REFLECT_101)


def augment_hwc(img, p, out, crop=128, size=256):
    top, left, _, cos, sin, sigma = p
    hwc = np.ascontiguousarray(img[:, top:top + crop, left:left + crop].transpose(1, 2, 0))
    resized = cv2.resize(hwc, (size, size), interpolation=cv2.INTER_LINEAR)
    rotated = cv2.warpAffine(resized, inverse_map(cos, sin, size), (size, size),
                             flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    blurred = cv2.GaussianBlur(rotated.astype(np.float32), (7, 7), sigma, sigmaY=sigma,
                               borderType=cv2.BORDER_REFLECT_101)
    out[...] = blurred.transpose(2, 0, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", default="32,256")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--variant", default="planar-groups,hwc")
    ap.add_argument("--threading", default="images,opencv")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"python3-opencv {cv2.__version__}, numpy {np.__version__}, threads {args.threads}")
    variants = {"planar-groups": augment_planar_groups, "hwc": augment_hwc}
    pool = concurrent.futures.ThreadPoolExecutor(args.threads)
    rng = np.random.default_rng(args.seed)
    for batch in [int(b) for b in args.batch.split(",")]:
        images = rng.integers(0, 256, size=(batch, 3, 256, 256), dtype=np.uint8)
        params = draw_params(args.seed, batch)
        out = np.empty((batch, 3, 256, 256), dtype=np.float32)
        for name in args.variant.split(","):
            fn = variants[name]
            for threading in args.threading.split(","):
                if threading == "images":
                    cv2.setNumThreads(1)
                    chunks = np.array_split(np.arange(batch), args.threads)

                    def run_chunk(idx):
                        for i in idx:
                            fn(images[i], params[i], out[i])

                    def run():
                        list(pool.map(run_chunk, chunks))
                else:
                    cv2.setNumThreads(args.threads)

                    def run():
                        for i in range(batch):
                            fn(images[i], params[i], out[i])
                run()  # warm-up
                times = []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    run()
                    times.append(time.perf_counter() - t0)
                med = statistics.median(times)
                print(f"{name:14s} {threading:7s} batch {batch:4d}: {batch / med:8.0f} images/s "
                      f"(median of {args.repeats}, best {batch / min(times):.0f})")


if __name__ == "__main__":
    main()
