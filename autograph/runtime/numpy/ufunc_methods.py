"""ufunc methods on symbolic tensors beyond the reductions with their own primitive:
`.reduce` and `.accumulate` of any binary ufunc, and `.outer`.

NumPy's reduce and accumulate of a ufunc other than add are a left fold along the axis;
the fold is staged element by element (the length of the axis must be known), so the
results are NumPy's exactly. Ufuncs that are associative and exact (maximum, minimum,
logical and bitwise ones, gcd, lcm) are combined in a tree instead: log2(n) nodes."""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.numpy.elementwise import as_tensor, cast, ufunc
from autograph.runtime.numpy.indexing import getitem
from autograph.runtime.numpy.joins import concatenate, stack
from autograph.runtime.numpy.shape_ops import need_rank, ravel, reshape, transpose

ASSOCIATIVE = {np.maximum, np.minimum, np.fmax, np.fmin, np.logical_and, np.logical_or,
               np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.gcd, np.lcm}
# what NumPy lets reduce over several axes at once (the order of the elements is free)
REORDERABLE = ASSOCIATIVE | {np.add, np.multiply, np.logaddexp, np.logaddexp2, np.hypot}


def _along(x, axis, what):
    """x with `axis` moved first, and its known length."""
    ndim = need_rank(x, what)
    ax = shapes.accumulate_axis(axis, ndim)   # (NumPy's accumulate takes (1,) too)
    order = (ax,) + tuple(i for i in range(ndim) if i != ax)
    n = x.shape[ax]
    if n is None:
        raise NotImplementedError(f"{what} needs the length of the axis known while tracing")
    if n == 0:
        raise ValueError(f"{what} of an empty axis needs an identity; not supported while "
                         "tracing")
    return transpose(x, order), ax, n


def _result_dtype(uf, dtype):
    """The dtype NumPy's loop for uf(dtype, dtype) gives."""
    return np.dtype(uf.resolve_dtypes((dtype, dtype, None))[-1])


def _restore(x, ax):
    ndim = len(x.shape)
    order = list(range(1, ndim))
    order.insert(ax, 0)
    return transpose(x, tuple(order))


def reduce(uf, x, axis=0, dtype=None, keepdims=False):
    name = f"numpy.{uf.__name__}.reduce"
    x = as_tensor(x)
    if dtype is not None:
        x = cast(x, np.dtype(dtype))
    out_dtype = _result_dtype(uf, x.dtype)   # NumPy checks the loop first (TypeError)
    if axis is None:
        if uf not in REORDERABLE and need_rank(x, name) > 1:
            raise ValueError(f"reduction operation '{uf.__name__}' is not reorderable, so at "
                             "most one axis may be specified")
        x, axis = ravel(x), 0
        ndim0 = None
    else:
        ndim0 = need_rank(x, name)
        if shapes.names_the_element(axis, ndim0):   # NumPy: nothing to reduce
            return cast(x, out_dtype if dtype is None else np.dtype(dtype))
    if isinstance(axis, (tuple, list)):
        axes = shapes.normalize_axes(axis, ndim0)   # NumPy's errors for a bad or repeated axis
        if len(axes) != 1:
            if uf not in REORDERABLE:
                raise ValueError(f"reduction operation '{uf.__name__}' is not reorderable, "
                                 "so at most one axis may be specified")
            # one axis after another, the last first (the others keep their numbers)
            out = cast(x, out_dtype) if not axes else x
            for ax in reversed(axes):
                out = reduce(uf, out, ax, None, keepdims)
            return out if dtype is None else cast(out, np.dtype(dtype))
        axis = axes[0]
    moved, ax, n = _along(x, axis, name)
    if uf in ASSOCIATIVE:   # op(T, T) -> T once in the loop's dtype (logical ones: bool)
        parts = cast(moved, out_dtype)
        while parts.shape[0] > 1:
            h = parts.shape[0] // 2
            pair = ufunc(uf, getitem(parts, slice(0, h)), getitem(parts, slice(h, 2 * h)))
            parts = concatenate([pair, getitem(parts, slice(2 * h, None))], 0) \
                if parts.shape[0] % 2 else pair
        out = getitem(parts, 0)
    else:
        out = cast(getitem(moved, 0), out_dtype)
        for i in range(1, n):
            out = ufunc(uf, out, getitem(moved, i))
    if dtype is not None:
        out = cast(out, np.dtype(dtype))
    if keepdims:
        if ndim0 is None:
            return reshape(out, (1,) * len(x.shape))
        return reshape(out, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
    return out


def accumulate(uf, x, axis=0, dtype=None):
    name = f"numpy.{uf.__name__}.accumulate"
    x = as_tensor(x)
    if dtype is not None:
        x = cast(x, np.dtype(dtype))
    moved, ax, n = _along(x, axis, name)
    out_dtype = _result_dtype(uf, x.dtype)
    if uf in ASSOCIATIVE:   # a prefix scan in log2(n) steps (Hillis and Steele)
        y, s = cast(moved, out_dtype), 1
        while s < n:
            combined = ufunc(uf, getitem(y, slice(0, n - s)), getitem(y, slice(s, None)))
            y = concatenate([getitem(y, slice(0, s)), cast(combined, y.dtype)], 0)
            s *= 2
    else:
        outs = [cast(getitem(moved, 0), out_dtype)]
        for i in range(1, n):
            outs.append(cast(ufunc(uf, outs[-1], getitem(moved, i)), out_dtype))
        y = stack(outs, 0)
    return _restore(y, ax)


def outer(uf, a, b):
    x, y = as_tensor(a), as_tensor(b)
    nb = need_rank(y, f"numpy.{uf.__name__}.outer")
    need_rank(x, f"numpy.{uf.__name__}.outer")
    x = getitem(x, (Ellipsis,) + (None,) * nb) if nb else x
    return ufunc(uf, x, y, strong=True)


def method(uf, method_name, inputs, kwargs, dtype):
    """Stage `uf.method_name(*inputs, **kwargs)`, or NotImplemented when not covered."""
    if uf.nin != 2 or uf.nout != 1:
        return NotImplemented
    if method_name == "outer" and len(inputs) == 2 and not kwargs:
        out = outer(uf, *inputs)
        return out if dtype is None else cast(out, np.dtype(dtype))
    if method_name == "reduce" and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs.pop("initial", np._NoValue) is not np._NoValue or kwargs:
            return NotImplemented
        return reduce(uf, inputs[0], axis, dtype, keepdims)
    if method_name == "accumulate" and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        if kwargs:
            return NotImplemented
        return accumulate(uf, inputs[0], axis, dtype)
    return NotImplemented


METHODS = ("reduce", "accumulate", "outer")
