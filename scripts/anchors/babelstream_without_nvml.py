#!/usr/bin/env python3
"""Rewrites a copy of BabelStream's src/cuda/CUDAStream.cu to build without nvml.h.

BabelStream reads the memory clock through NVML only to print the device's theoretical peak
bandwidth; the rewrite reads it from cudaDevAttrMemoryClockRate instead and drops the NVML
helpers. Nothing BabelStream times changes. Each edit must find its text exactly once, so a
BabelStream that moved on fails here loudly instead of building something else.

    babelstream_without_nvml.py FILE     (edited in place)
"""
import re
import sys


def replace_once(text, pattern, replacement, what):
    new, count = re.subn(pattern, replacement, text, flags=re.S)
    if count != 1:
        sys.exit(f"babelstream_without_nvml.py: {what}: found {count} times, expected once")
    return new


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = replace_once(text, r"#include <nvml\.h>\n", "", "the nvml.h include")
    text = replace_once(text, r"\[\[noreturn\]\] inline void nvml_error\(.*?\n}\n", "",
                        "nvml_error()")
    text = replace_once(text, r"#define NVML\(EXPR\)[^\n]*\n", "", "the NVML macro")
    text = replace_once(
        text,
        r"  NVML\(nvmlInit\(\)\);\n(  cudaDeviceProp dprop;\n"
        r"  CU\(cudaGetDeviceProperties\(&dprop, device_index\)\);\n).*?"
        r"NVML\(nvmlDeviceGetClockInfo\([^\n]*\n",
        r"\1  int memclock_khz = 0;\n"
        r"  CU(cudaDeviceGetAttribute(&memclock_khz, cudaDevAttrMemoryClockRate, device_index));\n"
        r"  unsigned int memclock = memclock_khz / 1000;\n",
        "the NVML memory-clock read")
    if "nvml" in text.lower():
        sys.exit("babelstream_without_nvml.py: NVML is still named after the rewrite")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
