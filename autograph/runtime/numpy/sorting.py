"""Searching and sets on symbolic tensors: searchsorted, unique, nonzero, argwhere,
flatnonzero, take_along_axis, isin. The data-dependent ones (unique, nonzero, argwhere,
flatnonzero) give tensors whose length is unknown (None) while tracing; their kernels
use only array API calls (sort, argsort, nonzero, cumulative_sum, take)."""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.dtypes import BOOL, INT64
from autograph.runtime.ir.primitives import bind, bind1, defvjp, nondifferentiable, register
from autograph.runtime.numpy.elementwise import as_tensor, cast, common, ufunc
from autograph.runtime.numpy.indexing import getitem, take
from autograph.runtime.numpy.joins import stack
from autograph.runtime.numpy.reductions import reduction
from autograph.runtime.numpy.shape_ops import (
    broadcast_to, need_rank, ravel, reshape, run_shape, shape_arg, static_shape)


def _searchsorted_infer(a, v, *, side):
    return [(INT64, v.shape, False)]


def _searchsorted_kernel(xp, a, v, *, side):
    return xp.astype(xp.searchsorted(a, v, side=side), xp.int64)


register("searchsorted", _searchsorted_infer, _searchsorted_kernel, doc="numpy.searchsorted")


def searchsorted(a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise ValueError(f"numpy.searchsorted: side must be 'left' or 'right', got {side!r}")
    (a, v), _, _ = common((a, v))
    if need_rank(a, "numpy.searchsorted") != 1:
        raise ValueError("numpy.searchsorted: a must be 1-D")
    if sorter is not None:
        a = take(a, sorter)
    if a.dtype == BOOL:
        a, v = cast(a, np.dtype(np.int8)), cast(v, np.dtype(np.int8))
    return bind1("searchsorted", (a, v), {"side": side})


# -- unique: sort, mark the first of each run, and read counts/indices from the marks ----------

def _unique_infer(x, *, outputs):
    kinds = {"values": (x.dtype, (None,)), "index": (INT64, (None,)),
             "inverse": (INT64, x.shape), "counts": (INT64, (None,))}
    return [(kinds[o][0], kinds[o][1], False) for o in outputs]


def _unique_kernel(xp, x, *, outputs):
    flat = xp.reshape(x, (-1,))
    n = flat.shape[0]
    if n == 0:
        empty = {"values": flat, "index": xp.zeros((0,), dtype=xp.int64),
                 "inverse": xp.zeros(x.shape, dtype=xp.int64),
                 "counts": xp.zeros((0,), dtype=xp.int64)}
        out = tuple(empty[o] for o in outputs)
        return out if len(out) > 1 else out[0]
    order = xp.argsort(flat, stable=True)
    s = xp.take(flat, order)
    first = s[1:] != s[:-1]
    if xp.isdtype(s.dtype, ("real floating", "complex floating")):   # NaNs are one value
        first = xp.logical_and(first, xp.logical_not(
            xp.logical_and(xp.isnan(s[1:]), xp.isnan(s[:-1]))))
    first = xp.concat([xp.ones((min(n, 1),), dtype=xp.bool), first])
    starts = xp.nonzero(first)[0]
    result = {}
    result["values"] = xp.take(s, starts)
    result["index"] = xp.astype(xp.take(order, starts), xp.int64)
    if "inverse" in outputs:
        group = xp.cumulative_sum(xp.astype(first, xp.int64)) - 1
        back = xp.argsort(order, stable=True)   # the inverse permutation
        result["inverse"] = xp.reshape(xp.take(group, back), x.shape)
    ends = xp.concat([starts[1:], xp.asarray([n], dtype=starts.dtype)])
    result["counts"] = xp.astype(ends - starts, xp.int64)
    out = tuple(result[o] for o in outputs)
    return out if len(out) > 1 else out[0]   # a one-output kernel returns the array


register("unique", _unique_infer, _unique_kernel, doc="numpy.unique (sorted, axis=None)")


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    if axis is not None:
        raise NotImplementedError("numpy.unique(axis=...) is not supported while tracing")
    if not equal_nan:
        raise NotImplementedError("numpy.unique(equal_nan=False) is not supported while "
                                  "tracing")
    x = as_tensor(ar)
    outputs = ("values",) + tuple(name for name, asked in (
        ("index", return_index), ("inverse", return_inverse), ("counts", return_counts))
        if asked)
    if x.dtype == BOOL:
        out = list(bind("unique", (cast(x, np.dtype(np.int8)),), {"outputs": outputs}).outputs)
        out[0] = cast(out[0], BOOL)
    else:
        out = bind("unique", (x,), {"outputs": outputs}).outputs
    return out[0] if len(out) == 1 else tuple(out)


# -- nonzero and friends ------------------------------------------------------------------------

def _one_or_tuple(arrays):
    return arrays[0] if len(arrays) == 1 else arrays


def _nonzero_infer(x):
    return [(INT64, (None,), False)] * len(x.shape)


register("nonzero", _nonzero_infer,
         lambda xp, x: _one_or_tuple(tuple(xp.astype(i, xp.int64) for i in xp.nonzero(x))),
         doc="numpy.nonzero")


def nonzero(a):
    x = as_tensor(a)
    if need_rank(x, "numpy.nonzero") == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    if x.dtype != BOOL:
        x = ufunc(np.not_equal, x, 0)
    return tuple(bind("nonzero", (x,)).outputs)


def flatnonzero(a):
    return nonzero(ravel(as_tensor(a)))[0]


def argwhere(a):
    x = as_tensor(a)
    if need_rank(x, "numpy.argwhere") == 0:
        x = reshape(ufunc(np.not_equal, x, 0), (1,))
        return reshape(nonzero(x)[0], (-1, 0))
    return stack(list(nonzero(x)), -1)


# -- take_along_axis, isin --------------------------------------------------------------------

def _along_infer(x, i, *, axis):
    return [(x.dtype, i.shape, False)]


def _along_kernel(xp, x, i, *, axis):
    i = xp.where(i < 0, i + x.shape[axis], i)   # NumPy's negative indices
    return xp.take_along_axis(x, i, axis=axis)


register("take_along_axis", _along_infer, _along_kernel, doc="numpy.take_along_axis")


def take_along_axis(arr, indices, axis=-1):
    x, i = as_tensor(arr), as_tensor(indices)
    if i.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        x, i, axis = ravel(x), ravel(i), 0
    ndim = need_rank(x, "numpy.take_along_axis")
    if need_rank(i, "numpy.take_along_axis") != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = shapes.normalize_axis(axis, ndim)
    # NumPy broadcasts every other axis
    out = shapes.broadcast(tuple(1 if k == axis else d for k, d in enumerate(x.shape)),
                           tuple(1 if k == axis else d for k, d in enumerate(i.shape)))
    if None in out:
        raise NotImplementedError("numpy.take_along_axis needs known shapes while tracing")
    x = broadcast_to(x, tuple(x.shape[axis] if k == axis else d for k, d in enumerate(out)))
    i = broadcast_to(i, tuple(i.shape[axis] if k == axis else d for k, d in enumerate(out)))
    return bind1("take_along_axis", (x, cast(i, INT64)), {"axis": axis})


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Every element compared with every test element (exact; memory n * m)."""
    e = as_tensor(element)
    t = ravel(as_tensor(test_elements))
    ndim = need_rank(e, "numpy.isin")
    pairs = ufunc(np.equal, getitem(e, (Ellipsis, None)),
                  reshape(t, (1,) * ndim + (-1,)), strong=True)
    found = reduction("any", pairs, -1)
    return ufunc(np.logical_not, found) if invert else found


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    return isin(ravel(as_tensor(ar1)), ar2, invert=invert)


FUNCTIONS = {
    np.searchsorted: searchsorted, np.unique: unique, np.nonzero: nonzero,
    np.flatnonzero: flatnonzero, np.argwhere: argwhere, np.take_along_axis: take_along_axis,
    np.isin: isin,
}
if hasattr(np, "in1d"):
    FUNCTIONS[np.in1d] = in1d


# -- reverse-mode rules ------------------------------------------------------------------------

def _add_along_infer(ct, i, *dims, axis, shape):
    return [(ct.dtype, static_shape(shape), False)]


def _add_along_kernel(xp, ct, i, *dims, axis, shape):
    shape = run_shape(shape, dims) if dims else shape
    out = xp.zeros(shape, dtype=ct.dtype)
    i = xp.where(i < 0, i + shape[axis], i)
    ndim = len(shape)
    key = tuple(i if d == axis else
                xp.reshape(xp.arange(ct.shape[d]), tuple(-1 if e == d else 1 for e in range(ndim)))
                for d in range(ndim))
    xp.add.at(out, key, ct)
    return out


register("add_along_axis", _add_along_infer, _add_along_kernel,
         doc="zeros of `shape` plus ct added at indices i along axis (take_along_axis's "
             "transpose)")


def _along_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import differentiable, dims, ins
    x, i = ins(node)
    if not differentiable(x):
        return [None, None]
    spec, dynamic = shape_arg(dims(x), "the shape of a cotangent")
    return [bind1("add_along_axis", (cts[0], i.value) + tuple(dynamic),
                  {"axis": node.attrs["axis"], "shape": spec}), None]


def _add_along_vjp(cts, node):
    i = node.inputs[1]
    return [bind1("take_along_axis", (cts[0], i), {"axis": node.attrs["axis"]}), None] + \
        [None] * (len(node.inputs) - 2)


def _unique_vjp(cts, node):
    """Each unique value is x at its first occurrence (`index`): its cotangent goes there."""
    from autograph.runtime.numpy.adjoint import differentiable, dims, ins
    from autograph.runtime.numpy.updates import scatter
    x = ins(node)[0]
    g = cts[0] if node.attrs["outputs"][0] == "values" else None
    if g is None or not differentiable(x):
        return [None]
    first = bind1("unique", (x.value,), {"outputs": ("index",)})
    flat = reshape(x.value, (-1,))
    return [reshape(scatter(g, flat, (("t", 0),), [first]), dims(x))]


defvjp("take_along_axis", _along_vjp)
defvjp("add_along_axis", _add_along_vjp)
defvjp("unique", _unique_vjp)
nondifferentiable("searchsorted", "nonzero")
