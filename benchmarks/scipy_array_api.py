"""SciPy inside ag.function: what tracing costs, and a traced call against SciPy's own.

    python -m benchmarks.scipy_array_api            # n = 100,000 elements
    python -m benchmarks.scipy_array_api --quick    # n = 1,000

For each program: the first call (conversion + tracing + compiling), a warm traced call and
SciPy's eager call (medians of repeated runs), and for the differentiable ones a warm
`ag.grad` call. SCIPY_ARRAY_API=1 is set before SciPy is imported (SciPy's array API path).
"""

import argparse
import os
import time

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import scipy.special as sp  # noqa: E402
import scipy.stats as st  # noqa: E402

import autograph as ag  # noqa: E402


def logsumexp(x):
    return sp.logsumexp(x)


def softmax_entropy(x):
    p = sp.softmax(x)
    return -np.sum(sp.xlogy(p, p))


def special_loss(x):
    return np.sum(sp.gammaln(x) * sp.expit(x) + sp.i0e(x) + sp.log_ndtr(x))


def zscore_skew(x):
    return st.skew(st.zscore(x))


PROGRAMS = (logsumexp, softmax_entropy, special_loss, zscore_skew)


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def run(n, repeat):
    x = np.random.default_rng(0).uniform(0.5, 3.0, n)
    rows = []
    for prog in PROGRAMS:
        f = ag.function(prog)
        t = time.perf_counter()
        f(x)
        first = time.perf_counter() - t
        traced = median_time(lambda: f(x), repeat)
        eager = median_time(lambda: prog(x), repeat)
        g = ag.grad(prog)
        g(x)
        grad = median_time(lambda: g(x), repeat)
        assert np.allclose(f(x), prog(x), rtol=1e-9)
        rows.append((prog.__name__, first, traced, eager, grad))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeat = (1_000, 20) if args.quick else (100_000, 20)
    print(f"n = {n:,} float64 elements; medians of {repeat} calls; milliseconds")
    print(f"{'program':<18}{'first call':>12}{'traced':>10}{'SciPy':>10}{'ag.grad':>10}")
    for name, first, traced, eager, grad in run(n, repeat):
        print(f"{name:<18}{first * 1e3:>12.1f}{traced * 1e3:>10.3f}{eager * 1e3:>10.3f}"
              f"{grad * 1e3:>10.3f}")


if __name__ == "__main__":
    main()
