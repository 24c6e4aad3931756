"""Order statistics over a tuple of axes: median, quantile, percentile and their nan*
forms stage one axis; NumPy also takes several (or none: `axis=()`). Those axes are moved
last and merged into one, and the one-axis staging reduces that: each result sees the
same values NumPy's does (its `_ureduce` merges the axes the same way), so the answers,
the NaN handling and the gradients (transpose and reshape have theirs) are the one-axis
ones. `axis=()` merges no axes: a length-1 axis, so each element is its own median."""

import math

from autograph.runtime.ir import shapes
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import dim, need_rank, reshape, transpose


def several_axes(x, axis, what):
    """The normalized axes when `axis` is a tuple (or list) of other than one axis, else
    None (the caller stages None or one axis as before). NumPy's errors for an axis out of
    range or named twice, naming the user's line."""
    if not isinstance(axis, (tuple, list)):
        return None
    axes = shapes.normalize_axes(axis, need_rank(as_tensor(x), what))
    return None if len(axes) == 1 else axes


def one_axis(x, axis, what):
    """`axis` (an integer or a one-element tuple) as one non-negative axis of x."""
    ndim = need_rank(as_tensor(x), what)
    if isinstance(axis, (tuple, list)):
        (axis,) = shapes.normalize_axes(axis, ndim)
    return shapes.normalize_axis(axis, ndim)


def over_axes(reduce_last, x, axes, keepdims, lead=()):
    """`reduce_last(lanes)` where lanes is x with `axes` moved last and merged into one
    axis (reduce_last reduces axis -1; its result has shape lead + the other axes, lead
    being q's shape for a quantile). keepdims: the reduced axes come back as length 1."""
    x = as_tensor(x)
    ndim = len(x.shape)
    rest = tuple(i for i in range(ndim) if i not in axes)
    moved = transpose(x, rest + tuple(axes)) if axes else x
    merged = [x.shape[a] for a in axes]
    length = -1 if None in merged else math.prod(merged)
    kept = tuple(dim(x, i) for i in rest)   # (a length unknown while tracing: a tensor)
    out = reduce_last(reshape(moved, kept + (length,)))
    if not keepdims:
        return out
    keep = tuple(1 if i in axes else dim(x, i) for i in range(ndim))
    return reshape(out, tuple(lead) + keep)
