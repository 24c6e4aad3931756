"""Case 2: first-call latency of collatz and fizzbuzz: convert + trace + compile + run.

Every timed call gets a function compiled anew from source (`programs.fresh_function`), so
no conversion, trace or compile cache can answer it. Eager NumPy has no first-call cost
beyond running; it is the reference for the result."""

import sys

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import autograph, jax_contender, tf_contender
from benchmarks.harness import Case, Contender, Goal


def _build(name, source, source_tf, source_jax, arg):
    def build(quick):
        def make_eager():
            fn = programs.fresh_function(source, name, {"np": np, "ag": autograph()})
            return lambda: fn(np.int64(arg))

        def make_ag():
            ag = autograph()
            fn = programs.fresh_function(source, name, {"np": np, "ag": ag})
            return lambda: ag.function(fn)(np.int64(arg))

        def make_tf(tf):
            fn = programs.fresh_function(source_tf, name, {"tf": tf, "sys": sys})
            n = tf.constant(arg, tf.int64)
            return lambda: tf.function(fn)(n)

        def make_jax(jax, jnp, lax):
            fn = programs.fresh_function(source_jax, name, {"jax": jax, "jnp": jnp, "lax": lax})
            n = jnp.int64(arg)
            return lambda: jax.jit(fn)(n).block_until_ready()

        contenders = [
            Contender("numpy_eager", make_eager, fresh=True),
            Contender("autograph", make_ag, fresh=True),
            tf_contender(make_tf, fresh=True),
            jax_contender(make_jax, fresh=True),
        ]
        return {"n": arg, "fresh_function_per_call": True}, contenders
    return build


CASES = [
    Case("2a_first_call_collatz", "first call: collatz(27), convert+trace+compile+run",
         _build("collatz", programs.COLLATZ, programs.COLLATZ_TF, programs.COLLATZ_JAX, 27),
         goals=[Goal("<= 5 ms", "autograph", max_ns=5e6),
                Goal(">= 10x faster than tf.function first call", "autograph", "tensorflow",
                     max_ratio=0.1)]),
    Case("2b_first_call_fizzbuzz", "first call: fizzbuzz(15), convert+trace+compile+run",
         _build("fizzbuzz", programs.FIZZBUZZ, programs.FIZZBUZZ_TF, programs.FIZZBUZZ_JAX, 15),
         silence=True,
         goals=[Goal("<= 10 ms", "autograph", max_ns=10e6),
                Goal(">= 10x faster than tf.function first call", "autograph", "tensorflow",
                     max_ratio=0.1)]),
]
