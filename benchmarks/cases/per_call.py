"""Case 1: per-call overhead. A traced `a + b` on 2x2 arrays, steady state.

Nearly all of the time is the call machinery (trace-key lookup, argument binding, the
compiled graph's call, result packing), so this case measures overhead, not arithmetic."""

import functools
import operator

import numpy as np

from benchmarks.cases._common import autograph, blocking, jax_contender, tf_contender
from benchmarks.harness import Case, Contender, Goal


def add(a, b):
    return a + b


def build(quick):
    a = np.arange(4.0).reshape(2, 2)
    b = np.ones((2, 2))

    def make_ag():
        f = autograph().function(add)
        return functools.partial(f, a, b)

    def make_tf(tf):
        f = tf.function(add)
        return functools.partial(f, tf.constant(a), tf.constant(b))

    def make_jax(jax, jnp, lax):
        return blocking(jax.jit(add), jnp.asarray(a), jnp.asarray(b))

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(add, a, b)),
        Contender("numpy_hand", lambda: functools.partial(operator.add, a, b)),
        Contender("autograph", make_ag),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"shape": [2, 2], "dtype": "float64"}, contenders


CASES = [Case(
    "1_per_call", "per-call overhead: traced a + b, 2x2", build,
    goals=[Goal("<= 6x raw NumPy a + b", "autograph", "numpy_hand", max_ratio=6.0),
           Goal("below JAX jit dispatch", "autograph", "jax", max_ratio=1.0)])]
