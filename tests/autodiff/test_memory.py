"""What a differentiated loop stores, measured with tracemalloc: one state per step for
an RNN `h = tanh(h @ W + x_t)` (the issue's goal: extra peak <= 1.1 x (N+1)*B*H*8). The
states live in one buffer that the next call takes again (autodiff/stack_buffers.py):
measured with that pool empty, a call allocates them; with it kept, it allocates nothing
and the pool holds exactly those bytes."""

import tracemalloc

import numpy as np

import autograph as ag
from autograph.autodiff import stack_buffers


def _loss(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):      # a staged loop (range of a static int unrolls)
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_rnn_gradient_stores_one_state_per_step():
    n, batch, hidden = 300, 16, 32
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    h0 = np.zeros((batch, hidden))
    forward, vg = ag.function(_loss), ag.value_and_grad(_loss)
    vg(W, xs, h0), forward(W, xs, h0)            # traced and compiled before measuring
    one_state_per_step = (n + 1) * batch * hidden * 8
    stack_buffers.clear()
    extra = _peak(lambda: vg(W, xs, h0)) - _peak(lambda: forward(W, xs, h0))
    assert 0.9 * one_state_per_step < extra <= 1.1 * one_state_per_step, \
        extra / one_state_per_step
    assert stack_buffers.held_bytes() == one_state_per_step     # kept for the next call
    again = _peak(lambda: vg(W, xs, h0)) - _peak(lambda: forward(W, xs, h0))
    assert again < 0.1 * one_state_per_step, again / one_state_per_step
    stack_buffers.clear()
