"""Applying a Python function over parts of an array: apply_along_axis, apply_over_axes,
piecewise. The Python function runs while tracing, on tensors, so its operations join the
graph.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank


def _t(x):
    return as_tensor(x)


def _static(shape, what):
    if shape is None or None in shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return tuple(shape)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's loop over every other index, run while tracing: func1d sees tensors."""
    x = _t(arr)
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.apply_along_axis"))
    shape = _static(x.shape, "numpy.apply_along_axis")
    outer = shape[:ax] + shape[ax + 1:]
    moved = np.moveaxis(x, ax, -1)
    results = [_t(func1d(moved[idx], *args, **kwargs)) for idx in np.ndindex(*outer)]
    if not results:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    stacked = np.reshape(np.stack(results), outer + tuple(results[0].shape))
    k = len(results[0].shape)
    return np.moveaxis(stacked, list(range(len(outer), len(outer) + k)),
                       list(range(ax, ax + k))) if k else stacked


def apply_over_axes(func, a, axes):
    val = _t(a)
    n = need_rank(val, "numpy.apply_over_axes")
    for axis in np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = _t(func(val, axis))
        if len(res.shape) == n:
            val = res
        else:
            res = np.expand_dims(res, axis)
            if len(res.shape) != n:
                raise ValueError("function is not returning an array of the correct shape")
            val = res
    return val


def piecewise(x, condlist, funclist, *args, **kw):
    """Each function runs on all of x (as in jax.numpy: functions must be elementwise)
    and np.where keeps its part; NumPy runs it on the selected elements only."""
    t = _t(x)
    if isinstance(condlist, (Tensor, np.ndarray)) and len(getattr(condlist, "shape", ())) \
            <= len(t.shape):
        condlist = [condlist]
    conds = [_t(c) for c in condlist]
    if len(funclist) == len(conds) + 1:
        rest = ~np.any(np.stack(np.broadcast_arrays(*conds)), axis=0)
        conds.append(rest)
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = np.zeros_like(t)
    for cond, fn in zip(conds, funclist):
        value = fn(t, *args, **kw) if callable(fn) else fn
        y = np.where(cond, _t(value).astype(t.dtype), y)
    return y
