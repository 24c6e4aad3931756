"""Functions passed as arguments (the seed's dynamic_rnn(rnn_step, ...)) take the fast path."""

import numpy as np

import autograph as ag


def tanh_step(x, s):
    return np.tanh(x + s)


def relu_step(x, s):
    return np.maximum(x + s, 0.0)


@ag.function
def run_cell(cell, xs, s):
    for i in ag.range(xs.shape[0]):
        s = cell(xs[i], s)
    return s


def eager(cell, xs, s):
    for x in xs:
        s = cell(x, s)
    return s


def test_function_argument_is_keyed_by_identity_and_reaches_the_fast_path():
    xs = np.linspace(-1.0, 1.0, 12).reshape(6, 2)
    s = np.zeros(2)
    before = run_cell.experimental_get_tracing_count()
    for cell in (tanh_step, relu_step, tanh_step):
        np.testing.assert_allclose(run_cell(cell, xs, s), eager(cell, xs, s))
    assert run_cell.experimental_get_tracing_count() - before == 2   # one trace per function
    fast_before = len(run_cell._fast)
    np.testing.assert_allclose(run_cell(relu_step, xs, s), eager(relu_step, xs, s))
    assert len(run_cell._fast) == fast_before and fast_before >= 2   # served from the fast path
