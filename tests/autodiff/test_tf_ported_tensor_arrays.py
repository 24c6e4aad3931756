"""TensorFlow's gradient tests of TensorArrays (tensor_array_ops_test.py's gradient cases)
and of custom gradients (gradients_test.py), ported to autograph: each case in the three
modes of tests/autodiff/modes.py, against TensorFlow's numbers and central differences.
"""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff.modes import MODES, fd, grad
from tests.autodiff.test_tf_ported_control_flow import check


# -- tensor_array_ops_test: gradient cases -----------------------------------------------------

def ta_write_read(x, y, c):     # testTensorArrayGradientWriteRead
    ta = ag.TensorArray(np.float64, size=2).write(0, x).write(1, y)
    return np.sum(ta.read(0) * c[0] + ta.read(1) * c[1])


def ta_write_stack_read(x, y):  # testTensorArrayGradientWritePackConcatAndRead
    ta = ag.TensorArray(np.float64, size=2).write(0, x).write(1, y)
    return np.sum(ta.stack() * np.array([[1.0], [2.0]])) + np.sum(ta.read(1)) + \
        np.sum(ta.concat() * np.array([0.5, 0.5, 0.25, 0.25]))


def ta_unstack_read(x):         # testTensorArrayGradientUnstackRead
    ta = ag.TensorArray(np.float64, size=2).unstack(x)
    return np.sum(ta.read(1) * np.array([1.0, 3.0]))


def ta_in_loop(x):              # testWhileLoopWritePackGradients
    ta = ag.TensorArray(np.float64, size=3)
    _, ta = ag.while_loop(lambda i, t: i < 3,
                          lambda i, t: (i + 1, t.write(i, x * np.float64(1.0 + 0.0) * (i + 1))),
                          [np.int64(0), ta])
    return np.sum(ta.stack() * np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


def ta_rnn(x):                  # testTensorArrayGradientDynamicUnpackRead, an RNN over rows
    inputs = ag.TensorArray(np.float64, size=3).unstack(x)
    outs = ag.TensorArray(np.float64, size=3)

    def body(i, h, o):
        h = np.tanh(h * 0.5 + inputs.read(i))
        return i + 1, h, o.write(i, h)
    _, h, outs = ag.while_loop(lambda i, h, o: i < 3, body, [np.int64(0), np.zeros(2), outs])
    return np.sum(outs.stack()) + np.sum(h)


@pytest.mark.parametrize("mode", MODES)
def test_ta_write_read(mode):
    x, y, c = np.array([4.0, 5.0]), np.array([2.0, 3.0]), np.array([[1.0, -1.0], [2.0, 3.0]])
    check(mode, ta_write_read, x, c[0], y, c)
    check(mode, lambda y, x, c: ta_write_read(x, y, c), y, c[1], x, c)


@pytest.mark.parametrize("mode", MODES)
def test_ta_write_stack_concat_read(mode):
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    check(mode, ta_write_stack_read, x, [1.5, 1.5], y)
    check(mode, lambda y, x: ta_write_stack_read(x, y), y, [3.25, 3.25], x)


@pytest.mark.parametrize("mode", MODES)
def test_ta_unstack_read(mode):
    check(mode, ta_unstack_read, np.array([[1.0, 2.0], [3.0, 4.0]]), [[0.0, 0.0], [1.0, 3.0]])


@pytest.mark.parametrize("mode", MODES)
def test_ta_written_in_loop(mode):
    # sum_i (i + 1) * <x, row_i> = <x, [1+6+15, 2+8+18]>
    check(mode, ta_in_loop, np.array([0.5, -1.0]), [22.0, 28.0])


@pytest.mark.parametrize("mode", MODES)
def test_ta_rnn(mode):
    x = np.array([[0.1, 0.2], [0.3, -0.1], [0.2, 0.4]])
    check(mode, ta_rnn, x, fd(ta_rnn, x), rtol=1e-6)


# -- gradients_test: custom gradients ---------------------------------------------------------

@ag.custom_gradient
def _clipped(x):                # testCustomGradient: a gradient unlike the function's
    def grad_fn(dy):
        return dy * 3.0
    return x * x, grad_fn


@ag.custom_gradient
def _log1pexp(x):               # the custom-gradient docs' numerically stable example
    e = np.exp(x)

    def grad_fn(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad_fn


def _custom_in_loop(x):         # testCustomGradientInWhile-like (while_v2's testCustomGradient)
    return ag.while_loop(lambda v: v < 8.0, lambda v: _clipped(v), [x])[0]


@pytest.mark.parametrize("mode", MODES)
def test_custom_gradient(mode):
    np.testing.assert_allclose(grad(mode, _clipped, 2.0), 3.0)


@pytest.mark.parametrize("mode", MODES)
def test_custom_gradient_stable(mode):
    np.testing.assert_allclose(grad(mode, _log1pexp, 100.0), 1.0)
    np.testing.assert_allclose(grad(mode, _log1pexp, 0.0), 0.5)


@pytest.mark.parametrize("mode", MODES)
def test_custom_gradient_in_loop(mode):
    # 2 -> 4 -> 16; each step's custom gradient is 3: 9
    np.testing.assert_allclose(grad(mode, _custom_in_loop, 2.0), 9.0)
