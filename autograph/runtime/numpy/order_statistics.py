"""Order statistics composed from the covered NumPy functions (NumPy on tensors):
partition/argpartition (a full sort: a valid partition), sort_complex, and the NaN-aware
quantiles nanquantile/nanpercentile/nanmedian.
"""

import numpy as np

from autograph.runtime.numpy import merged_axes
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank
from autograph.runtime.numpy.statistics import check_quantile_args


def _t(x):
    return as_tensor(x)


def _known(n, what):
    if n is None:
        raise NotImplementedError(f"{what} needs the length of the axis known while tracing")
    return n


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


def sort_complex(a):
    x = _t(a)
    out = np.sort(x)
    if x.dtype.kind == "c":
        return out
    return out.astype("F" if x.dtype.char in "bhBH" else "G" if x.dtype.char == "g" else "D")


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
        axes = merged_axes.several_axes(x, axis, "numpy.nanquantile")
        if axes is not None:
            return merged_axes.over_axes(lambda t: nanquantile(t, q, -1), x, axes, keepdims,
                                         qs.shape)
        ax = merged_axes.one_axis(x, axis, "numpy.nanquantile")
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
