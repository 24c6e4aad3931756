"""The rest of jax.numpy's NumPy functions, composed from the covered ones. They are
written as NumPy on tensors (each call dispatches to its staged version), so they read as
NumPy's own definitions and are differentiable through their parts:

  partition/argpartition (a full sort: a valid partition), nanquantile/nanpercentile/
  nanmedian, set operations (union1d, intersect1d, setdiff1d, setxor1d, unique_*; their
  length is unknown while tracing), delete/insert, resize, trim_zeros, block, choose,
  array_equiv, sort_complex, unwrap, gradient, matvec/vecmat/vecdot, packbits/unpackbits,
  apply_along_axis/apply_over_axes/piecewise, einsum_path, histogram2d/histogramdd,
  polynomials (poly, polydiv, polyfit, roots).
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank
from autograph.runtime.numpy.statistics import check_quantile_args


def _t(x):
    return as_tensor(x)


def _known(n, what):
    if n is None:
        raise NotImplementedError(f"{what} needs the length of the axis known while tracing")
    return n


# -- partition ---------------------------------------------------------------------------------

def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A sorted array is a partition for every kth: each kth element is in its sorted
    place, smaller ones before it and larger ones after (the order within the two sides,
    which NumPy leaves unspecified, is sorted here)."""
    if order is not None:
        raise NotImplementedError("numpy.partition(order=...) sorts structured arrays, which "
                                  "tensors never hold")
    return np.sort(_t(a), axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise NotImplementedError("numpy.argpartition(order=...) is for structured arrays")
    return np.argsort(_t(a), axis=axis, kind="stable")


# -- NaN-aware quantiles --------------------------------------------------------------------------

def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """NumPy's linear quantile of the values that are not NaN, lane by lane: sorting puts
    NaNs last, so the first `count` sorted values are the ones NumPy keeps; an all-NaN
    lane gives NaN."""
    check_quantile_args("nanquantile", q, out, weights, method)
    x = _t(a)
    if x.dtype.kind not in "fc":   # no NaNs: the plain quantile
        return np.quantile(x, q, axis=axis, keepdims=keepdims)
    qs = np.asarray(q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    ndim = need_rank(x, "numpy.nanquantile")
    if axis is None:
        lanes, ax = np.reshape(x, (-1,)), 0
    else:
        ax = shapes.normalize_axis(axis, ndim)
        lanes = np.moveaxis(x, ax, -1)
    n = _known(lanes.shape[-1], "numpy.nanquantile")
    ordered = np.sort(lanes, axis=-1)[..., None, :]                  # (..., 1, n)
    count = np.sum(~np.isnan(lanes), axis=-1, keepdims=True)          # (..., 1)
    virtual = np.reshape(qs, (-1,)).astype(x.dtype) * (count - 1).astype(x.dtype)  # (..., Q)
    lo = np.floor(virtual)
    gamma = virtual - lo
    lo = np.clip(lo.astype(np.int64), 0, max(n - 1, 0))
    hi = np.clip(np.minimum(lo + 1, count - 1), 0, max(n - 1, 0))
    below = np.take_along_axis(ordered, lo[..., None], -1)[..., 0]
    above = np.take_along_axis(ordered, hi[..., None], -1)[..., 0]
    diff = above - below   # NumPy's _lerp: from the upper side for gamma >= 0.5
    value = np.where(gamma >= 0.5, above - diff * (1 - gamma), below + diff * gamma)
    value = np.where(count == 0, np.nan, value)
    value = np.moveaxis(value, -1, 0)                                 # (Q, ...)
    value = np.reshape(value, qs.shape + tuple(value.shape[1:])) if qs.ndim != 1 else value
    if keepdims:
        keep = (1,) * ndim if axis is None else tuple(
            1 if i == ax else d for i, d in enumerate(x.shape))
        value = np.reshape(value, qs.shape + keep)
    return value


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    from autograph.runtime.numpy.statistics import percent_to_quantile
    qs = percent_to_quantile(q, "numpy.nanpercentile")
    return nanquantile(a, qs, axis, out, overwrite_input, method, keepdims, weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    x = _t(a)
    if x.dtype.kind not in "fc":
        return np.median(x, axis=axis, keepdims=keepdims)
    return nanquantile(x, 0.5, axis, out, keepdims=keepdims)


# -- sets (lengths depend on the data) -------------------------------------------------------------

def union1d(ar1, ar2):
    return np.unique(np.concatenate([np.ravel(_t(ar1)), np.ravel(_t(ar2))]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    if return_indices:
        raise NotImplementedError("numpy.intersect1d(return_indices=True) is not supported "
                                  "while tracing")
    a, b = _t(ar1), _t(ar2)
    dtype = np.result_type(a.dtype, b.dtype)
    ua = np.unique(a).astype(dtype)
    return ua[np.isin(ua, b)]


def setdiff1d(ar1, ar2, assume_unique=False):
    a = np.ravel(_t(ar1)) if assume_unique else np.unique(_t(ar1))
    return a[np.isin(a, _t(ar2), invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    a, b = _t(ar1), _t(ar2)
    if not assume_unique:
        a, b = np.unique(a), np.unique(b)
    aux = np.sort(np.concatenate([np.ravel(a), np.ravel(b)]))
    edge = np.ones((1,), dtype=bool)
    flag = np.concatenate([edge, aux[1:] != aux[:-1], edge])
    return aux[flag[1:] & flag[:-1]]


def _unique_results():
    from numpy.lib import _arraysetops_impl as impl
    return impl


def unique_values(x):
    return np.unique(_t(x))


def unique_counts(x):
    values, counts = np.unique(_t(x), return_counts=True)
    return _unique_results().UniqueCountsResult(values, counts)


def unique_inverse(x):
    t = _t(x)
    values, inverse = np.unique(t, return_inverse=True)
    return _unique_results().UniqueInverseResult(values, np.reshape(inverse, t.shape))


def unique_all(x):
    t = _t(x)
    values, index, inverse, counts = np.unique(t, True, True, True)
    return _unique_results().UniqueAllResult(values, index, np.reshape(inverse, t.shape),
                                             counts)


# -- shape surgery --------------------------------------------------------------------------------

def _axis_and(arr, axis, what):
    x = _t(arr)
    if axis is None:
        return np.ravel(x), 0
    return x, shapes.normalize_axis(axis, need_rank(x, what))


def delete(arr, obj, axis=None):
    x, ax = _axis_and(arr, axis, "numpy.delete")
    n = x.shape[ax]
    if isinstance(obj, Tensor):   # indices known at run time: keep the others (mask)
        positions = np.arange(np.size(x, ax))
        idx = np.where(obj < 0, obj + np.size(x, ax), obj) if obj.dtype.kind != "b" \
            else np.nonzero(obj)[0]
        keep = ~np.isin(positions, idx)
        return np.compress(keep, x, axis=ax)
    n = _known(n, "numpy.delete")
    keep = np.delete(np.arange(n), obj)
    return np.take(x, keep, axis=ax)


def insert(arr, obj, values, axis=None):
    x, ax = _axis_and(arr, axis, "numpy.insert")
    if isinstance(obj, Tensor):
        raise NotImplementedError("numpy.insert needs the insertion indices known while "
                                  "tracing")
    n = _known(x.shape[ax], "numpy.insert")
    ndim = len(x.shape)
    idx = np.asarray(obj)
    if idx.dtype.kind == "b":
        raise NotImplementedError("numpy.insert with a boolean mask: give integer indices")
    v = _t(values).astype(x.dtype)
    v = np.reshape(v, (1,) * (ndim - len(v.shape)) + tuple(v.shape)) if len(v.shape) < ndim \
        else v
    if idx.ndim == 0:   # one place: values is a block along the axis
        where_ = int(idx) + n if idx < 0 else int(idx)
        if len(_t(values).shape) < ndim:
            v = np.moveaxis(v, 0, ax)
        numnew = v.shape[ax]
        target = tuple(numnew if i == ax else d for i, d in enumerate(x.shape))
        v = np.broadcast_to(v, target)
        before = np.take(x, np.arange(where_), axis=ax)
        after = np.take(x, np.arange(where_, n), axis=ax)
        return np.concatenate([before, v, after], axis=ax)
    idx = np.where(idx < 0, idx + n, idx).astype(np.int64).ravel()
    numnew = len(idx)
    order = np.argsort(idx, kind="mergesort")
    idx[order] += np.arange(numnew)
    gather = np.empty(n + numnew, dtype=np.int64)
    old = np.ones(n + numnew, dtype=bool)
    old[idx] = False
    gather[idx] = n + np.arange(numnew)
    gather[old] = np.arange(n)
    target = tuple(numnew if i == ax else d for i, d in enumerate(x.shape))
    return np.take(np.concatenate([x, np.broadcast_to(v, target)], axis=ax), gather, axis=ax)


def resize(a, new_shape):
    x = np.ravel(_t(a))
    shape = (int(new_shape),) if isinstance(new_shape, (int, np.integer)) else \
        tuple(int(d) for d in new_shape)
    total = int(np.prod(shape))
    n = _known(x.shape[0], "numpy.resize")
    if n == 0 or total == 0:
        return np.zeros(shape, x.dtype) + np.zeros((), x.dtype) * np.sum(x)
    return np.reshape(np.tile(x, -(-total // n))[:total], shape)


def trim_zeros(filt, trim="fb", axis=None):
    x = _t(filt)
    if axis is not None or need_rank(x, "numpy.trim_zeros") != 1:
        raise NotImplementedError("numpy.trim_zeros: only 1-D input while tracing")
    trim = trim.lower()
    size = np.size(x, 0)
    pos = np.arange(size)
    nz = x != 0
    first = np.min(np.where(nz, pos, size)) if "f" in trim else 0
    last = np.max(np.where(nz, pos, -1)) + 1 if "b" in trim else size
    last = np.maximum(last, first)
    return x[first:last]


def block(arrays):
    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) and a else (1 if isinstance(a, list)
                                                                   else 0)

    def leaves(a):
        return [y for item in a for y in leaves(item)] if isinstance(a, list) else [_t(a)]
    d = depth(arrays)
    ndim = max([d] + [len(t.shape) for t in leaves(arrays)])

    def build(a, level):
        if not isinstance(a, list):
            t = _t(a)
            return np.reshape(t, (1,) * (ndim - len(t.shape)) + tuple(t.shape))
        return np.concatenate([build(item, level + 1) for item in a], axis=level - d)
    return build(arrays, 0)


def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise TypeError("numpy.choose(..., out=...) cannot write into a symbolic tensor")
    idx = _t(a)
    parts = np.broadcast_arrays(idx, *[_t(c) for c in choices])
    idx, options = parts[0], np.stack(parts[1:])
    k = len(choices)
    if mode == "clip":
        idx = np.clip(idx, 0, k - 1)
    elif mode == "wrap":
        idx = np.mod(idx, k)
    return np.take_along_axis(options, idx[None].astype(np.int64), 0)[0]


def array_equiv(a1, a2):
    x, y = _t(a1), _t(a2)
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        return False
    return np.all(x == y)


def sort_complex(a):
    x = _t(a)
    out = np.sort(x)
    if x.dtype.kind == "c":
        return out
    return out.astype("F" if x.dtype.char in "bhBH" else "G" if x.dtype.char == "g" else "D")
