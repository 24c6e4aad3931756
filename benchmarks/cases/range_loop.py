"""Case 4: `for i in range(n)` accumulation with a tensor `n` (100,000 iterations).

The loop bound is a runtime value, so the loop is staged as a while_loop and runs entirely
inside the executor. The hand-written floor is a Python loop over NumPy scalars."""

import functools

import numpy as np

from benchmarks.cases._common import (autograph, autograph_jit_contender, blocking,
                                     jax_contender, numba_contender, tf_contender)
from benchmarks.harness import Case, Contender, Goal


def range_loop(n):
    s = np.int64(0)
    for i in range(n):
        s += i * i
    return s


def range_loop_hand(n):
    s = np.int64(0)
    for i in np.arange(n):   # NumPy int64 scalars, no tracing, no dispatch
        s += i * i
    return s


def build(quick):
    steps = 10_000 if quick else 100_000
    n = np.int64(steps)

    def make_ag():
        return functools.partial(autograph().function(range_loop), n)

    def make_tf(tf):
        def range_loop_tf(n):
            s = tf.constant(0, tf.int64)
            for i in tf.range(n):
                s += i * i
            return s
        return functools.partial(tf.function(range_loop_tf), tf.constant(steps, tf.int64))

    def make_jax(jax, jnp, lax):
        def loop(n):
            return lax.fori_loop(jnp.int64(0), n, lambda i, s: s + i * i, jnp.int64(0))
        return blocking(jax.jit(loop), jnp.int64(steps))

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(range_loop, n)),
        Contender("numpy_hand", lambda: functools.partial(range_loop_hand, n)),
        Contender("autograph", make_ag),
        autograph_jit_contender(lambda ag: functools.partial(
            ag.function(range_loop, jit_compile=True), n)),
        numba_contender(lambda numba: functools.partial(numba.njit(range_loop_hand), n)),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"n": steps}, contenders


CASES = [Case(
    "4_range_loop", "for i in range(n): s += i * i, tensor n = 100,000", build,
    goals=[Goal("within 1.3x of a Python loop over NumPy scalars", "autograph", "numpy_hand",
                max_ratio=1.3),
           Goal(">= 10x faster than tf.function", "autograph", "tensorflow", max_ratio=0.1),
           Goal("jit_compile=True <= JAX jit", "autograph_jit", "jax", max_ratio=1.0)])]
