#!/usr/bin/python3
"""Times numpy.matmul of the square matrices ndarray's BenchmarkMatMul multiplies (n = 64, 256,
512; float64 and float32), in GFLOP/s (2n^3 operations), best of 7 after a warm-up, with the
BLAS NumPy was built with and the threads it may use. Run from anywhere:

    /usr/bin/python3 bench/matmul_vs_numpy.py
"""
import os
import time

import numpy as np


def best(fn, repeat=7):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    print(f"NumPy {np.__version__}, {os.cpu_count()} CPUs")
    for n in (64, 256, 512):
        i, j = np.indices((n, n))
        for dtype in (np.float64, np.float32):
            x = (((i * 7 + j * 3) % 11) / 4).astype(dtype)
            y = (((i * 5 + j) % 13) / 8).astype(dtype)
            t = best(lambda: x @ y)
            print(f"{np.dtype(dtype).name}/{n}: {t * 1e6:10.1f} us  {2 * n**3 / t / 1e9:6.2f} GFLOP/s")


if __name__ == "__main__":
    main()
