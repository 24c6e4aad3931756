"""A/B of dead-buffer reuse in generated code (runtime/exec/buffer_reuse.py) on case 14's
MLP Adam step: the same step compiled with the plan and with it turned off, timed
interleaved in one process (CPU time per step, medians over rounds).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.buffer_reuse_ab [--rounds 15]
"""

import argparse
import statistics
import time

import numpy as np

import autograph as ag
from autograph.runtime.exec import buffer_reuse
from benchmarks.cases.training_step import _data, make_autograph
from benchmarks.cpu_time import per_call


def _built(dtype, reuse):
    params, x, y = _data(dtype, quick=False)
    step = make_autograph(ag, params, x, y)
    saved = buffer_reuse.plan
    if not reuse:
        buffer_reuse.plan = lambda graph, overridden=(): {}
    try:
        step()                       # traces and compiles with (or without) the plan
    finally:
        buffer_reuse.plan = saved
    return step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=20)
    args = p.parse_args(argv)
    for dtype in (np.float32, np.float64):
        on, off = _built(dtype, True), _built(dtype, False)
        times = {"reuse": [], "no reuse": []}
        for r in range(args.rounds):
            order = [("reuse", on), ("no reuse", off)]
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                times[name].append(per_call(fn, args.number))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{np.dtype(dtype).name}: reuse {med['reuse'] * 1e3:.2f} ms, no reuse "
              f"{med['no reuse'] * 1e3:.2f} ms, ratio {med['reuse'] / med['no reuse']:.3f} "
              f"(CPU medians of {args.rounds} interleaved rounds of {args.number} steps)")


if __name__ == "__main__":
    main()
