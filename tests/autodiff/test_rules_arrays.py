"""VJP rules of reductions, shape ops, indexing, joins, selection, sorting and functional
updates against float64 central differences (keyword arguments, unknown lengths, second
order for a representative subset)."""

import numpy as np
import pytest

from tests.autodiff.harness import check_vjp

rng = np.random.default_rng(1)
X = rng.uniform(0.5, 1.5, (3, 4, 2))
M = rng.standard_normal((3, 4))
V = rng.standard_normal(4)

REDUCTIONS = {
    "sum": lambda x: np.sum(x), "sum_axis": lambda x: np.sum(x, axis=1),
    "sum_keep": lambda x: np.sum(x, axis=(0, 2), keepdims=True),
    "mean": lambda x: np.mean(x, axis=-1), "mean_all": lambda x: np.mean(x, keepdims=True),
    "prod": lambda x: np.prod(x, axis=1), "prod_all": lambda x: np.prod(x),
    "prod_two_axes": lambda x: np.prod(x, axis=(0, 2), keepdims=True),
    "max": lambda x: np.max(x, axis=0), "min": lambda x: np.min(x, axis=(1, 2)),
    "cumsum": lambda x: np.cumsum(x, axis=1), "cumsum_flat": lambda x: np.cumsum(x),
    "cumprod": lambda x: np.cumprod(x, axis=2),
    "var": lambda x: np.var(x, axis=1), "std": lambda x: np.std(x, ddof=1),
    "norm": lambda x: np.linalg.norm(x), "nansum": lambda x: np.nansum(x, axis=0),
    "median": lambda x: np.median(x, axis=1), "average": lambda x: np.average(
        x, axis=1, weights=np.arange(1.0, 5.0)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    # median: two values of a row lie 1e-2 apart, which the default step would swap
    check_vjp(REDUCTIONS[name], X, order=2, h=1e-5 if name == "median" else 1e-3)


@pytest.mark.parametrize("name", ["sum_axis", "mean", "max", "prod", "cumsum"])
def test_reductions_unknown_lengths(name):
    check_vjp(REDUCTIONS[name], X, dynamic=True, order=2)


def test_prod_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]])
    check_vjp(lambda a: np.prod(a, axis=1), x)


@pytest.mark.parametrize("seed", range(4))
def test_cumprod_with_zeros(seed):
    # zeros first, in the middle, repeated and last along the axis: no division by them
    x = np.random.default_rng(seed).standard_normal((4, 5))
    x[np.random.default_rng(seed + 10).random((4, 5)) < 0.35] = 0.0
    x[0, 0], x[1, 4], x[2, 1:3] = 0.0, 0.0, 0.0
    weights = np.arange(1.0, 6.0)
    check_vjp(lambda a: np.cumprod(a, axis=1) * weights, x, order=2)
    check_vjp(lambda a: np.cumprod(a) ** 2, x)


SHAPES = {
    "reshape": lambda x: np.reshape(x, (4, 6)) * np.arange(24.0).reshape(4, 6),
    "reshape_infer": lambda x: np.reshape(x, (-1, 2)) ** 2,
    "transpose": lambda x: np.transpose(x, (2, 0, 1)) * np.arange(24.0).reshape(2, 3, 4),
    "expand_squeeze": lambda x: np.squeeze(np.expand_dims(x, (0, 2)), 0) ** 2,
    "broadcast_to": lambda x: np.broadcast_to(x[:, :1], (5, 3, 4, 2)) ** 2,
    "flip": lambda x: np.flip(x, axis=(0, 2)) * np.arange(24.0).reshape(3, 4, 2),
    "roll": lambda x: np.roll(x, (1, -2), axis=(1, 2)) * np.arange(24.0).reshape(3, 4, 2),
    "roll_flat": lambda x: np.roll(x, 5) * np.arange(24.0).reshape(3, 4, 2),
    "ravel": lambda x: np.ravel(x) ** 3,
    "swapaxes": lambda x: np.swapaxes(x, 0, 2) ** 2,
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_ops(name):
    check_vjp(SHAPES[name], X, order=2)


def test_shape_ops_unknown_lengths():
    check_vjp(lambda x: np.reshape(x, (-1,)) ** 2, X, dynamic=True, order=2)
    check_vjp(lambda x: np.transpose(x) * 2.0, X, dynamic=True)


INDEXING = {
    "int": lambda x: x[1] ** 2, "slices": lambda x: x[1:, ::2, -1] ** 2,
    "backwards": lambda x: x[::-1, 3:0:-2] ** 2, "newaxis_ellipsis": lambda x: x[None, ..., 0] ** 2,
    "take_repeats": lambda x: np.take(x, np.array([0, 2, 0, -1]), axis=1) ** 2,
    "take_flat": lambda x: np.take(x, np.array([[1, 5], [5, 23]])) ** 2,
    "index_array": lambda x: x[np.array([2, 2, 0])] ** 2,
    "mask": lambda x: x[x > 1.0] ** 2,
    "take_along_axis": lambda x: np.take_along_axis(
        x, np.array([[[0, 1]], [[1, 1]], [[0, 0]]]), axis=2) ** 2,
    "sort": lambda x: np.sort(x, axis=1) * np.arange(24.0).reshape(3, 4, 2),
    "sort_flat": lambda x: np.sort(x, axis=None) * np.arange(24.0),
    "unique": lambda x: np.unique(x) * np.arange(24.0),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    check_vjp(INDEXING[name], X, order=2)


def test_dynamic_index():
    # an index known only when the graph runs (as in a loop `x[i]`)
    check_vjp(lambda x, i: x[i, 1:] ** 2, X, np.array(2), wrt=[0], order=2)
    check_vjp(lambda x: x[1:, 2] ** 2, X, dynamic=True, order=2)


JOINS = {
    "concatenate": lambda x, m: np.concatenate([x[:, :, 0], m ** 2, x[:2, :, 1]], axis=0),
    "stack": lambda x, m: np.stack([x[:, :, 0], m, m * x[:, :, 1]], axis=1),
    "vstack": lambda x, m: np.vstack([m, x[..., 1]]) ** 2,
    "repeat": lambda x, m: np.repeat(m, 3, axis=1) ** 2 + np.sum(np.repeat(x, 2) ** 2),
    "tile": lambda x, m: np.tile(m, (2, 1, 3)) ** 2,
    "where": lambda x, m: np.where(m > 0, x[..., 0] ** 2, m),
    "where_broadcast": lambda x, m: np.where(m > 0, x[..., 0], 2.0 * m[0]),
    "clip": lambda x, m: np.clip(m, -0.5, 0.7) * x[..., 0],
    "clip_tensor_bounds": lambda x, m: np.clip(m, x[..., 0] - 1.2, x[..., 1] - 0.8) ** 2,
    "clip_upper": lambda x, m: np.clip(m, None, x[0, :, 0] - 1.0) ** 2,
    "matmul": lambda x, m: m.T @ x[..., 0],
    "matmul_vec": lambda x, m: (m @ V) * (V @ m.T) + (x[0, :, 0] @ V),
    "matmul_batch": lambda x, m: np.transpose(x, (2, 0, 1)) @ m.T,
    "dot": lambda x, m: np.dot(m, x[0]),
    "tensordot": lambda x, m: np.tensordot(x, m, axes=([0, 1], [0, 1])),
    "tensordot_perm": lambda x, m: np.tensordot(x, m, axes=([1, 0], [1, 0])),
    "einsum": lambda x, m: np.einsum("ijk,ij->k", x, m),
    "outer_inner": lambda x, m: np.outer(m[:, 0], x[0, :, 1]) + np.inner(m, x[0, :, 0])[:, None],
    "diff": lambda x, m: np.diff(m, n=2, axis=1) ** 2,
    "real_imag": lambda x, m: np.real(m * (1 + 2j)) * np.imag(m * (1 - 1j) * x[..., 0]),
}


@pytest.mark.parametrize("name", sorted(JOINS))
def test_joins_and_products(name):
    check_vjp(JOINS[name], X, M, order=2)


def test_matmul_unknown_lengths():
    check_vjp(lambda a, b: a @ b, M, M.T, dynamic=True, order=2)
    check_vjp(lambda a, b: np.concatenate([a, b.T]) ** 2, M, M.T, dynamic=True)


UPDATES = {
    "setitem_slice": "a = x.copy(); a[1:, 2] = v[:2] ** 2",
}


def _setitem(x, v):
    y = x * 1.0
    if isinstance(y, np.ndarray):
        y[1:, 2] = v[:2, 0] ** 2
        return y * x
    from autograph.runtime.numpy.updates import setitem
    return setitem(y, (slice(1, None), 2), v[:2, 0] ** 2) * x


def _add_at(x, v):
    if isinstance(x, np.ndarray):
        y = x.copy()
        np.add.at(y, (np.array([0, 2, 0]),), v[:3] ** 2)
        return y * x
    from autograph.runtime.numpy.updates import ufunc_at
    return ufunc_at(np.add, x, np.array([0, 2, 0]), v[:3] ** 2) * x


def test_setitem():
    check_vjp(_setitem, X, M, order=2)


def test_add_at():
    check_vjp(_add_at, M, M, order=2)
