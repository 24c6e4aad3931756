"""Cases 13a-13d: the cliffs of issue 30 ("Performance III: no cliffs").

- 13a prefix sum `out[i] = out[i - 1] + x[i]` over `ag.range`, n = 25k, 50k, 100k, steady
  state (a series: the report fits the growth exponent), against the same loop in plain
  Python (`numpy_eager`) and `numba.njit`; `autograph_jit` is `jit_compile=True`. The
  recurrence is written in place (runtime/exec/inplace_reads.py); it used to copy `out`
  every iteration (quadratic).
- 13b the RNN gradient `value_and_grad` of `h = tanh(h @ W + x_t)`, T = 10,000, H = 128,
  B = 16, float64: the backward pass decays through a stretch of subnormal floats.
  `autograph_flush` runs the same call under `ag.config.flush_denormals(True)`; JAX's
  `lax.scan` with `jax.checkpoint` on the step (XLA flushes subnormals itself).
"""

import functools

import numpy as np

from benchmarks.cases._common import (autograph, autograph_jit_contender, jax_contender,
                                     numba_contender)
from benchmarks.cases.rnn_grad import make_loss
from benchmarks.harness import Case, Contender, Goal

PREFIX_N = [25_000, 50_000, 100_000]


def prefix_sum_eager(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def _prefix_sum(ag):
    def prefix_sum(x):
        out = np.zeros_like(x)
        out[0] = x[0]
        for i in ag.range(1, x.shape[0]):
            out[i] = out[i - 1] + x[i]
        return out
    return prefix_sum


def _prefix_case(n):
    def build(quick):
        size = n // 10 if quick else n
        x = np.random.default_rng(0).uniform(size=size)
        return {"n": size, "x": size}, [
            Contender("numpy_eager", lambda: functools.partial(prefix_sum_eager, x)),
            Contender("autograph", lambda: functools.partial(
                autograph().function(_prefix_sum(autograph())), x)),
            autograph_jit_contender(lambda ag: functools.partial(
                ag.function(_prefix_sum(ag), jit_compile=True), x)),
            numba_contender(lambda numba: functools.partial(numba.njit(prefix_sum_eager), x)),
        ]
    goals = []
    if n == PREFIX_N[-1]:
        goals = [Goal("<= 2x the plain Python loop", "autograph", "numpy_eager", max_ratio=2.0),
                 Goal("jit_compile=True <= 1.5x numba.njit", "autograph_jit", "numba",
                      max_ratio=1.5)]
    return Case(f"13a_prefix_sum_{n // 1000}k", f"prefix sum out[i] = out[i-1] + x[i], n={n}",
                build, goals=goals, rtol=1e-9, series="prefix sum n", x=n,
                floor="numpy_eager")


def _build_rnn_long(quick):
    n, hidden, batch = (200, 16, 4) if quick else (10_000, 128, 16)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    h0 = np.zeros((batch, hidden))
    ag = autograph()
    vg = ag.value_and_grad(make_loss(ag))
    forward = ag.function(make_loss(ag))

    def flushed():
        with ag.config.flush_denormals(True):
            return vg(W, xs, h0)

    def make_jax(jax, jnp, lax):
        jax.config.update("jax_enable_x64", True)

        def loss(W, xs, h0):
            @jax.checkpoint
            def body(h, x):
                return jnp.tanh(h @ W + x), None
            h, _ = lax.scan(body, h0, xs)
            return jnp.sum(h)
        fn = jax.jit(jax.value_and_grad(loss))
        args = (jnp.asarray(W), jnp.asarray(xs), jnp.asarray(h0))

        def call():
            v, g = fn(*args)
            return v.block_until_ready(), g.block_until_ready()
        return call

    def flat(value):
        v, g = value
        return np.concatenate([np.ravel(np.asarray(v)), np.ravel(np.asarray(g))])

    contenders = [
        Contender("autograph", lambda: functools.partial(vg, W, xs, h0), result=flat),
        Contender("autograph_flush", lambda: flushed, result=flat),
        Contender("autograph_forward", lambda: functools.partial(forward, W, xs, h0),
                  check=False),
        jax_contender(make_jax),
    ]
    if isinstance(contenders[-1], Contender):
        contenders[-1].result = flat
    return {"N": n, "H": hidden, "B": batch, "dtype": "float64"}, contenders


CASES = [_prefix_case(n) for n in PREFIX_N] + [
    Case("13b_rnn_grad_long", "value_and_grad of tanh RNN, T=10000 H=128 B=16 f64 "
         "(a stretch of subnormals)", _build_rnn_long, reference="autograph", rtol=1e-9,
         goals=[Goal("flush_denormals <= JAX+checkpoint", "autograph_flush", "jax",
                     max_ratio=1.0)]),
]
