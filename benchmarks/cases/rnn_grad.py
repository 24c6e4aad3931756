"""Case 8: reverse mode through a loop (issue 13): an RNN `h = tanh(h @ W + x_t)`,
N = 1000 steps, H = 64, B = 32, float64, loss sum(h_N), gradient with respect to W.

Contenders: autograph's `value_and_grad` (the forward loop keeps one stack of what the
backward rules read; the backward pass is one loop counting down), autograph's forward
pass alone (the floor: the ratio column is "times the forward pass"), the same gradient
through `ag.GradientTape` and an `ag.Variable` inside `ag.function` (TF's idiom), a
hand-written NumPy
backward pass over stored states, JAX's `value_and_grad` through `lax.scan`, and
TensorFlow's GradientTape inside `tf.function`. The extra peak memory of autograph's
`value_and_grad` over its forward pass is measured once with tracemalloc and recorded in
the case's params beside (N + 1) * B * H * 8 bytes (one state per step), with the pool
of stack buffers (autodiff/stack_buffers.py) empty; the bytes the pool keeps after that
call are recorded too."""

import functools
import tracemalloc

import numpy as np

from benchmarks.cases._common import autograph, jax_contender, tf_contender
from benchmarks.harness import Case, Contender, Goal


def make_loss(ag):
    def loss(W, xs, h0):
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
        return np.sum(h)
    return loss


def hand_value_and_grad(W, xs, h0):
    """The floor a careful programmer writes: keep every state, then walk back."""
    n = xs.shape[0]
    hs = np.empty((n + 1,) + h0.shape, h0.dtype)
    hs[0] = h = h0
    for t in range(n):
        h = np.tanh(h @ W + xs[t])
        hs[t + 1] = h
    g, gW = np.ones_like(h), np.zeros_like(W)
    for t in range(n, 0, -1):
        d = g * (1.0 - hs[t] * hs[t])
        gW += hs[t - 1].T @ d
        g = d @ W.T
    return np.sum(h), gW


def _flat(value):
    v, g = value
    return np.concatenate([np.ravel(np.asarray(v)), np.ravel(np.asarray(g))])


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def build(quick):
    n, hidden, batch = (50, 8, 4) if quick else (1000, 64, 32)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    h0 = np.zeros((batch, hidden))
    ag = autograph()
    forward = ag.function(make_loss(ag))
    vg = ag.value_and_grad(make_loss(ag))
    loss_fn = make_loss(ag)
    W_var = ag.Variable(W, name="W")

    @ag.function
    def tape_step(xs, h0):      # the tf.function idiom: a tape around the loss, a Variable
        with ag.GradientTape() as tape:
            value = loss_fn(W_var, xs, h0)
        return value, tape.gradient(value, W_var)
    vg(W, xs, h0), forward(W, xs, h0)   # traced before the memory is measured
    from autograph.autodiff import stack_buffers
    stack_buffers.clear()   # (a call's states live in a buffer the next call takes again:
    # measured as a call that allocates them; the pool then holds those bytes)
    extra = _peak(lambda: vg(W, xs, h0)) - _peak(lambda: forward(W, xs, h0))
    pooled = stack_buffers.held_bytes()
    one_state_per_step = (n + 1) * batch * hidden * 8

    def make_tf(tf):
        Wt, xst, h0t = (tf.constant(a) for a in (W, xs, h0))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                tape.watch(Wt)
                h = h0t
                for t in tf.range(xst.shape[0]):
                    h = tf.tanh(h @ Wt + xst[t])
                value = tf.reduce_sum(h)
            return value, tape.gradient(value, Wt)
        return step

    def make_jax(jax, jnp, lax):
        jax.config.update("jax_enable_x64", True)

        def loss(W, xs, h0):
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

    contenders = [
        Contender("autograph_forward", lambda: functools.partial(forward, W, xs, h0),
                  check=False),
        Contender("numpy_hand", lambda: functools.partial(hand_value_and_grad, W, xs, h0),
                  result=_flat),
        Contender("autograph", lambda: functools.partial(vg, W, xs, h0), result=_flat),
        Contender("autograph_tape", lambda: functools.partial(tape_step, xs, h0),
                  result=_flat),
        _with_result(tf_contender(make_tf)),
        _with_result(jax_contender(make_jax)),
    ]
    params = {"N": n, "H": hidden, "B": batch, "dtype": "float64",
              "extra_peak_bytes": int(extra), "one_state_per_step_bytes": one_state_per_step,
              "extra_peak_ratio": round(extra / one_state_per_step, 3),
              "stack_buffer_pool_bytes": int(pooled)}
    return params, contenders


def _with_result(contender):
    if isinstance(contender, Contender):
        inner = contender.result
        contender.result = lambda value: _flat(tuple(inner(v) for v in value))
    return contender


CASES = [Case(
    "11_rnn_grad", "value_and_grad of tanh RNN, N=1000 H=64 B=32 f64", build,
    reference="numpy_hand", rtol=1e-9, floor="autograph_forward",
    goals=[Goal("[30.4] value_and_grad <= 2.5x the forward pass", "autograph", "autograph_forward",
                max_ratio=2.5)])]
