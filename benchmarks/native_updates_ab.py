"""A/B of Variable updates in native code (runtime/exec/native/fuse_updates.py and
inplace.py) on case 14's MLP Adam step with `jit_compile=True`: the step compiled as
before (each `assign_sub` a NumPy line after its kernel, every new value a new array),
with the updates fused into the kernels, and fused and written in place; timed
interleaved in one process (CPU time per step, medians over rounds), with `jax.jit`'s
step alongside when JAX is installed.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.native_updates_ab [--rounds 15]
"""

import argparse
import statistics
import time

import numpy as np

import autograph as ag
from autograph.runtime.exec.native import fuse_updates, inplace
from benchmarks.cases.training_step import _data, make_autograph, make_jax
from benchmarks.cpu_time import per_call

VARIANTS = ("before", "fused", "fused+in place")


def _built(dtype, variant):
    params, x, y = _data(dtype, quick=False)
    step = make_autograph(ag, params, x, y, jit_compile=True)
    saved = fuse_updates.member, inplace.plan
    if variant == "before":
        fuse_updates.member = lambda node: None
    if variant != "fused+in place":
        inplace.plan = lambda *args: ({}, {})
    try:
        step()                       # traces and compiles with (or without) them
    finally:
        fuse_updates.member, inplace.plan = saved
    return step


def _jax(dtype):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    params, x, y = _data(dtype, quick=False)
    return make_jax(params, x, y, jax, jnp, jax.lax)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=20)
    args = p.parse_args(argv)
    for dtype in (np.float32, np.float64):
        fns = {v: _built(dtype, v) for v in VARIANTS}
        jx = _jax(dtype)
        if jx is not None:
            fns["jax.jit"] = jx
        for fn in fns.values():
            fn(), fn()
        times = {k: [] for k in fns}
        for r in range(args.rounds):
            order = list(fns.items())
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                times[name].append(per_call(fn, args.number))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{np.dtype(dtype).name} (CPU medians of {args.rounds} interleaved rounds of "
              f"{args.number} steps):")
        for k, m in med.items():
            rel = f"  {m / med['jax.jit']:.3f}x jax.jit" if "jax.jit" in med else ""
            print(f"  {k:15s} {m * 1e3:6.2f} ms  {m / med['before']:.3f}x before{rel}")


if __name__ == "__main__":
    main()
