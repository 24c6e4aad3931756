"""Joining, splitting and repeating symbolic tensors: concatenate, stack, vstack, hstack,
atleast_nd, split, broadcast_arrays, repeat, tile."""

import numpy as np

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.numpy.elementwise import as_tensor, cast, common
from autograph.runtime.ir.primitives import bind1, defvjp, register
from autograph.runtime.numpy.shape_ops import (
    broadcast_to, expand_dims, need_rank, reshape, static_ints)
from autograph.runtime.ir.tensor import Tensor


# -- concatenate, stack ------------------------------------------------------------------------

def _concat_infer(*xs, axis):
    return [(xs[0].dtype, shapes.concat([x.shape for x in xs], axis),
             False)]


def _concat_kernel(xp, *xs, axis):
    return xp.concat(list(xs), axis=axis)


def _stack_infer(*xs, axis):
    shape = shapes.concat([x.shape for x in xs], None)   # only checks that shapes agree
    return [(xs[0].dtype, shape[:axis] + (len(xs),) + shape[axis:], False)]


def _stack_kernel(xp, *xs, axis):
    return xp.stack(list(xs), axis=axis)


register("concat", _concat_infer, _concat_kernel, doc="numpy.concatenate")
register("stack", _stack_infer, _stack_kernel, doc="numpy.stack")


def _as_array(x):
    """An item of a sequence of arrays as NumPy sees it: np.stack and np.concatenate make
    an array of each item first, so a Python scalar (or a weak tensor, which stands for
    one) counts with its default dtype, not as a weak scalar (np.stack([f32, 1.5]) is
    float64)."""
    if type(x) in (bool, int, float, complex):
        return np.asarray(x)
    if isinstance(x, Tensor) and x.weak:
        return cast(x, dtypes.default_dtype(dtypes.key_of(x.dtype, True)))
    return x


def _sequence(arrays, what):
    if isinstance(arrays, Tensor):
        raise NotImplementedError(f"numpy.{what} of a single symbolic tensor (split along "
                                  "its first axis) is not supported; pass a list of tensors")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"need at least one array to {what}")
    tensors, _, _ = common([_as_array(a) for a in arrays])
    for t in tensors:
        need_rank(t, what)
    return tensors


def concatenate(arrays, axis=0, dtype=None):
    tensors = _sequence(arrays, "concatenate")
    if axis is None:
        tensors, axis = [reshape(t, (-1,)) for t in tensors], 0
    axis = shapes.normalize_axis(axis, len(tensors[0].shape))
    out = bind1("concat", tensors, {"axis": axis})
    return out if dtype is None else cast(out, dtype)


def stack(arrays, axis=0, dtype=None):
    tensors = _sequence(arrays, "stack")
    axis = shapes.normalize_axis(axis, len(tensors[0].shape) + 1)
    out = bind1("stack", tensors, {"axis": axis})
    return out if dtype is None else cast(out, dtype)


# -- joining and splitting, repeating --------------------------------------------------------

def atleast_nd(x, n):
    """np.atleast_1d/2d/3d for one tensor: 1s added in front (a vector becomes a row; for
    3-d, NumPy adds one in front and one at the end)."""
    x = as_tensor(x)
    ndim = need_rank(x, f"atleast_{n}d")
    if ndim >= n:
        return x
    if n == 3 and ndim == 2:
        return expand_dims(x, -1)
    if n == 3 and ndim == 1:
        return expand_dims(x, (0, -1))
    return expand_dims(x, tuple(range(n - ndim)))


def _atleast(n):
    def fn(*arys):
        out = [atleast_nd(a, n) for a in arys]
        return out[0] if len(out) == 1 else tuple(out)
    fn.__name__ = f"atleast_{n}d"
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def vstack(tup):
    return concatenate([atleast_nd(t, 2) for t in tup], axis=0)


def hstack(tup):
    arrays = [atleast_nd(t, 1) for t in tup]
    return concatenate(arrays, axis=0 if len(arrays[0].shape) == 1 else 1)


def split(ary, indices_or_sections, axis=0, equal=True):
    """np.split (equal=True) / np.array_split: pieces of a known axis length, as slices."""
    x = as_tensor(ary)
    axis = shapes.normalize_axis(axis, need_rank(x, "split"))
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if n is None:
            raise ValueError(f"numpy.split into {sections} sections needs the length of axis "
                             f"{axis} of {x!r}, which is unknown while tracing")
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division: "
                             f"{n} elements into {sections} sections")
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (i < extra))
    else:
        bounds = [0] + list(static_ints(indices_or_sections, "split indices")) + [n]
    lead = (("s", None, None, None),) * axis
    return [bind1("getitem", (x,), {"index": lead + (("s", a, b, None),)})
            for a, b in zip(bounds[:-1], bounds[1:])]


def broadcast_arrays(*args):
    tensors = [as_tensor(a) for a in args]
    shape = shapes.broadcast(*[t.shape for t in tensors])
    if shape is None or None in shape:
        raise ValueError("numpy.broadcast_arrays needs every dimension known while tracing, "
                         f"got the broadcast shape {shapes.fmt(shape)}; use arithmetic, which "
                         "broadcasts by itself")
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in tensors)


def _repeat_infer(x, *, repeats, axis):
    if axis is None:
        n = shapes.size(x.shape)
        return [(x.dtype, (None if n is None else n * repeats,), False)]
    d = x.shape[axis]
    return [(x.dtype, x.shape[:axis] + (None if d is None else d * repeats,) +
             x.shape[axis + 1:], False)]


def _tile_infer(x, *, reps):
    shape = (1,) * (len(reps) - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (len(shape) - len(reps)) + reps
    return [(x.dtype, tuple(None if d is None else d * r for d, r in zip(shape, reps)),
             False)]


def _repeat_kernel(xp, x, *, repeats, axis):
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    return xp.repeat(x, repeats, axis=axis)


def _tile_kernel(xp, x, *, reps):
    return xp.tile(x, reps)


register("repeat", _repeat_infer, _repeat_kernel, doc="numpy.repeat (one count for all)")
register("tile", _tile_infer, _tile_kernel, doc="numpy.tile")


def repeat(a, repeats, axis=None):
    if not isinstance(repeats, (int, np.integer)):
        # counts known when the graph runs: composed of take and searchsorted, which sit
        # above this module in the family (a lazy import inside runtime.numpy)
        from autograph.runtime.numpy.counted_shapes import counted_repeat
        return counted_repeat(a, repeats, axis)
    x = as_tensor(a)
    if shapes.names_the_element(axis, None if x.shape is None else len(x.shape)):
        axis = None   # NumPy: axis 0 of a 0-d input is its flattening
    if axis is not None:
        axis = shapes.normalize_axis(axis, need_rank(x, "repeat"))
    return bind1("repeat", (x,), {"repeats": int(repeats), "axis": axis})


def tile(A, reps):
    x = as_tensor(A)
    need_rank(x, "tile")
    return bind1("tile", (x,), {"reps": static_ints(reps, "reps")})


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """np.meshgrid of 1-D tensors: each input broadcast along the other axes ('xy': the
    first two axes swapped, as for plotting). Lengths must be known while tracing."""
    if indexing not in ("xy", "ij"):
        raise ValueError("numpy.meshgrid: indexing must be 'xy' or 'ij'")
    vectors = [reshape(as_tensor(x), (-1,)) for x in xi]
    lengths = [v.shape[0] for v in vectors]
    if None in lengths:
        raise NotImplementedError("numpy.meshgrid needs the lengths of its inputs while "
                                  f"tracing, got {lengths}")
    axes = list(range(len(vectors)))
    if indexing == "xy" and len(vectors) > 1:
        axes[0], axes[1] = 1, 0
    full_shape = [0] * len(vectors)
    for v_axis, n in zip(axes, lengths):
        full_shape[v_axis] = n
    out = []
    for v, axis in zip(vectors, axes):
        shape = tuple(-1 if a == axis else 1 for a in range(len(vectors)))
        grid = reshape(v, shape)
        out.append(grid if sparse else broadcast_to(grid, tuple(full_shape)))
    return tuple(out)


# -- reverse-mode rules ------------------------------------------------------------------------

def _concat_vjp(cts, node):
    """Each input gets its slice of the cotangent (offsets known when the graph runs when
    lengths are unknown while tracing)."""
    from autograph.runtime.numpy.adjoint import dims, ins
    from autograph.runtime.numpy.indexing import getitem
    g, axis = cts[0], node.attrs["axis"]
    out, start = [], 0
    for x in ins(node):
        stop = start + dims(x)[axis]
        piece = getitem(g, (slice(None),) * axis + (slice(start, stop),))
        out.append(piece if x.dtype.kind in "fc" else None)
        start = stop
    return out


def _stack_vjp(cts, node):
    from autograph.runtime.numpy.indexing import getitem
    g, axis = cts[0], node.attrs["axis"]
    return [getitem(g, (slice(None),) * axis + (k,)) if x.dtype.kind in "fc" else None
            for k, x in enumerate(getattr(node, "node", node).inputs)]


def _repeat_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import dims, ins
    from autograph.runtime.numpy.reductions import reduction
    x, g = ins(node)[0], cts[0]
    r, axis = node.attrs["repeats"], node.attrs["axis"]
    if x.dtype.kind not in "fc":
        return [None]
    shape = dims(x)
    if axis is None:
        n = 1
        for d in shape:
            n = n * d
        return [reshape(reduction("sum", reshape(g, (n, r)), 1), shape)]
    split = shape[:axis] + [shape[axis], r] + shape[axis + 1:]
    return [reduction("sum", reshape(g, split), axis + 1)]


def _tile_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import dims, ins
    from autograph.runtime.numpy.reductions import reduction
    x, g, reps = ins(node)[0], cts[0], node.attrs["reps"]
    if x.dtype.kind not in "fc":
        return [None]
    shape = dims(x)
    n = max(len(shape), len(reps))
    full = [1] * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + tuple(reps)
    split = [v for r, d in zip(reps, full) for v in (r, d)]
    summed = reduction("sum", reshape(g, split), tuple(range(0, 2 * n, 2)))
    return [reshape(summed, shape)]


defvjp("concat", _concat_vjp)
defvjp("stack", _stack_vjp)
defvjp("repeat", _repeat_vjp)
defvjp("tile", _tile_vjp)
