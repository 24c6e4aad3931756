"""Case 11b: a Hessian-vector product through a loop (issue 33): the RNN of case 11
(`h = tanh(h @ W + x_t)`, N = 1000, H = 64, B = 32, float64, loss sum(h_N)), H(W) V.

Contenders: `ag.hvp` (forward over reverse: the JVP transform copies the gradient graph's
forward and backward loops with tangents), autograph's forward pass alone (the floor), a
hand-written forward-over-reverse HVP in NumPy (benchmarks/hvp_rnn.py: nine matmuls per
step), and JAX's `jvp(grad(loss))` through `lax.scan`. Goal: `ag.hvp` at most 1.5x the
hand-written one."""

import functools

import numpy as np

from benchmarks.cases._common import autograph, jax_contender
from benchmarks.cases.rnn_grad import make_loss
from benchmarks.harness import Case, Contender, Goal
from benchmarks.hvp_rnn import hand_hvp


def build(quick):
    n, hidden, batch = (50, 8, 4) if quick else (1000, 64, 32)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    V = rng.standard_normal((hidden, hidden))
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    h0 = np.zeros((batch, hidden))
    ag = autograph()
    loss = make_loss(ag)
    forward = ag.function(loss)

    def of_w(w):      # (xs and h0 are constants of the trace)
        return loss(w, ag.constant(xs), h0)

    def ours():
        return ag.hvp(of_w, (W,), (V,))
    ours(), forward(W, xs, h0)      # traced before timing

    def make_jax(jax, jnp, lax):
        jax.config.update("jax_enable_x64", True)
        xj, hj = jnp.asarray(xs), jnp.asarray(h0)

        def jloss(w):
            def body(h, x):
                return jnp.tanh(h @ w + x), None
            h, _ = lax.scan(body, hj, xj)
            return jnp.sum(h)
        fn = jax.jit(lambda w, v: jax.jvp(jax.grad(jloss), (w,), (v,))[1])
        args = (jnp.asarray(W), jnp.asarray(V))
        return lambda: fn(*args).block_until_ready()

    contenders = [
        Contender("autograph_forward", lambda: functools.partial(forward, W, xs, h0),
                  check=False),
        Contender("numpy_hand", lambda: functools.partial(hand_hvp, W, V, xs, h0)),
        Contender("autograph", lambda: ours),
        jax_contender(make_jax),
    ]
    return {"N": n, "H": hidden, "B": batch, "dtype": "float64"}, contenders


CASES = [Case(
    "11b_rnn_hvp", "hvp (forward over reverse) of tanh RNN, N=1000 H=64 B=32 f64", build,
    reference="numpy_hand", rtol=1e-9, floor="numpy_hand",
    goals=[Goal("hvp <= 1.5x a hand-written forward-over-reverse HVP", "autograph",
                "numpy_hand", max_ratio=1.5)])]
