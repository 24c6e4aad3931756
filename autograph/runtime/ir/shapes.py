"""Static shape rules: NumPy's broadcasting, reductions, reshapes and matmul, extended to
partially known shapes.

A shape is a tuple of ints and None (a dimension known only when the graph runs), or None
for an unknown rank. Every rule returns the most precise shape that holds for all values
the unknowns may take, and raises ValueError for shapes that can never work (the message
says which dimensions clash, as NumPy would at run time).
"""

import math
from functools import lru_cache

import numpy as np


def fmt(shape):
    if shape is None:
        return "<unknown rank>"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


@lru_cache(maxsize=4096)
def broadcast(*shapes):
    """The broadcast shape of `shapes`. An unknown dim broadcast with a known dim k != 1
    gives k (it must be 1 or k); unknown with 1 or unknown stays unknown."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-rank, 0):
        known, unknown = 1, False
        for s in shapes:
            if len(s) < -i:
                continue
            d = s[i]
            if d is None:
                unknown = True
            elif d != 1:
                if known != 1 and known != d:
                    raise ValueError("operands could not be broadcast together with shapes "
                                     + " ".join(fmt(s) for s in shapes))
                known = d
        out.append(None if unknown and known == 1 else known)
    return tuple(out)


def normalize_axis(axis, ndim, what="axis"):
    """`axis` (an integer, possibly negative: a Python int, a NumPy integer, anything with
    `__index__` as NumPy takes) as a non-negative int < ndim. Out of range, NumPy's
    AxisError (a ValueError and an IndexError), naming the user's line, at trace time. A
    tuple is NumPy's TypeError (the functions that take one axis refuse it even with one
    element: argmax, cumsum, sort, take...)."""
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{what} must be an integer, not a {type(axis).__name__} "
                        f"({axis!r}): this function takes one axis{where()}")
    axis = _as_axis(axis, what)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"{what} {axis} is out of bounds for a tensor of rank {ndim}{where()}")
    return axis % ndim if ndim else axis


def accumulate_axis(axis, ndim):
    """normalize_axis for ufunc.accumulate (np.cumulative_sum/prod): NumPy takes a tuple of
    one axis as that axis, and refuses more or none with its ValueError once the axes are
    checked (an axis out of range is AxisError first)."""
    if not isinstance(axis, (tuple, list)):
        return normalize_axis(axis, ndim)
    axes = normalize_axes(axis, ndim)
    if len(axes) != 1:
        raise ValueError(f"accumulate does not allow multiple axes, got {tuple(axis)!r}"
                         f"{where()}")
    return axes[0]


def names_the_element(axis, ndim):
    """True for an integer `axis` 0 or -1 on a 0-d input (ndim 0). NumPy takes it for the
    ufunc reductions and what is built on them (sum, max, any, ptp, nansum...: no axis left
    to reduce) and for the functions that take one axis of the flattened input (argmax,
    cumsum, argsort, take, repeat: a 1-element vector); mean, std, median, quantile and
    sort refuse it (AxisError), and every one refuses a tuple (0,) or axis 1. So each
    function that takes it asks here before normalizing."""
    return (ndim == 0 and not isinstance(axis, (bool, tuple, list))
            and hasattr(type(axis), "__index__") and axis.__index__() in (0, -1))


def normalize_axes(axis, ndim, element_ok=False):
    """`axis` (None, an integer or a sequence of them) as a sorted tuple of non-negative
    ints, or None for all axes. With an unknown rank (ndim None) the axes are kept as given.
    An axis named twice is NumPy's ValueError. `element_ok`: a ufunc reduction, which takes
    axis 0 or -1 of a 0-d input as no axis at all (see names_the_element)."""
    if axis is None:
        return None
    if element_ok and names_the_element(axis, ndim):
        return ()
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if ndim is None:
        return tuple(_as_axis(a, "axis") for a in axes)
    out = tuple(sorted(normalize_axis(a, ndim) for a in axes))
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis!r} names an axis twice (rank "
                         f"{ndim}){where()}")
    return out


def _as_axis(axis, what):
    """`axis` as a Python int: what has `__index__` (NumPy integers, 0-d integer arrays),
    not a bool (NumPy refuses it too) or a float."""
    if isinstance(axis, bool) or not hasattr(type(axis), "__index__"):
        raise TypeError(f"{what} must be an integer, not {type(axis).__name__} ({axis!r})"
                        f"{where()}")
    return axis.__index__()


def where():
    """' at file.py:12 (`source`)' for the user's line being traced, or '' (the runtime
    knows no files: the compiler installs the locator in autograph.runtime.ir.tensor)."""
    from autograph.runtime.ir import tensor
    return tensor.where(" at ")


def reduce(shape, axes, keepdims):
    """The shape after reducing `axes` (normalized, or None for all) of `shape`."""
    if shape is None:
        return () if axes is None and not keepdims else None
    if axes is None:
        axes = range(len(shape))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def size(shape):
    """The number of elements, or None when some dimension is unknown."""
    if shape is None or None in shape:
        return None
    return math.prod(shape)


def reshape(shape, newshape):
    """The shape of `reshape(x, newshape)`; -1 is inferred when the size of x is known."""
    newshape = tuple(newshape)
    if None in newshape:   # lengths known only when the graph runs
        return tuple(None if d == -1 else d for d in newshape)
    if newshape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension (-1) in a reshape")
    if any(d < -1 for d in newshape):
        raise ValueError(f"negative dimensions are not allowed in reshape to {newshape}")
    total = size(shape)
    if -1 not in newshape:
        if total is not None and math.prod(newshape) != total:
            raise ValueError(f"cannot reshape a tensor of shape {fmt(shape)} "
                             f"(size {total}) into shape {fmt(newshape)}")
        return newshape
    rest = math.prod(d for d in newshape if d != -1)
    if total is None:
        missing = None
    elif rest == 0 or total % rest:
        raise ValueError(f"cannot reshape a tensor of shape {fmt(shape)} (size {total}) "
                         f"into shape {fmt(newshape)}")
    else:
        missing = total // rest
    return tuple(missing if d == -1 else d for d in newshape)


def _dims_agree(a, b):
    return a is None or b is None or a == b


def matmul(a, b):
    """The shape of `a @ b` (NumPy's matmul: 1-D operands are promoted and the added axis
    removed; leading axes broadcast)."""
    if a is None or b is None:
        return None
    if len(a) == 0 or len(b) == 0:
        raise ValueError("matmul: an operand is 0-d (a scalar); use * to multiply by a scalar")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not _dims_agree(a2[-1], b2[-2]):
        raise ValueError(f"matmul: the last axis of the left operand {fmt(a)} and the "
                         f"second-to-last axis of the right operand {fmt(b)} differ")
    try:
        batch = broadcast(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(f"matmul: the leading (batch) axes of the operands {fmt(a)} and "
                         f"{fmt(b)} do not broadcast") from None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def concat(shapes, axis):
    """The shape of concatenating tensors of `shapes` along `axis` (normalized)."""
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise ValueError("all the tensors to concatenate must have the same rank, got shapes "
                         + ", ".join(fmt(s) for s in shapes))
    out = []
    for i, dims in enumerate(zip(*shapes)):
        if i == axis:
            out.append(None if None in dims else sum(dims))
            continue
        known = {d for d in dims if d is not None}
        if len(known) > 1:
            raise ValueError(f"the tensors to concatenate differ in axis {i}: shapes "
                             + ", ".join(fmt(s) for s in shapes))
        out.append(known.pop() if known else None)
    return tuple(out)
