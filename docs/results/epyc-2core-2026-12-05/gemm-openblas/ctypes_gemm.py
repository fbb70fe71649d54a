"""cblas_?gemm of one OpenBLAS library, called through ctypes on numpy's arrays (column-major, nn,
alpha 1, beta 0, C allocated once), as gpubench's row calls it: one warm-up, CALLS calls, median.
    ctypes_gemm.py LIB PREFIX N CALLS THREADS      prints one JSON line (ms)"""
import ctypes, json, statistics, sys, time
import numpy as np
lib = ctypes.CDLL(sys.argv[1]); pre = sys.argv[2]
N, CALLS, THREADS = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
getattr(lib, pre + "openblas_set_num_threads")(THREADS)
out = {"lib": sys.argv[1], "n": N}
rng = np.random.default_rng(1)
for name, dtype, fn, ct in (("f32", np.float32, "cblas_sgemm", ctypes.c_float),
                            ("f64", np.float64, "cblas_dgemm", ctypes.c_double)):
    a = np.asfortranarray((rng.random((N, N)) * 2 - 1).astype(dtype))
    b = np.asfortranarray((rng.random((N, N)) * 2 - 1).astype(dtype))
    c = np.zeros((N, N), dtype=dtype, order="F")
    f = getattr(lib, pre + fn)
    args = (102, 111, 111, N, N, N, ct(1), a.ctypes.data_as(ctypes.c_void_p), N,
            b.ctypes.data_as(ctypes.c_void_p), N, ct(0), c.ctypes.data_as(ctypes.c_void_p), N)
    f(*args)
    t = []
    for _ in range(CALLS):
        t0 = time.perf_counter(); f(*args); t.append(time.perf_counter() - t0)
    out[name] = round(statistics.median(t) * 1e3, 1)
print(json.dumps(out))
