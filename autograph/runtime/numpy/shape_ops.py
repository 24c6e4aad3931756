"""Shape manipulation on symbolic tensors: reshape, transpose, expand_dims, squeeze,
broadcast_to, flip, roll, and shapes/sizes as values (static when known while tracing,
else computed by a node when the graph runs). Shape arguments may hold integer scalar
tensors (`shape_arg`); joining and splitting live in joins.py."""

import math

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.dtypes import INT64
from autograph.runtime.numpy.elementwise import as_tensor, describe
from autograph.runtime.ir.primitives import bind1, defvjp, nondifferentiable, register
from autograph.runtime.ir.tensor import Tensor


# -- shapes: reshape, transpose, expand_dims, squeeze, broadcast_to --------------------

def static_ints(value, what):
    """`value` (an int or a sequence of ints) as a tuple of Python ints, or a clear error
    when it holds symbolic tensors (shapes must be known while tracing)."""
    items = (value,) if value is None or isinstance(value, (int, np.integer, Tensor)) \
        else tuple(value)   # (a None: x.shape[0] of an unknown dimension, refused below)
    if any(isinstance(d, Tensor) for d in items):
        raise NotImplementedError(
            f"{what} must be made of Python ints while tracing, got {describe(items)}")
    if any(d is None for d in items):
        raise ValueError(f"{what} has an entry None, {items!r}: x.shape gives None for a "
                         "dimension unknown while tracing. Use -1 for one inferred "
                         "dimension of a reshape, len(x) inside an autograph-converted "
                         "function (a length computed when the graph runs), or a TensorSpec "
                         f"whose dimension is known{shapes.where()}")
    return tuple(int(d) for d in items)


def shape_arg(value, what):
    """A shape argument whose entries may be integer scalar tensors (lengths known only when
    the graph runs): returns (spec, tensors), where `spec` holds the Python ints and, for
    the j-th tensor, the marker ("d", j). The tensors become node inputs; kernels read them
    back with `run_shape`."""
    items = (value,) if value is None or isinstance(value, (int, np.integer, Tensor)) \
        else tuple(value)   # (a None: x.shape[0] of an unknown dimension, refused below)
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
    if x.shape is None:
        return _expand_unknown_rank(x, axes)
    ndim = need_rank(x, "expand_dims") + len(axes)
    return bind1("expand_dims", (x,), {"axis": shapes.normalize_axes(axes, ndim)})


def _expand_unknown_rank(x, axes):
    """expand_dims of a tensor whose rank is unknown while tracing (a loop variable whose
    rank changes): each new axis counted from the front (axis >= 0) or the back (< 0) is an
    index with None, which needs no rank. Mixed signs need the rank."""
    from autograph.runtime.numpy.indexing import getitem   # indexing imports this module
    if all(a >= 0 for a in axes):
        for a in sorted(axes):
            x = getitem(x, (slice(None),) * a + (None,))
        return x
    if all(a < 0 for a in axes):
        for a in sorted(axes, reverse=True):
            x = getitem(x, (Ellipsis, None) + (slice(None),) * (-a - 1))
        return x
    need_rank(x, "expand_dims with axes counted from both ends")


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
        # NumPy: axis 0 of a 0-d input is no axis; (0,) is out of range
        axes = () if shapes.names_the_element(axis, ndim) else \
            shapes.normalize_axes(static_ints(axis, "axis"), ndim)
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


# -- sum_to_shape: the transpose of broadcasting (what gradient rules use) ----------------------

def _sum_to_infer(x, *dims, shape):
    return [(x.dtype, static_shape(shape), False)]


def _sum_to_kernel(xp, x, *dims, shape):
    target = run_shape(shape, dims) if dims else shape
    lead = x.ndim - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                      if d == 1 and x.shape[lead + i] != 1)
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    return xp.reshape(x, target)


register("sum_to_shape", _sum_to_infer, _sum_to_kernel,
         doc="x summed over the axes along which `shape` broadcasts to x's shape")


# -- reverse-mode rules ------------------------------------------------------------------------

def _reshape_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import dims, ins
    return [reshape(cts[0], dims(ins(node)[0]))] + [None] * (len(node.inputs) - 1)


def _permute_vjp(cts, node):
    axes = node.attrs["axes"]
    return [transpose(cts[0], tuple(np.argsort(axes)))]


def _broadcast_to_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import fit, ins
    return [fit(cts[0], ins(node)[0])] + [None] * (len(node.inputs) - 1)


def _sum_to_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import dims, ins
    return [broadcast_to(cts[0], dims(ins(node)[0]))] + [None] * (len(node.inputs) - 1)


def _roll_vjp(cts, node):
    shift, axis = node.attrs["shift"], node.attrs["axis"]
    back = -shift if axis is None else tuple(-s for s in shift)
    return [bind1("roll", (cts[0],), {"shift": back, "axis": axis})]


defvjp("reshape", _reshape_vjp)
defvjp("permute_dims", _permute_vjp)
defvjp("expand_dims", lambda cts, node: [bind1("squeeze", (cts[0],),
                                                 {"axis": node.attrs["axis"]})])
defvjp("squeeze", lambda cts, node: [bind1("expand_dims", (cts[0],),
                                             {"axis": node.attrs["axis"]})])
defvjp("broadcast_to", _broadcast_to_vjp)
defvjp("sum_to_shape", _sum_to_vjp)
defvjp("flip", lambda cts, node: [bind1("flip", (cts[0],), node.attrs)])
defvjp("roll", _roll_vjp)
nondifferentiable("shape_of", "size_of")
