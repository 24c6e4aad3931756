"""Each family of batching rules against the stacked per-element results: every case is
one small NumPy function, batched over each combination of its arguments (a batched and an
unbatched operand of every rank pairing), compared with the function run on one element at
a time eagerly (plain NumPy)."""

import itertools

import numpy as np
import pytest

import autograph as ag

rng = np.random.default_rng(11)
LANES = 3


def a(*shape):
    return rng.standard_normal(shape)


CASES = {
    # elementwise, ranks broadcasting against each other
    "add_ranks": (lambda x, y: x + y * 2.0, [a(4), a(3, 4)]),
    "where_clip": (lambda x, y: np.clip(np.where(x > 0, x, y), -0.5, 0.5), [a(2, 3), a(3)]),
    "special": (lambda x: np.exp(x) + np.log1p(np.abs(x)) + np.arctan2(x, 1.0), [a(3)]),
    "astype_cmp": (lambda x: (x > 0).astype(np.int64) + np.floor(x).astype(np.int64), [a(4)]),
    # reductions and axes
    "sum_none": (lambda x: np.sum(x) + np.max(x, axis=0).sum(), [a(2, 3)]),
    "mean_keep": (lambda x: np.mean(x, axis=-1, keepdims=True), [a(2, 3)]),
    "argmax_none": (lambda x: np.argmax(x) + np.argmin(x, axis=1), [a(2, 3)]),
    "cumsum_sort": (lambda x: np.cumsum(np.sort(x, axis=-1), axis=0), [a(3, 2)]),
    "flip_roll": (lambda x: np.flip(x) + np.roll(x, 2) + np.roll(x, 1, axis=1), [a(2, 3)]),
    # shapes and joins
    "reshape_T": (lambda x: x.reshape(-1, 2).T @ np.ones(3), [a(2, 3)]),
    "expand_squeeze": (lambda x: np.squeeze(np.expand_dims(x, -1), axis=-1) + x[None][0], [a(3)]),
    "concat_stack": (lambda x, y: np.concatenate([np.stack([x, y]), x[None]], axis=0),
                     [a(3), a(3)]),
    "broadcast_tile": (lambda x: np.broadcast_to(x, (2, 3)) + np.tile(x, 2)[:3], [a(3)]),
    "repeat": (lambda x: np.repeat(x, 2) + np.repeat(x, 2, axis=0), [a(3)]),
    # contractions
    "matmul_mv": (lambda m, v: m @ v, [a(2, 3), a(3)]),
    "matmul_vm": (lambda v, m: v @ m, [a(2), a(2, 3)]),
    "matmul_mm": (lambda m, n: m @ n, [a(2, 3), a(3, 2)]),
    "matmul_vv": (lambda v, w: v @ w, [a(3), a(3)]),
    # indexing
    "getitem_static": (lambda x: x[1:, None, ..., -1] + x[0, 1], [a(3, 2)]),
    "take_axis": (lambda x: np.take(x, np.array([2, 0]), axis=1), [a(2, 3)]),
    "setitem_static": (lambda x, v: _set(x, (slice(None), 1), v), [a(2, 3), a(2)]),
    # linear algebra (one lane at a time)
    "solve_det": (lambda m, b: np.linalg.solve(m + 3 * np.eye(2), b)
                  * np.linalg.det(m + 3 * np.eye(2)), [a(2, 2), a(2)]),
}


def _set(x, key, v):
    x = x.copy() if isinstance(x, np.ndarray) else x
    x[key] = v
    return x


def _per_lane_index_case(x, i):
    return x[i] + np.take(x, i) * 2.0


@pytest.mark.parametrize("name", sorted(CASES))
def test_family(name):
    fn, args = CASES[name]
    n = len(args)
    for axes in itertools.product([0, None], repeat=n):
        if all(ax is None for ax in axes):
            continue
        batch = [np.stack([x + 0.1 * k for k in range(LANES)]) if ax == 0 else x
                 for x, ax in zip(args, axes)]
        got = ag.vmap(fn, in_axes=axes)(*batch)
        want = np.stack([fn(*[b[k] if ax == 0 else b for b, ax in zip(batch, axes)])
                         for k in range(LANES)])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"{axes}")


@pytest.mark.parametrize("axes", [(0, 0), (None, 0), (0, None)])
def test_per_lane_indices_gather_and_scatter(axes):
    x = rng.standard_normal((LANES, 5)) if axes[0] == 0 else rng.standard_normal(5)
    i = np.array([4, -1, 2]) if axes[1] == 0 else np.int64(3)

    def f(x, i):
        y = x * 1.0
        y[i] = x[i] * 10.0
        return y, _per_lane_index_case(x, i)
    got = ag.vmap(f, in_axes=axes)(x, i)
    for k in range(LANES):
        one = f(*[v[k] if ax == 0 else v for v, ax in zip((x, i), axes)])
        for g, w in zip(got, one):
            np.testing.assert_allclose(g[k], w)


def test_gradient_rules_inside_the_function_batch():
    # a function that takes a gradient inside (not vmap(grad(f)) itself): the backward
    # graph's primitives (sum_to_shape, broadcasts, where, matmul transposes) are batched
    def inner(w, x):
        return np.sum(np.tanh(x @ w + np.array([0.5, -0.5])) ** 2) + np.max(w)

    def f(w, x):
        return ag.grad(inner)(w, x) * 2.0
    w, xs = rng.standard_normal((3, 2)), rng.standard_normal((LANES, 4, 3))
    got = ag.vmap(f, in_axes=(None, 0))(w, xs)
    for k in range(LANES):
        np.testing.assert_allclose(got[k], f(w, xs[k]), rtol=1e-10)
