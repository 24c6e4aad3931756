"""Case 14's MLP Adam step with fused chains as they were (same-shape operands only) and as
they are (bias and column broadcasts, bias-gradient sums, two-op chains on large arrays:
autograph/runtime/exec/fused_blocks.py), interleaved in one process with NumPy by hand,
`jax.jit` and `torch.compile`, plus the step unfused (`AUTOGRAPH_FUSE=0`).

    taskset -c 0 python -m benchmarks.fused_broadcasts_ab [f64] [ROUNDS=40]

Threads are pinned to 1 (set before NumPy, JAX and torch load); every round calls each
contender 3 times, one CPU-time sample a call; medians in ms, and each median over
`jax.jit`'s and `torch.compile`'s. "same_shape" compiles the step with fused_blocks'
`splits`/`reduction` answering "no" and `PAIR` out of reach: the plan this change
replaced.
"""

import os
import sys
import time

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_k] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
from autograph.runtime.exec import fused_blocks, fused_chains  # noqa: E402
from benchmarks.cases import training_step as ts  # noqa: E402


def _same_shape_step(params, x, y):
    saved = fused_blocks.splits, fused_blocks.reduction, fused_chains.PAIR
    fused_blocks.splits = lambda *a: {}
    fused_blocks.reduction = lambda *a: None
    fused_chains.PAIR = 1 << 62
    try:
        step = ts.make_autograph(ag, params, x, y)
        step()                                  # compiled now, with the old plan
    finally:
        fused_blocks.splits, fused_blocks.reduction, fused_chains.PAIR = saved
    return step


def main(argv):
    dtype = np.float64 if "f64" in argv else np.float32
    rounds = next((int(a.split("=")[1]) for a in argv if a.startswith("ROUNDS=")), 40)
    params, x, y = ts._data(dtype, False)
    fns = {"hand": ts.make_hand(params, x, y)}
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
        jax.config.update("jax_enable_x64", True)
        fns["jax"] = ts.make_jax(params, x, y, jax, jnp, lax)
    except ImportError:
        pass
    torch, _ = ts._torch()
    if torch is not None:
        fns["torch_compile"] = ts.make_torch(params, x, y, compiled=True)
    os.environ["AUTOGRAPH_FUSE"] = "0"
    fns["ag_unfused"] = ts.make_autograph(ag, params, x, y)
    fns["ag_unfused"]()                         # compiled now, unfused
    os.environ["AUTOGRAPH_FUSE"] = "1"
    fns["ag_same_shape"] = _same_shape_step(params, x, y)
    fns["ag_fused"] = ts.make_autograph(ag, params, x, y)
    for f in fns.values():
        for _ in range(4):                      # the third call fuses (fused_kernel.HOT_AFTER)
            f()
    samples = {k: [] for k in fns}
    items = list(fns.items())
    for r in range(rounds):
        for k, f in items[r % len(items):] + items[:r % len(items)]:
            for _ in range(3):
                t0 = time.process_time()
                f()
                samples[k].append((time.process_time() - t0) * 1e3)
    med = {k: float(np.median(v)) for k, v in samples.items()}
    print(f"{np.dtype(dtype).name}, CPU medians of {3 * rounds} calls, "
          f"load average {os.getloadavg()}")
    for k, m in med.items():
        ratios = "  ".join(f"{m / med[p]:.3f}x {p}" for p in ("jax", "torch_compile")
                           if p in med)
        print(f"{k:14} {m:7.3f} ms  {ratios}")


if __name__ == "__main__":
    main(sys.argv[1:])
