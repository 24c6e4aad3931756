"""Differences along an axis composed from the covered NumPy functions (NumPy on tensors):
unwrap (phase jumps) and gradient (central differences inside, one-sided at the edges).
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank


def _t(x):
    return as_tensor(x)


def _slice(ndim, ax, s):
    return (slice(None),) * ax + (s,)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    x = _t(p)
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.unwrap"))
    dd = np.diff(x, axis=ax)
    discont = period / 2 if discont is None else discont
    high = period / 2
    integer = x.dtype.kind in "iu" and isinstance(period, int)
    if integer:
        high, rem = divmod(period, 2)
        boundary = not rem
    else:
        boundary = True
    ddmod = np.mod(dd + high, period) - high
    if boundary:
        ddmod = np.where((ddmod == -high) & (dd > 0), high, ddmod)
    correct = np.where(np.abs(dd) < max(discont, high), 0, ddmod - dd)
    first = np.take(x, np.arange(1), axis=ax)
    rest = np.take(x, np.arange(1, np.size(x, ax)), axis=ax)
    return np.concatenate([first + 0 * correct.sum(axis=ax, keepdims=True),
                           rest + np.cumsum(correct, axis=ax)], axis=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    x = _t(f)
    ndim = need_rank(x, "numpy.gradient")
    axes = tuple(range(ndim)) if axis is None else tuple(
        shapes.normalize_axis(int(a), ndim) for a in np.atleast_1d(axis))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes) and all(np.ndim(v) == 0 for v in varargs):
        spacing = list(varargs)
    else:
        raise NotImplementedError("numpy.gradient: only scalar spacings while tracing")
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    outs = []
    for ax, h in zip(axes, spacing):
        n = x.shape[ax]
        if n is None or n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        s = lambda a, b=None: x[_slice(ndim, ax, slice(a, b))]   # noqa: E731
        inner = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            lo = (s(1, 2) - s(0, 1)) / h
            hi = (s(-1, None) - s(-2, -1)) / h
        else:
            lo = -(3.0 * s(0, 1) - 4.0 * s(1, 2) + s(2, 3)) / (2.0 * h)
            hi = (3.0 * s(-1, None) - 4.0 * s(-2, -1) + s(-3, -2)) / (2.0 * h)
        outs.append(np.concatenate([lo, inner, hi], axis=ax).astype(x.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)
