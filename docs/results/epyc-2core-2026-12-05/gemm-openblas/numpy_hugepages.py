"""numpy.matmul at N^3 in f32 and f64 with numpy's madvise(MADV_HUGEPAGE) on its arrays turned on or
off (numpy turns it on by default on Linux): one warm-up call, then CALLS calls, median in ms.
    numpy_hugepages.py N CALLS on|off          prints one JSON line"""
import json, statistics, sys, time
import numpy as np
from numpy.core.multiarray import _set_madvise_hugepage
N = int(sys.argv[1]); CALLS = int(sys.argv[2]); hp = sys.argv[3] == "on"
_set_madvise_hugepage(hp)
out = {"n": N, "hugepage": hp}
rng = np.random.default_rng(1)
for name, dtype in (("f32", np.float32), ("f64", np.float64)):
    a = (rng.random((N, N)) * 2 - 1).astype(dtype)
    b = (rng.random((N, N)) * 2 - 1).astype(dtype)
    np.matmul(a, b)
    t = []
    for _ in range(CALLS):
        t0 = time.perf_counter(); np.matmul(a, b); t.append(time.perf_counter() - t0)
    out[name] = round(statistics.median(t) * 1e3, 1)
print(json.dumps(out))
