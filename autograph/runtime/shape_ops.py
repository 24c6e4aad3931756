"""Shape manipulation on symbolic tensors: reshape, transpose, expand_dims, squeeze,
broadcast_to, concatenate, stack, and shapes/sizes as values (static when known while
tracing, else computed by a node when the graph runs)."""

import math

import numpy as np

from autograph.runtime import shapes
from autograph.runtime.dtypes import INT64
from autograph.runtime.elementwise import as_tensor, cast, common, describe
from autograph.runtime.primitives import bind1, register
from autograph.runtime.tensor import Tensor


# -- shapes: reshape, transpose, expand_dims, squeeze, broadcast_to, concat, stack ----------

def static_ints(value, what):
    """`value` (an int or a sequence of ints) as a tuple of Python ints, or a clear error
    when it holds symbolic tensors (shapes must be known while tracing)."""
    items = (value,) if isinstance(value, (int, np.integer, Tensor)) else tuple(value)
    if any(isinstance(d, Tensor) for d in items):
        raise NotImplementedError(
            f"{what} must be made of Python ints while tracing, got {describe(items)}")
    if any(d is None for d in items):
        raise ValueError(f"{what} has an entry None, {items!r}: x.shape gives None for a "
                         "dimension unknown while tracing. Use -1 for one inferred "
                         "dimension of a reshape, len(x) inside an autograph-converted "
                         "function (a length computed when the graph runs), or a TensorSpec "
                         "whose dimension is known")
    return tuple(int(d) for d in items)


def shape_arg(value, what):
    """A shape argument whose entries may be integer scalar tensors (lengths known only when
    the graph runs): returns (spec, tensors), where `spec` holds the Python ints and, for
    the j-th tensor, the marker ("d", j). The tensors become node inputs; kernels read them
    back with `run_shape`."""
    items = (value,) if isinstance(value, (int, np.integer, Tensor)) else tuple(value)
    dynamic = [d for d in items if isinstance(d, Tensor)]
    if not dynamic:
        return static_ints(items, what), ()
    spec, j = [], 0
    for d in items:
        if isinstance(d, Tensor):
            if d.shape != () or d.dtype.kind not in "iu":
                raise TypeError(f"{what}: a length must be an integer scalar, got {d!r}")
            spec.append(("d", j))
            j += 1
        else:
            spec.append(static_ints(d, what)[0])
    return tuple(spec), tuple(dynamic)


def static_shape(spec):
    """The static view of a shape spec: dynamic entries are unknown (None)."""
    return tuple(None if isinstance(d, tuple) else d for d in spec)


def run_shape(spec, dims):
    """The concrete shape for a spec, given the run-time values of its dynamic entries."""
    return tuple(int(dims[d[1]]) if isinstance(d, tuple) else d for d in spec)


def need_rank(x, what):
    if x.shape is None:
        raise ValueError(f"{what} needs the rank of {x!r}, which is unknown while tracing; "
                         "give the argument a TensorSpec with a known rank")
    return len(x.shape)


def _reshape_infer(x, *dims, shape):
    return [(x.dtype, shapes.reshape(x.shape, static_shape(shape)), False)]


def _reshape_kernel(xp, x, *dims, shape):
    return xp.reshape(x, run_shape(shape, dims) if dims else shape)


register("reshape", _reshape_infer, _reshape_kernel, doc="numpy.reshape")


def reshape(x, shape):
    x = as_tensor(x)
    shape, dims = shape_arg(shape, "the new shape of reshape")
    if not dims and x.shape is not None and tuple(x.shape) == shape:
        return x
    return bind1("reshape", (x,) + dims, {"shape": shape})


def _permute_infer(x, *, axes):
    return [(x.dtype, tuple(x.shape[a] for a in axes), False)]


register("permute_dims", _permute_infer, "permute_dims", doc="numpy.transpose")


def transpose(x, axes=None):
    x = as_tensor(x)
    ndim = need_rank(x, "transpose")
    if axes is None:
        axes = tuple(range(ndim))[::-1]
    else:
        axes = tuple(shapes.normalize_axis(a, ndim) for a in static_ints(axes, "axes"))
        if sorted(axes) != list(range(ndim)):
            raise ValueError(f"transpose axes {axes} are not a permutation of {ndim} axes")
    if axes == tuple(range(ndim)):
        return x
    return bind1("permute_dims", (x,), {"axes": axes})


def _expand_infer(x, *, axis):
    out = list(x.shape)
    for a in axis:
        out.insert(a, 1)
    return [(x.dtype, tuple(out), False)]


def _expand_kernel(xp, x, *, axis):
    for a in axis:                 # ascending, so each axis index is final
        x = xp.expand_dims(x, axis=a)
    return x


register("expand_dims", _expand_infer, _expand_kernel, doc="numpy.expand_dims")


def expand_dims(x, axis):
    x = as_tensor(x)
    axes = static_ints(axis, "axis")
    ndim = need_rank(x, "expand_dims") + len(axes)
    return bind1("expand_dims", (x,), {"axis": shapes.normalize_axes(axes, ndim)})


def _squeeze_infer(x, *, axis):
    return [(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axis), False)]


def _squeeze_kernel(xp, x, *, axis):
    return xp.squeeze(x, axis=axis) if axis else x


register("squeeze", _squeeze_infer, _squeeze_kernel, doc="numpy.squeeze")


def squeeze(x, axis=None):
    x = as_tensor(x)
    ndim = need_rank(x, "squeeze")
    if axis is None:
        if None in x.shape:
            raise ValueError(f"squeeze cannot tell which axes of {x!r} have length 1 while "
                             "tracing (some lengths are unknown); pass axis= explicitly")
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = shapes.normalize_axes(static_ints(axis, "axis"), ndim)
        for a in axes:
            if x.shape[a] not in (1, None):
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one: axis {a} of {x!r}")
    return bind1("squeeze", (x,), {"axis": axes}) if axes else x


def _broadcast_to_infer(x, *dims, shape):
    shape = static_shape(shape)
    if x.shape is not None and len(x.shape) > len(shape):
        raise ValueError(f"cannot broadcast {x!r} to the smaller rank of shape {shape}")
    shapes.broadcast(x.shape, shape)   # raises when x can never broadcast to `shape`
    return [(x.dtype, shape, False)]


def _broadcast_to_kernel(xp, x, *dims, shape):
    return xp.broadcast_to(x, run_shape(shape, dims) if dims else shape)


register("broadcast_to", _broadcast_to_infer, _broadcast_to_kernel, doc="numpy.broadcast_to")


def broadcast_to(x, shape):
    shape, dims = shape_arg(shape, "the shape of broadcast_to")
    return bind1("broadcast_to", (as_tensor(x),) + dims, {"shape": shape})


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


def _sequence(arrays, what):
    if isinstance(arrays, Tensor):
        raise NotImplementedError(f"numpy.{what} of a single symbolic tensor (split along "
                                  "its first axis) is not supported; pass a list of tensors")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"need at least one array to {what}")
    tensors, _, _ = common(arrays)
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


def ravel(x):
    return reshape(x, (-1,))


# -- shape and size as values ----------------------------------------------------------------

def _shape_of_infer(x):
    return [(INT64, (None if x.shape is None else len(x.shape),), False)]


def _shape_of_kernel(xp, x):
    return xp.asarray([int(d) for d in x.shape], dtype=xp.int64)


def _size_of_infer(x):
    return [(INT64, (), False)]


def _size_of_kernel(xp, x):
    return xp.asarray(math.prod(int(d) for d in x.shape), dtype=xp.int64)


register("shape_of", _shape_of_infer, _shape_of_kernel, doc="the shape of x, as a tensor")
register("size_of", _size_of_infer, _size_of_kernel, doc="the size of x, as a tensor")


def shape_of(x):
    """The run-time shape of `x` as an int64 vector (for dims unknown while tracing)."""
    return bind1("shape_of", (as_tensor(x),))


def dim(x, axis=0):
    """The run-time length of axis `axis` of `x`: a Python int when it is known while
    tracing, else an int64 scalar tensor."""
    x = as_tensor(x)
    axis = shapes.normalize_axis(axis, need_rank(x, "its length"))
    if x.shape[axis] is not None:
        return x.shape[axis]
    return bind1("getitem", (shape_of(x),), {"index": (("i", axis),)})


def size(x, axis=None):
    """np.size: a Python int when every dimension is known while tracing, else a tensor."""
    x = as_tensor(x)
    if axis is not None:
        return dim(x, axis)
    n = shapes.size(x.shape)
    return n if n is not None else bind1("size_of", (x,))


def shape(x):
    return as_tensor(x).shape


def ndim(x):
    return as_tensor(x).ndim


# -- reordering: flip, roll --------------------------------------------------------------------

def _same_infer(x, **attrs):
    return [(x.dtype, x.shape, False)]


def _flip_kernel(xp, x, *, axis):
    return xp.flip(x, axis=axis)


def _roll_kernel(xp, x, *, shift, axis):
    return xp.roll(x, shift, axis=axis)


register("flip", _same_infer, _flip_kernel, doc="numpy.flip")
register("roll", _same_infer, _roll_kernel, doc="numpy.roll")


def flip(m, axis=None):
    x = as_tensor(m)
    axes = shapes.normalize_axes(None if axis is None else static_ints(axis, "axis"),
                                 need_rank(x, "flip"))
    return bind1("flip", (x,), {"axis": axes})


def roll(a, shift, axis=None):
    x = as_tensor(a)
    shift = static_ints(shift, "shift")
    if axis is None:
        if len(shift) != 1:
            raise ValueError("numpy.roll without an axis takes a single shift")
        return bind1("roll", (x,), {"shift": shift[0], "axis": None})
    ndim = need_rank(x, "roll")
    axes = tuple(shapes.normalize_axis(a, ndim) for a in static_ints(axis, "axis"))
    if len(shift) == 1:
        shift = shift * len(axes)
    if len(shift) != len(axes):
        raise ValueError("numpy.roll: shift and axis must have the same length")
    return bind1("roll", (x,), {"shift": shift, "axis": axes})



# -- joining and splitting, repeating ----------------------------------------------------------

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
    x = as_tensor(a)
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("numpy.repeat with per-element counts is not supported "
                                  "while tracing; pass one int")
    if axis is not None:
        axis = shapes.normalize_axis(axis, need_rank(x, "repeat"))
    return bind1("repeat", (x,), {"repeats": int(repeats), "axis": axis})


def tile(A, reps):
    x = as_tensor(A)
    need_rank(x, "tile")
    return bind1("tile", (x,), {"reps": static_ints(reps, "reps")})
