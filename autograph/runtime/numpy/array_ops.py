"""Array creation (zeros, ones, full, arange, *_like), linear algebra (matmul, dot,
tensordot, outer), selection (where, clip, round), sorting and differences on symbolic
tensors."""

import numpy as np

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.ir.dtypes import BOOL
from autograph.runtime.numpy.elementwise import as_tensor, cast, common, operand_key, ufunc
from autograph.runtime.ir.primitives import bind1, defvjp, nondifferentiable, register
from autograph.runtime.ir.tensor import Tensor


# shape_ops and indexing (25 KB of source) are imported when a function here first needs
# them: registering this file's primitives does not, and a saved model that only multiplies
# matrices (an MLP) is then loaded without compiling them where there is no bytecode. Each
# name below is a stand-in whose first call imports its module and puts the real function
# in its place.
def _later(name):
    def first(*args, **kwargs):
        if name == "getitem":
            from autograph.runtime.numpy import indexing as module
        else:
            from autograph.runtime.numpy import shape_ops as module
        real = globals()[name] = getattr(module, name)
        return real(*args, **kwargs)
    first.__name__ = first.__qualname__ = name
    return first


(getitem, broadcast_to, need_rank, ravel, reshape, run_shape, shape_arg, static_ints,
 static_shape, transpose) = map(_later, (
     "getitem", "broadcast_to", "need_rank", "ravel", "reshape", "run_shape", "shape_arg",
     "static_ints", "static_shape", "transpose"))


# -- creation: zeros, ones, full, arange and the *_like functions ----------------------------

def _fill_infer(*dims, shape, dtype, fill_value=None):
    return [(dtype, static_shape(shape), False)]


def _zeros_kernel(xp, *dims, shape, dtype):
    return xp.zeros(run_shape(shape, dims), dtype=dtype)


def _ones_kernel(xp, *dims, shape, dtype):
    return xp.ones(run_shape(shape, dims), dtype=dtype)


def _full_kernel(xp, *dims, shape, dtype, fill_value):
    return xp.full(run_shape(shape, dims), fill_value, dtype=dtype)


register("zeros", _fill_infer, _zeros_kernel, doc="numpy.zeros")
register("ones", _fill_infer, _ones_kernel, doc="numpy.ones")
register("full", _fill_infer, _full_kernel, doc="numpy.full")


def _fill_scalar(value, dtype):
    """A fill value as a Python scalar of `dtype`'s kind (NumPy casts it the same way)."""
    return np.asarray(value).astype(dtype).item()


def _shape_vector(shape):
    """counted_shapes when `shape` is one 1-D integer tensor (a rank known only when the
    graph runs), else None. (counted_shapes builds on this module: a lazy import.)"""
    if isinstance(shape, Tensor) and shape.shape is not None and len(shape.shape) == 1:
        from autograph.runtime.numpy import counted_shapes
        return counted_shapes
    return None


def zeros(shape, dtype=float):
    """np.zeros; lengths may be integer scalar tensors (then unknown while tracing), or the
    whole shape one 1-D integer tensor (then the rank may be unknown too)."""
    if _shape_vector(shape):
        return _shape_vector(shape).full_of_shape(shape, 0, dtype)
    shape, dims = shape_arg(shape, "the shape of zeros")
    return bind1("zeros", dims, {"shape": shape, "dtype": np.dtype(dtype)})


def ones(shape, dtype=float):
    if _shape_vector(shape):
        return _shape_vector(shape).full_of_shape(shape, 1, dtype)
    shape, dims = shape_arg(shape, "the shape of ones")
    return bind1("ones", dims, {"shape": shape, "dtype": np.dtype(dtype)})


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tensor):
        dtype = fill_value.dtype if dtype is None else np.dtype(dtype)
        return broadcast_to(cast(fill_value, dtype), shape)
    dtype = np.asarray(fill_value).dtype if dtype is None else np.dtype(dtype)
    if _shape_vector(shape):
        return _shape_vector(shape).full_of_shape(shape, fill_value, dtype)
    shape, dims = shape_arg(shape, "the shape of full")
    return bind1("full", dims, {"shape": shape, "dtype": dtype,
                                "fill_value": _fill_scalar(fill_value, dtype)})


def _like_infer(x, *, dtype=None, fill_value=None):
    return [(x.dtype if dtype is None else dtype, x.shape, False)]


def _full_like_kernel(xp, x, *, fill_value, dtype=None):
    return xp.full_like(x, fill_value, dtype=dtype)


register("zeros_like", _like_infer, "zeros_like", doc="numpy.zeros_like")
register("ones_like", _like_infer, "ones_like", doc="numpy.ones_like")
register("full_like", _like_infer, _full_like_kernel, doc="numpy.full_like")


def _like(name, x, dtype, shape):
    if shape is not None:
        raise NotImplementedError(f"numpy.{name}(..., shape=...) is not supported while "
                                  f"tracing; use numpy.{name.replace('_like', '')}(shape)")
    x = as_tensor(x)
    return x, ({} if dtype is None else {"dtype": np.dtype(dtype)})


def zeros_like(x, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("zeros_like", x, dtype, shape)
    return bind1("zeros_like", (x,), attrs)


def ones_like(x, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("ones_like", x, dtype, shape)
    return bind1("ones_like", (x,), attrs)


def full_like(x, fill_value, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("full_like", x, dtype, shape)
    out_dtype = attrs.get("dtype", x.dtype)
    if isinstance(fill_value, Tensor):
        return cast(fill_value, out_dtype) + zeros_like(x, dtype=out_dtype)
    attrs["fill_value"] = _fill_scalar(fill_value, out_dtype)
    return bind1("full_like", (x,), attrs)


def _arange_infer(*bounds, dtype, length=None):
    return [(dtype, (length,), False)]


def _arange_kernel(xp, start, stop, step, *, dtype, length=None):
    to_py = int if xp.isdtype(dtype, "integral") else float
    return xp.arange(to_py(start), to_py(stop), to_py(step), dtype=dtype)


register("arange", _arange_infer, _arange_kernel, doc="numpy.arange")


_ONE_BOUND = object()   # arange(n): the default stop, told apart from an explicit None


def arange(start, stop=_ONE_BOUND, step=1, dtype=None):
    """np.arange; the bounds may be symbolic (then the length is unknown while tracing).

    A None bound is refused, never read as NumPy reads a None stop (the one-argument
    form: np.arange(0, None, 2) is empty): while tracing it is an unknown dimension,
    `x.shape[0]` (none_operands)."""
    if stop is _ONE_BOUND:
        start, stop = 0, start
    bounds = (start, stop, step)
    if any(b is None for b in bounds):
        from autograph.runtime.numpy import none_operands
        raise TypeError(none_operands.message(
            "numpy.arange", ("start", "stop", "step")[[b is None for b in bounds].index(True)],
            None))
    if dtype is None:
        dtype = dtypes.result_type(tuple(dtypes.default_dtype(operand_key(b)[0])
                                         for b in bounds))
    dtype = np.dtype(dtype)
    length = None
    if not any(isinstance(b, Tensor) for b in bounds):
        length = len(np.arange(start, stop, step, dtype=dtype))
    return bind1("arange", [as_tensor(b, dtype) for b in bounds],
                 {"dtype": dtype, "length": length})


# -- linear algebra --------------------------------------------------------------------------

def _matmul_infer(a, b):
    return [(a.dtype, shapes.matmul(a.shape, b.shape), False)]


def _tensordot_infer(a, b, *, axes):
    ax, bx = axes
    for i, j in zip(ax, bx):
        if a.shape[i] is not None and b.shape[j] is not None and a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of {a!r} and axis {j} of {b!r} differ")
    shape = tuple(d for i, d in enumerate(a.shape) if i not in ax) + \
        tuple(d for j, d in enumerate(b.shape) if j not in bx)
    return [(a.dtype, shape, False)]


def _tensordot_kernel(xp, a, b, *, axes):
    return xp.tensordot(a, b, axes=axes)


register("matmul", _matmul_infer, "matmul", doc="numpy.matmul (the @ operator)")
register("tensordot", _tensordot_infer, _tensordot_kernel, doc="numpy.tensordot")


def matmul(a, b):
    (a, b), dtype, _ = common((a, b))
    if dtype == BOOL:   # the array API multiplies numbers: count the true products
        counts = bind1("matmul", (cast(a, dtypes.INT64), cast(b, dtypes.INT64)))
        return ufunc(np.not_equal, counts, 0)
    return bind1("matmul", (a, b))


def tensordot(a, b, axes=2):
    (a, b), _, _ = common((a, b))
    na, nb = need_rank(a, "tensordot"), need_rank(b, "tensordot")
    if isinstance(axes, int):
        ax, bx = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ax, bx = (static_ints(side, "tensordot axes") for side in axes)
    ax = tuple(shapes.normalize_axis(i, na) for i in ax)
    bx = tuple(shapes.normalize_axis(j, nb) for j in bx)
    return bind1("tensordot", (a, b), {"axes": (ax, bx)})


def _strong(x):
    """np.dot, inner and outer make arrays of Python scalars (no NEP 50 weak promotion)."""
    return np.asarray(x) if type(x) in (bool, int, float, complex) else x


def dot(a, b):
    """np.dot: a product with a scalar, matmul for 1-D/2-D operands, and for N-D the sum
    over the last axis of `a` and the second-to-last of `b`."""
    a, b = _strong(a), _strong(b)
    ta, tb = as_tensor(a), as_tensor(b)
    na, nb = need_rank(ta, "dot"), need_rank(tb, "dot")
    if na == 0 or nb == 0:
        return ufunc(np.multiply, a, b)
    if nb == 1 or (na <= 2 and nb <= 2):
        return matmul(ta, tb)
    return tensordot(ta, tb, ((na - 1,), (nb - 2,)))


# -- selection: where, clip, round ----------------------------------------------------------

def _where_infer(c, x, y):
    return [(x.dtype, shapes.broadcast(c.shape, x.shape, y.shape), False)]


register("where", _where_infer, "where", doc="numpy.where")


def where(condition, x=None, y=None):
    if x is None and y is None:
        # np.nonzero(condition): its length is counted when the graph runs (sorting sits
        # above this module in the family: a lazy import inside runtime.numpy)
        from autograph.runtime.numpy.counted_shapes import where_indices
        return where_indices(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    (x, y), _, _ = common((x, y))
    return bind1("where", (as_tensor(condition, BOOL), x, y))


def _clip_infer(x, *bounds, which):
    return [(x.dtype, shapes.broadcast(x.shape, *(b.shape for b in bounds)),
             False)]


def _clip_kernel(xp, x, *bounds, which):
    # np.clip is minimum(maximum(x, lo), hi): hi wins when lo > hi, NaNs propagate
    bounds = list(bounds)
    if "min" in which:
        x = xp.maximum(x, bounds.pop(0))
    if "max" in which:
        x = xp.minimum(x, bounds.pop(0))
    return x


register("clip", _clip_infer, _clip_kernel, doc="numpy.clip")


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("numpy.clip needs a lower bound, an upper bound, or both")
    which = ("min",) * (lo is not None) + ("max",) * (hi is not None)
    tensors, _, _ = common([a] + [b for b in (lo, hi) if b is not None])
    return bind1("clip", tensors, {"which": which})


def _round_infer(x, *, decimals):
    return [(x.dtype, x.shape, False)]


def _round_kernel(xp, x, *, decimals):
    # NumPy's recipe: scale by a power of ten, round half to even, scale back
    if decimals >= 0:
        scale = 10.0 ** decimals
        return xp.round(x * scale) / scale
    scale = 10.0 ** -decimals
    return xp.round(x / scale) * scale


register("round_decimals", _round_infer, _round_kernel, doc="numpy.round(x, decimals)")


def round_(a, decimals=0):
    x = as_tensor(a)
    decimals = int(decimals)
    if decimals == 0:
        return ufunc(np.rint, x, strong=True)
    if x.dtype.kind in "biu":
        if decimals > 0:
            return x
        raise NotImplementedError("numpy.round of integers to negative decimals is not "
                                  "supported while tracing")
    return bind1("round_decimals", (x,), {"decimals": decimals})


# -- sorting, differences, outer product ------------------------------------------------

def _sort_infer(x, *, axis):
    return [(x.dtype, x.shape, False)]


def _argsort_infer(x, *, axis):
    return [(np.dtype(np.int64), x.shape, False)]


def _sort_kernel(xp, x, *, axis):
    return xp.sort(x, axis=axis, stable=True)


def _argsort_kernel(xp, x, *, axis):
    return xp.argsort(x, axis=axis, stable=True)


register("sort", _sort_infer, _sort_kernel, doc="numpy.sort (stable)")
register("argsort", _argsort_infer, _argsort_kernel, doc="numpy.argsort (stable)")


def _rank(x):
    return None if x.shape is None else len(x.shape)


def _sorting(name, a, axis):
    x = as_tensor(a)
    # NumPy's argsort takes axis 0 of a 0-d input as the flattened input; sort refuses it
    if axis is None or (name == "argsort" and shapes.names_the_element(axis, _rank(x))):
        x, axis = reshape(x, (-1,)), 0
    else:
        axis = shapes.normalize_axis(axis, need_rank(x, name))
    if x.dtype == BOOL:   # the array API sorts numbers
        out = bind1(name, (cast(x, np.dtype(np.int8)),), {"axis": axis})
        return cast(out, BOOL) if name == "sort" else out
    return bind1(name, (x,), {"axis": axis})


def sort(a, axis=-1):
    return _sorting("sort", a, axis)


def argsort(a, axis=-1):
    return _sorting("argsort", a, axis)


def outer(a, b):
    """np.outer: every element of `a` (flattened) times every element of `b`."""
    return ufunc(np.multiply, getitem(ravel(_strong(a)), (slice(None), None)),
                 getitem(ravel(_strong(b)), (None, slice(None))))


def diff(a, n=1, axis=-1):
    """np.diff: differences of neighbours along `axis`, `n` times (not_equal for bools)."""
    x = as_tensor(a)
    axis = shapes.normalize_axis(axis, need_rank(x, "diff"))
    lead = (slice(None),) * axis
    for _ in range(n):
        later, earlier = getitem(x, lead + (slice(1, None),)), getitem(x, lead + (slice(None, -1),))
        x = ufunc(np.not_equal if x.dtype == np.bool_ else np.subtract, later, earlier)
    return x


def inner(a, b):
    """np.inner: the sum over the last axes of both (a product when either is 0-d)."""
    a, b = _strong(a), _strong(b)
    ta, tb = as_tensor(a), as_tensor(b)
    if need_rank(ta, "inner") == 0 or need_rank(tb, "inner") == 0:
        return ufunc(np.multiply, a, b)
    return tensordot(ta, tb, ((len(ta.shape) - 1,), (len(tb.shape) - 1,)))


# -- complex parts -------------------------------------------------------------------------------

def _part_infer(x):
    return [(np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype, x.shape, False)]


register("real", _part_infer, "real", doc="numpy.real of a complex tensor")
register("imag", _part_infer, "imag", doc="numpy.imag of a complex tensor")


def real(val):
    x = as_tensor(val)
    return bind1("real", (x,)) if x.dtype.kind == "c" else x


def imag(val):
    x = as_tensor(val)
    return bind1("imag", (x,)) if x.dtype.kind == "c" else zeros_like(x)


# -- reverse-mode rules ------------------------------------------------------------------------

def _where_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import fit, ins, needs
    g, (c, x, y) = cts[0], ins(node)
    zero = zeros_like(g)
    cond = c.value
    return [None,
            fit(bind1("where", (cond, g, zero)), x, (c, y)) if needs(node, 1) else None,
            fit(bind1("where", (cond, zero, g)), y, (c, x)) if needs(node, 2) else None]


def _clip_vjp(cts, node):
    """np.clip is minimum(maximum(x, lo), hi): the cotangent goes where the value came from."""
    from autograph.runtime.numpy.adjoint import fit, ins
    g, (rx, *bounds), which = cts[0], ins(node), node.attrs["which"]
    x = rx.value
    lo = bounds[0].value if "min" in which else None
    hi = bounds[-1].value if "max" in which else None
    zero = zeros_like(g)
    low = ufunc(np.maximum, x, lo) if lo is not None else x
    keep = ufunc(np.less_equal, low, hi) if hi is not None else None

    def sel(mask):
        mask = mask if keep is None else ufunc(np.logical_and, mask, keep)
        return where(mask, g, zero)
    out = [fit(sel(ufunc(np.greater_equal, x, lo)) if lo is not None else
               (where(keep, g, zero) if keep is not None else g), rx, bounds)]
    if lo is not None:
        out.append(fit(sel(ufunc(np.less, x, lo)), bounds[0], [rx] + bounds[1:]))
    if hi is not None:
        out.append(fit(where(keep, zero, g), bounds[-1], [rx] + bounds[:-1]))
    return out


def _swap(t):
    n = len(t.shape)
    return transpose(t, tuple(range(n - 2)) + (n - 1, n - 2))


def _promoted(x, shape):
    """A vector operand as the matrix matmul makes of it; an operand the rule does not read
    (a Ref: static dtype and shape only) stays a Ref, so that no value is read or staged."""
    from autograph.runtime.numpy.adjoint import Ref
    if not isinstance(x, Ref):
        return reshape(x, shape)
    if x.shape[0] is None:
        return reshape(x.value, shape)
    r = Ref(x, x._lazy, x._i)
    r.shape = (1, x.shape[0]) if shape[0] == 1 else (x.shape[0], 1)
    return r


def _matmul_vjp(cts, node):
    """Vectors are promoted to matrices (a row for `a`, a column for `b`) as matmul does,
    the products transposed, broadcast batch axes summed, and the promotion undone."""
    from autograph.runtime.numpy.adjoint import fit, ins, needs
    g, (ra, rb) = cts[0], ins(node)
    if ra.dtype.kind not in "fc":
        return [None, None]
    a = ra.value if needs(node, 1) else ra
    b = rb.value if needs(node, 0) else rb
    a2 = _promoted(a, (1, -1)) if len(a.shape) == 1 else a
    b2 = _promoted(b, (-1, 1)) if len(b.shape) == 1 else b
    if len(a.shape) == 1 and len(b.shape) == 1:
        g2 = reshape(g, (1, 1))
    elif len(a.shape) == 1:
        g2 = getitem(g, (Ellipsis, None, slice(None)))
    elif len(b.shape) == 1:
        g2 = getitem(g, (Ellipsis, slice(None), None))
    else:
        g2 = g
    ga = gb = None
    if needs(node, 0):
        ga = fit(bind1("matmul", (g2, _swap(b2))), a2, (b2,))
        ga = reshape(ga, (-1,)) if len(a.shape) == 1 else ga
    if needs(node, 1):
        gb = fit(bind1("matmul", (_swap(a2), g2)), b2, (a2,))
        gb = reshape(gb, (-1,)) if len(b.shape) == 1 else gb
    return [ga, gb]


def _tensordot_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, ins
    g, (a, b) = cts[0], ins(node)
    if a.dtype.kind not in "fc":
        return [None, None]
    ax, bx = node.attrs["axes"]
    na, nb = len(a.shape), len(b.shape)
    a_free = tuple(i for i in range(na) if i not in ax)
    b_free = tuple(j for j in range(nb) if j not in bx)
    ka = len(a_free)
    g_a = tuple(range(ka))                       # g's axes from a's free axes
    g_b = tuple(range(ka, ka + len(b_free)))     # ... and from b's
    # g . b over b's free axes: a_free + (bx order) -> a's axis order
    ga = bind1("tensordot", (g, b.value), {"axes": (g_b, b_free)})
    # tensordot keeps b's remaining axes in ascending order: a's paired axes in that order
    ga = transpose(ga, tuple(np.argsort(a_free + tuple(ax[bx.index(j)] for j in sorted(bx)))))
    gb = bind1("tensordot", (a.value, g), {"axes": (a_free, g_a)})
    gb = transpose(gb, tuple(np.argsort(tuple(bx[ax.index(i)] for i in sorted(ax)) + b_free)))
    return [cast_like(ga, a), cast_like(gb, b)]


def _sort_vjp(cts, node):
    """The cotangent of sorted values goes back through the inverse permutation."""
    from autograph.runtime.numpy.sorting import take_along_axis
    x, axis = node.inputs[0], node.attrs["axis"]
    order = bind1("argsort", (x,), {"axis": axis})   # the sort's input: read
    inverse = bind1("argsort", (order,), {"axis": axis})
    return [take_along_axis(cts[0], inverse, axis)]


def _real_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, ins
    return [cast_like(cts[0], ins(node)[0])]


def _imag_vjp(cts, node):
    x = getattr(node, "node", node).inputs[0]   # Im(dz) = Re(-i dz): the cotangent -i ct
    return [ufunc(np.multiply, cast(cts[0], x.dtype), np.asarray(-1j, x.dtype))]


defvjp("where", _where_vjp)
defvjp("clip", _clip_vjp)
defvjp("matmul", _matmul_vjp)
defvjp("tensordot", _tensordot_vjp)
defvjp("sort", _sort_vjp)
defvjp("real", _real_vjp)
defvjp("imag", _imag_vjp)
# made from shapes and fill values, or piecewise constant: zero cotangents
nondifferentiable("zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange",
                  "argsort", "round_decimals")
