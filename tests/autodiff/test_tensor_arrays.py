"""TensorArray code differentiated once and twice (the gradient-list primitives' own rules,
autodiff/gradlists.py), against float64 central differences, traced and eager."""

import numpy as np
import pytest

import autograph as ag

X = np.array([0.3, -0.2, 0.5, 0.1])
W = np.array([[0.4, -0.3], [0.2, 0.5]])


def write_read_concat(x):
    # elements of different lengths, joined by concat; reads of elements written earlier
    ta = ag.TensorArray(np.float64, size=3)
    ta = ta.write(0, np.sin(x[:1]))
    ta = ta.write(1, x[1:] * x[:3])
    ta = ta.write(2, np.tanh(x))
    c = ta.concat()
    return np.sum(c * c) + np.sum(ta.read(1) * ta.read(2)[:3])


def unstack_gather_loop(x):
    rows = ag.TensorArray(np.float64, size=4).unstack(np.reshape(x, (4, 1)) * np.ones((4, 2)))
    h = np.zeros((2,))
    acc = ag.TensorArray(np.float64, size=4)
    for t in range(4):
        h = np.tanh(h @ W + rows.read(t) * x[t])
        acc = acc.write(t, h * h)
    g = acc.gather(np.array([3, 1, 1]))
    return np.sum(g * np.sin(g)) + np.sum(rows.stack() ** 3)


def grown_in_while(x):
    ta = ag.TensorArray(np.float64, size=0, dynamic_size=True)
    y = x
    i = 0
    while np.sum(y * y) < 3.0:
        y = y * 1.3 + 0.05
        ta = ta.write(i, np.sin(y))
        i += 1
    s = ta.stack()
    return np.sum(s * s)


SAMPLES = [write_read_concat, unstack_gather_loop, grown_in_while]


def _fd(fn, x, d, eps=1e-5):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


@pytest.mark.parametrize("f", SAMPLES, ids=lambda f: f.__name__)
def test_first_and_second_order(f):
    rng = np.random.default_rng(3)
    d, u = rng.normal(size=X.shape), rng.normal(size=X.shape)
    g = ag.grad(f)
    np.testing.assert_allclose(np.dot(g(X), d), _fd(f, X, d), rtol=1e-6)
    hvp = ag.grad(lambda x: np.sum(g(x) * d))(X)
    np.testing.assert_allclose(np.dot(hvp, u), _fd(lambda x: np.dot(g(x), d), X, u),
                               rtol=1e-6, atol=1e-9)
    with ag.GradientTape() as outer:
        x = outer.watch(X)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        gd = np.sum(inner.gradient(y, x) * d)
    np.testing.assert_allclose(outer.gradient(gd, x), hvp, rtol=1e-10, atol=1e-12)


def test_third_order_through_a_tensor_array():
    # gradient lists of gradient lists: the family is closed under differentiation
    f = unstack_gather_loop
    d, u, v = np.eye(4)[0], np.eye(4)[1], np.eye(4)[2]
    g = ag.grad(f)
    h = ag.grad(lambda x: np.sum(g(x) * d))
    t = ag.grad(lambda x: np.sum(h(x) * u))(X)
    np.testing.assert_allclose(np.dot(t, v), _fd(lambda x: np.dot(h(x), u), X, v),
                               rtol=1e-5, atol=1e-8)


def nested_loops_writing(x):
    ta = ag.TensorArray(np.float64, size=6)
    y = x
    for i in ag.range(2):
        for j in ag.range(3):
            y = np.sin(y) * x
            ta = ta.write(i * 3 + j, y)
    s = ta.stack()
    return np.sum(s * s) + np.sum(ta.read(4) * x)


def reads_in_a_staged_loop(x):
    ta = ag.TensorArray(np.float64, size=4)
    ta = ta.unstack(np.outer(np.arange(1.0, 5.0), x))
    acc = x * 0.0
    for t in ag.range(4):
        acc = np.sin(acc + ta.read(t)) * x[:4]
    return np.sum(acc)


def concat_after_a_staged_loop(x):
    ta = ag.TensorArray(np.float64, size=3)
    for t in ag.range(3):
        ta = ta.write(t, np.sin(x[:t + 1] * (t + 1.0)))
    c = ta.concat()
    return np.sum(c * c * c)


@pytest.mark.parametrize("f", [nested_loops_writing, reads_in_a_staged_loop,
                               concat_after_a_staged_loop], ids=lambda f: f.__name__)
def test_staged_loops_first_and_second_order(f):
    test_first_and_second_order(f)
