"""Pinning every contender to the same number of threads, before any of them is imported.

A fair CPU-time comparison needs every system to do the same work on the same cores: NumPy's
BLAS, XLA (JAX), TensorFlow's op pools, PyTorch's intra-op pool, Numba's parallel layer and
onnxruntime's sessions each start a pool as big as the machine unless told otherwise. BLAS
libraries read their variables when NumPy is first imported, XLA reads `XLA_FLAGS` when JAX
starts its backend: so `python -m benchmarks` calls `pin()` before it imports anything heavy.
The frameworks whose pools are set by a call (TensorFlow, PyTorch) are pinned where they are
imported (benchmarks/frameworks.py). Child processes (the fresh-process cases) inherit the
variables. This module imports nothing but the standard library."""

import os

VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS")
XLA_SINGLE = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def pin(threads):
    """Set the thread variables to `threads` (0: leave the environment as it is). Returns the
    count in force, for the JSON record (None when unpinned)."""
    if not threads:
        return None
    for name in VARIABLES:
        os.environ[name] = str(threads)
    if threads == 1 and XLA_SINGLE not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + XLA_SINGLE).strip()
    os.environ["AUTOGRAPH_BENCH_THREADS"] = str(threads)
    return threads


def pinned():
    """The count `pin` set in this process or a parent (None when unpinned)."""
    value = os.environ.get("AUTOGRAPH_BENCH_THREADS")
    return int(value) if value else None


def threads_from_argv(argv, default=1):
    """`--threads N` read before argparse runs (argparse needs the modules pin must precede)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return default
