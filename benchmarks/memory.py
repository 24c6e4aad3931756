"""Memory of many fresh functions: does it stay flat?

    python -m benchmarks.memory            # 10,000 functions of each kind (a few minutes)
    python -m benchmarks.memory 1000       # fewer

Each kind makes N new functions (a closure over its index, so none is like another), converts
or traces it, calls it once and drops it; tracemalloc reports what is still allocated after
a garbage collection, against a start after a warm-up of 50. Closures over 16 MB arrays are
also made (50 of them) and checked freed with weakrefs. No timing is judged; the seconds
are printed for scale.

Before the caches were made weak (issue 11, class 16): 10,000 fresh functions kept 758 MB,
50 closures over 16 MB arrays 768 MB. After, on the 2-core development machine (shared,
so the seconds are slow): 10,000 fresh `ag.function(lambda x: x + i)` called once each
+0.9 MiB (114 s), 10,000 fresh `def`s with an `if` +0.8 MiB (258 s), 10,000 fresh functions
through `ag.to_graph` +0.0 MiB (1 s); 50 closures over 16 MB arrays: all freed.
"""

import gc
import sys
import time
import tracemalloc
import warnings
import weakref

import numpy as np

import autograph as ag


def _fresh_def(i):
    def g(x):
        if x > 0:
            x = x + i
        return x
    return g


KINDS = {
    "ag.function(lambda)": lambda i, x: ag.function(lambda x: x + i)(x),
    "ag.function(def with if)": lambda i, x: ag.function(_fresh_def(i))(x),
    "ag.to_graph(def with if)": lambda i, x: ag.to_graph(_fresh_def(i))(1.0),
}


def measure(run, n, x):
    for i in range(50):
        run(i, x)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    for i in range(n):
        run(i, x)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return grown, time.perf_counter() - start


def big_closures(n=50):
    refs = []
    x = np.float64(1.0)
    for _ in range(n):
        big = np.ones(2 << 20)      # 16 MB
        refs.append(weakref.ref(big))
        ag.function(lambda x: x + big[0])(x)
        del big
    gc.collect()
    return sum(r() is not None for r in refs)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else 10_000
    warnings.simplefilter("ignore")
    x = np.float64(1.0)
    print("| kind | functions | memory kept | seconds |\n|---|---|---|---|")
    for name, run in KINDS.items():
        grown, seconds = measure(run, n, x)
        print(f"| {name} | {n} | {grown / 2**20:+.2f} MiB | {seconds:.0f} |", flush=True)
    alive = big_closures()
    print(f"\n50 closures over 16 MB arrays: {alive} arrays still alive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
