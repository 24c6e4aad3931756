"""Editing an array's elements and blocks, composed from the covered NumPy functions (NumPy on
tensors, so each is differentiable through its parts): delete, insert, resize, trim_zeros,
block, choose, array_equiv.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank


def _t(x):
    return as_tensor(x)


def _known(n, what):
    if n is None:
        raise NotImplementedError(f"{what} needs the length of the axis known while tracing")
    return n


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
            return t[(None,) * (ndim - len(t.shape))]   # (no reshape: lengths may be unknown)
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
