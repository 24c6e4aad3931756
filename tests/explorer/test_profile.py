"""`ag.profile(fn)(*args)`: the compiled code's lines added up per user line. Counts work,
never time: the runs and bytes of a loop's line grow exactly with its iterations, the
result is the function's, and a gradient's table has the backward pass's work too."""

import inspect

import numpy as np

import autograph as ag


def rnn_loss(W, xs, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def table(n, gradient=False):
    args = (np.eye(8) * 0.5, np.ones((n, 4, 8)), np.zeros((4, 8)))
    p = ag.profile(rnn_loss, gradient=gradient)(*args)
    return p, {r.line: (r.runs, r.bytes) for r in p.rows}, args


def test_runs_and_bytes_of_a_loop_line_grow_with_its_iterations():
    body = line_of(rnn_loss, "h = np.tanh")
    p10, rows10, args = table(10)
    p20, rows20, _ = table(20)
    runs10, bytes10 = rows10[body]
    runs20, bytes20 = rows20[body]
    assert runs10 > 0 and runs20 == 2 * runs10 and bytes20 == 2 * bytes10
    # each iteration makes the step's arrays: at least h's (4 x 8 float64) once
    assert bytes10 >= 10 * 4 * 8 * 8
    np.testing.assert_allclose(p10.result, ag.function(rnn_loss)(*args))
    assert {r.line for r in p10.rows} <= set(range(line_of(rnn_loss, "def rnn_loss"),
                                                           line_of(rnn_loss, "return") + 1))
    text = str(p10)
    assert "h = np.tanh(xs[t] @ W + h)" in text and "share" in text


def test_a_gradient_profile_counts_the_backward_pass_at_the_forward_lines():
    body = line_of(rnn_loss, "h = np.tanh")
    _, forward, _ = table(10)
    p, backward, args = table(10, gradient=True)
    assert backward[body][0] > forward[body][0]
    np.testing.assert_allclose(p.result, ag.grad(rnn_loss)(*args))
