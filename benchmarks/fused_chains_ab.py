"""Case 14's MLP Adam step generated with and without fused chains (`AUTOGRAPH_FUSE=0` while
the unfused one compiles), interleaved in one process with NumPy by hand and `jax.jit`.

    taskset -c 0 /work/benchvenv/bin/python -m benchmarks.fused_chains_ab [f64] [jit]

Threads are pinned to 1 here (set before NumPy and JAX load); CPU medians in ms.
"""

import os
import sys
import time

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_k] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
from benchmarks.cases import training_step as ts  # noqa: E402


def main(argv):
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)
    dtype = np.float64 if "f64" in argv else np.float32
    params, x, y = ts._data(dtype, False)
    fns = {"hand": ts.make_hand(params, x, y), "jax": ts.make_jax(params, x, y, jax, jnp, lax)}
    os.environ["AUTOGRAPH_FUSE"] = "0"
    fns["ag_unfused"] = ts.make_autograph(ag, params, x, y)
    fns["ag_unfused"]()                      # compiled now, unfused
    os.environ["AUTOGRAPH_FUSE"] = "1"
    fns["ag_fused"] = ts.make_autograph(ag, params, x, y)
    if "jit" in argv:
        fns["ag_jit"] = ts.make_autograph(ag, params, x, y, jit_compile=True)
    for f in fns.values():
        for _ in range(3):                   # the third call fuses (fused_kernel.HOT_AFTER)
            f()
    samples = {k: [] for k in fns}
    items = list(fns.items())
    for r in range(int(os.environ.get("ROUNDS", "15"))):
        for k, f in items[r % len(items):] + items[:r % len(items)]:
            t0 = time.process_time()
            for _ in range(10):
                f()
            samples[k].append((time.process_time() - t0) / 10 * 1e3)
    jax_ms = np.median(samples["jax"])
    print(f"{np.dtype(dtype).name}, CPU medians, load average {os.getloadavg()}")
    for k, v in samples.items():
        print(f"{k:11} {np.median(v):7.3f} ms  {np.median(v) / jax_ms:.2f}x jax")


if __name__ == "__main__":
    main(sys.argv[1:])
