"""ag.vmap's contract (JAX's): in_axes/out_axes as ints, None or prefixes of the argument
structures, keyword arguments mapped over axis 0, errors for sizes that disagree; each case
compared with the stacked results of the function called on one element at a time."""

import numpy as np
import pytest

import autograph as ag
from autograph.batching.transform import BatchingError

rng = np.random.default_rng(0)


def stacked(f, *columns, axis=0):
    """The reference: f on each element (plain Python), results stacked on `axis`."""
    outs = [f(*args) for args in zip(*columns)]
    return np.stack(outs, axis=axis)


def test_in_axes_none_and_nonzero_axis():
    def f(x, w, b):
        return np.tanh(x @ w + b)
    x, w, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    got = ag.vmap(f, in_axes=(1, None, None))(x, w, b)
    want = stacked(lambda xi: f(xi, w, b), x.T)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_out_axes_moves_the_lane_axis():
    def f(x):
        return np.outer(x, x[:2])
    x = rng.standard_normal((4, 3))
    got = ag.vmap(f, out_axes=2)(x)
    np.testing.assert_allclose(got, stacked(f, x, axis=2), rtol=1e-12)
    assert got.shape == (3, 2, 4)


def test_pytrees_in_and_out():
    def f(p, scale):
        return {"y": p["a"] * scale + p["b"][0], "z": (np.sum(p["b"][1]), scale)}
    p = {"a": rng.standard_normal((5, 2)), "b": [rng.standard_normal(5),
                                                 rng.standard_normal((5, 3))]}
    got = ag.vmap(f, in_axes=({"a": 0, "b": [0, 0]}, None),
                  out_axes={"y": 0, "z": (0, None)})(p, 2.0)
    for i in range(5):
        one = f({"a": p["a"][i], "b": [p["b"][0][i], p["b"][1][i]]}, 2.0)
        np.testing.assert_allclose(got["y"][i], one["y"])
        np.testing.assert_allclose(got["z"][0][i], one["z"][0])
    assert got["z"][1] == 2.0


def test_prefix_axes_and_keywords():
    def f(pair, k):
        a, b = pair
        return a * b + k
    a, b, k = rng.standard_normal((4, 2)), rng.standard_normal(2), rng.standard_normal(4)
    got = ag.vmap(f, in_axes=((0, None),))((a, b), k=k)
    np.testing.assert_allclose(got, a * b + k[:, None])


def test_unbatched_outputs_are_broadcast_and_out_axes_none_refuses_batched():
    def f(x, c):
        return x + 1, c * 2
    x, c = np.arange(3.0), np.float64(5)
    y, d = ag.vmap(f, in_axes=(0, None))(x, c)
    np.testing.assert_array_equal(d, [10.0, 10.0, 10.0])
    y, d = ag.vmap(f, in_axes=(0, None), out_axes=(0, None))(x, c)
    assert np.ndim(d) == 0 and d == 10.0
    with pytest.raises(BatchingError, match="out_axes entry is None"):
        ag.vmap(f, in_axes=(0, None), out_axes=None)(x, c)


def test_bad_axes_are_clear_errors():
    f = lambda x, y: x + y   # noqa: E731
    with pytest.raises(ValueError, match="inconsistent sizes.*argument 0.*3.*argument 1.*4"):
        ag.vmap(f)(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="at least one"):
        ag.vmap(f, in_axes=None)(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="2 entries"):
        ag.vmap(lambda x: x, in_axes=(0, 0))(np.zeros(3))
    with pytest.raises(ValueError, match="out of range"):
        ag.vmap(f, in_axes=(2, 0))(np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="ints or None"):
        ag.vmap(f, in_axes="0")


def test_variables_are_read_unbatched_at_run_time():
    v = ag.Variable(np.array([1.0, 2.0]))

    def f(x):
        return x * v + np.sum(v)
    g = ag.vmap(f)
    x = rng.standard_normal((3, 2))
    np.testing.assert_allclose(g(x), x * v.numpy() + 3.0)
    v.assign(np.array([0.5, 0.5]))
    np.testing.assert_allclose(g(x), x * 0.5 + 1.0)


def test_variable_assignment_of_a_batched_value_refuses():
    v = ag.Variable(0.0)

    def f(x):
        v.assign(x)
        return x
    with pytest.raises(BatchingError, match="Variable holds one value"):
        ag.vmap(f)(np.arange(3.0))


def test_a_static_python_argument_with_in_axes_none():
    def f(x, n):
        for _ in range(n):
            x = np.sin(x)
        return x
    x = rng.standard_normal(4)
    np.testing.assert_allclose(ag.vmap(f, in_axes=(0, None))(x, 3), np.sin(np.sin(np.sin(x))))


def test_eager_call_traces_once_per_signature():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2
    g = ag.vmap(f)
    for _ in range(3):
        g(np.arange(4.0))
    assert len(calls) == 1


def test_a_batch_size_known_only_at_run_time():
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps, np.float64(2.0)
    f = ag.function(ag.vmap(collatz), input_signature=[ag.TensorSpec([None], np.int64)])
    for n in (9, 3):
        steps, two = f(np.arange(1, n + 1))
        np.testing.assert_array_equal(steps, [collatz(k)[0] for k in range(1, n + 1)])
        np.testing.assert_array_equal(two, np.full(n, 2.0))

    def g(x, w):
        if np.sum(x) > 0:
            y = x @ w
        else:
            y = np.zeros(2)
        return y
    h = ag.function(ag.vmap(g, in_axes=(0, None)), reduce_retracing=True)
    w = np.ones((3, 2))
    for n in (3, 4, 5):
        x = rng.standard_normal((n, 3))
        np.testing.assert_allclose(h(x, w), [g(r, w) for r in x])
