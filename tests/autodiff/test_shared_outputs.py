"""A branch or loop body that gives one tensor for several outputs: each output's
cotangent must be added, not overwritten. This also happens unseen at second order, when
a cond exports (for its backward pass) a value that is already one of its outputs."""

import numpy as np
import pytest

import autograph as ag

X = np.array([0.1, 0.2, 0.15])
D = np.array([1.0, -2.0, 0.5])
U = np.array([0.3, 0.1, -1.0])


def same_tensor_two_branch_outputs(x):
    if np.sum(x) > 0.0:
        a = x * x
        b = a
    else:
        a = x
        b = x * 2.0
    return np.sum(a) + np.sum(b * 3.0)


def same_tensor_two_loop_outputs(x):
    a = x
    b = x
    for _ in ag.range(2):
        c = np.sin(a) * x
        a = c
        b = c
    return np.sum(a) + np.sum(b * 3.0)


def output_also_read_by_a_rule(x):
    # y is a branch output and read by y * y's rule: exported a second time
    y = x
    if np.sum(y) > 0.0:
        y = y * x
        acc = y * y
    else:
        acc = y
    return np.sum(acc + y * y)


def conds_in_a_loop_with_a_tensor_array(x):
    ta = ag.TensorArray(np.float64, size=5)
    y = x
    for t in range(5):
        if np.sum(y) > 0.5:
            y = np.sin(y) * x
            ta = ta.write(t, y * 2.0)
        else:
            y = y + 0.3
            ta = ta.write(t, np.tanh(y))
    s = ta.stack()
    return np.sum(s * s) + np.sum(ta.read(2) * y)


SAMPLES = [same_tensor_two_branch_outputs, same_tensor_two_loop_outputs,
           output_also_read_by_a_rule, conds_in_a_loop_with_a_tensor_array]


def _fd(fn, x, d, eps=1e-5):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


@pytest.mark.parametrize("f", SAMPLES, ids=lambda f: f.__name__)
def test_first_and_second_order(f):
    g = ag.grad(f)
    np.testing.assert_allclose(np.dot(g(X), D), _fd(f, X, D), rtol=1e-6)
    hvp = ag.grad(lambda x: np.sum(g(x) * D))(X)
    np.testing.assert_allclose(np.dot(hvp, U), _fd(lambda x: np.dot(g(x), D), X, U),
                               rtol=1e-6, atol=1e-9)
