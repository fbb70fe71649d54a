"""The yardsticks beside `gpubench gemm` at 8192^3 on the same machine and call: torch.matmul on
the GPU (CUDA events around each of CALLS calls after 5 warm-up calls, median, and the SM clock
NVML reads right after; tf32 with torch.backends.cuda.matmul.allow_tf32, f32 without) and
numpy.matmul (OpenBLAS) on the host's cores (3 calls after one warm-up, median); fp8 through
torch._scaled_mm (E4M3 inputs, unit scales, bf16 out).
    torch_numpy.py [N [CALLS [DTYPES [numpy]]]]     defaults: 8192 30 bf16,f16,tf32,f32,f64 numpy
Prints one JSON document."""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
DTYPES = sys.argv[3].split(",") if len(sys.argv) > 3 else ["bf16", "f16", "tf32", "f32", "f64"]
NUMPY = len(sys.argv) <= 4 or sys.argv[4] == "numpy"
FLOP = 2.0 * N ** 3
out = {"n": N, "calls": CALLS, "torch": torch.__version__, "numpy": np.__version__, "cpus": os.cpu_count(),
       "gpu": torch.cuda.get_device_name(0), "numpy_blas": str(np.show_config(mode="dicts")
                                                             .get("Build Dependencies", {})
                                                             .get("blas", {}))}
gen = torch.Generator(device="cuda").manual_seed(1)
for name, dtype, tf32 in (("bf16", torch.bfloat16, False), ("f16", torch.float16, False),
                          ("tf32", torch.float32, True), ("f32", torch.float32, False),
                          ("f64", torch.float64, False)):
    if name not in DTYPES:
        continue
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.rand((N, N), device="cuda", dtype=dtype, generator=gen) * 2 - 1
    b = torch.rand((N, N), device="cuda", dtype=dtype, generator=gen) * 2 - 1
    for _ in range(5):
        torch.matmul(a, b)
    times = []
    for _ in range(CALLS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    med = statistics.median(times)
    out[f"torch_{name}"] = {"median_s": med, "min_s": min(times), "flops_per_s": FLOP / med,
                            "sm_clock_mhz_after": torch.cuda.clock_rate(0)}
    del a, b
    torch.cuda.empty_cache()
if "fp8" in DTYPES:  # E4M3 inputs, bf16 out, through torch._scaled_mm (A row-major, B column-major)
    a = (torch.rand((N, N), device="cuda", generator=gen) * 2 - 1).to(torch.float8_e4m3fn)
    b = (torch.rand((N, N), device="cuda", generator=gen) * 2 - 1).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    def fp8_mm():
        return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    for _ in range(5):
        fp8_mm()
    times = []
    for _ in range(CALLS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fp8_mm()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    med = statistics.median(times)
    out["torch_fp8"] = {"median_s": med, "min_s": min(times), "flops_per_s": FLOP / med,
                        "sm_clock_mhz_after": torch.cuda.clock_rate(0)}
    del a, b
rng = np.random.default_rng(1)
for name, dtype in (("f32", np.float32), ("f64", np.float64)) if NUMPY else ():
    a = (rng.random((N, N)) * 2 - 1).astype(dtype)
    b = (rng.random((N, N)) * 2 - 1).astype(dtype)
    np.matmul(a, b)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        np.matmul(a, b)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    out[f"numpy_{name}"] = {"median_s": med, "min_s": min(times), "flops_per_s": FLOP / med}
print(json.dumps(out, indent=1))
