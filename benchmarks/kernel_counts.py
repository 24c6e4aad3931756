"""Counting work instead of timing it: how many elements each run of one primitive's kernel
sees (a vmapped loop's body executions, summed over lanes), and the collatz function the
vmap tests and benchmark count it on."""

import contextlib

import numpy as np

from autograph.runtime.ir import primitives


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@contextlib.contextmanager
def counting(name):
    """Count the elements every run of primitive `name`'s kernel sees (a list, one entry
    per run), while the block runs."""
    seen = []
    old = primitives.PRIMITIVES[name]
    kernel = old.kernel

    def counted(xp, *arrays, **attrs):
        seen.append(max(np.size(a) for a in arrays))
        if isinstance(kernel, str):
            return getattr(xp, kernel)(*arrays, **attrs)
        return kernel(xp, *arrays, **attrs)
    primitives.PRIMITIVES[name] = primitives.replace(old, kernel=counted)
    try:
        yield seen
    finally:
        primitives.PRIMITIVES[name] = old
