"""numpy.matmul (Debian's numpy on Debian's OpenBLAS, the library gpubench links) at N^3 in f32 and
f64 on all cores: one warm-up call, then CALLS calls, median and min. Prints JSON."""
import json
import statistics
import sys
import time

import numpy as np

N = int(sys.argv[1])
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
out = {"n": N, "numpy": np.__version__}
rng = np.random.default_rng(1)
for name, dtype in (("f32", np.float32), ("f64", np.float64)):
    a = (rng.random((N, N)) * 2 - 1).astype(dtype)
    b = (rng.random((N, N)) * 2 - 1).astype(dtype)
    np.matmul(a, b)
    times = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        np.matmul(a, b)
        times.append(time.perf_counter() - t0)
    out[name] = {"median_s": statistics.median(times), "min_s": min(times),
                 "flops_per_s": 2.0 * N ** 3 / statistics.median(times)}
print(json.dumps(out))
