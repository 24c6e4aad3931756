"""Case 3: collatz(27) in steady state: a scalar while loop (111 iterations) with a
conditional expression inside. Per-iteration overhead of the loop executor dominates."""

import functools

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import (autograph, autograph_jit_contender, blocking,
                                     jax_contender, numba_contender, tf_contender)
from benchmarks.harness import Case, Contender, Goal


def build(quick):
    ns = {"np": np}
    collatz = programs.fresh_function(programs.COLLATZ, "collatz", ns)
    n = np.int64(27)

    def make_ag():
        return functools.partial(autograph().function(collatz), n)

    def make_tf(tf):
        fn = programs.fresh_function(programs.COLLATZ_TF, "collatz", {"tf": tf})
        return functools.partial(tf.function(fn), tf.constant(27, tf.int64))

    def make_jax(jax, jnp, lax):
        fn = programs.fresh_function(programs.COLLATZ_JAX, "collatz",
                                     {"jax": jax, "jnp": jnp, "lax": lax})
        return blocking(jax.jit(fn), jnp.int64(27))

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(collatz, n)),
        Contender("numpy_hand", lambda: functools.partial(programs.collatz_hand, n)),
        Contender("autograph", make_ag),
        autograph_jit_contender(lambda ag: functools.partial(
            ag.function(collatz, jit_compile=True), n)),
        numba_contender(lambda numba: functools.partial(
            numba.njit(programs.collatz_hand), n)),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"n": 27, "iterations": 111}, contenders


CASES = [Case(
    "3_collatz", "collatz(27), steady state (111-step while loop)", build,
    goals=[Goal(">= 10x faster than tf.function", "autograph", "tensorflow", max_ratio=0.1),
           Goal("jit_compile=True <= 0.5x JAX jit", "autograph_jit", "jax", max_ratio=0.5),
           Goal("jit_compile=True <= 1.5x numba.njit", "autograph_jit", "numba",
                max_ratio=1.5)])]
