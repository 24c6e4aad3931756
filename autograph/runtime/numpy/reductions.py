"""Reductions on symbolic tensors: sum, prod, mean, max, min, any, all, argmax, argmin,
cumsum, cumprod, with NumPy's result dtypes (small ints and bools sum in 64 bits, the mean
of integers is float64). Inputs are cast so the array API kernel computes in that dtype.
var, std, count_nonzero, linalg.norm, isclose, allclose, the nan* reductions, median
and average are composed from these."""

import math

import numpy as np

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.ir.dtypes import BOOL, INT8, INT64
from autograph.runtime.numpy.array_ops import sort, where
from autograph.runtime.numpy.elementwise import as_tensor, cast, ufunc
from autograph.runtime.numpy.indexing import getitem
from autograph.runtime.ir.primitives import bind1, defvjp, nondifferentiable, register
from autograph.runtime.numpy.shape_ops import ravel, reshape, squeeze


# -- reductions ----------------------------------------------------------------------------

def _sum_dtype(dtype):
    """NumPy's accumulator for sum/prod/cumsum: small ints and bools widen to 64 bits."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return INT64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _mean_dtype(dtype):
    return dtype if dtype.kind in "fc" else dtypes.FLOAT64


def _reduce_infer(out_dtype):
    def infer(x, *, axis, keepdims, dtype=None):
        out = dtype if dtype is not None else out_dtype(x.dtype)
        if isinstance(axis, int):   # argmax/argmin take one axis
            axis = (axis,)
        return [(out, shapes.reduce(x.shape, axis, keepdims), False)]
    return infer


_REDUCTIONS = {
    "sum": _sum_dtype, "prod": _sum_dtype, "mean": _mean_dtype,
    "max": lambda d: d, "min": lambda d: d,
    "any": lambda d: BOOL, "all": lambda d: BOOL,
    "argmax": lambda d: INT64, "argmin": lambda d: INT64,
}
for _name, _rule in _REDUCTIONS.items():
    register(_name, _reduce_infer(_rule), _name, doc=f"numpy.{_name}")


def reduction(name, x, axis=None, keepdims=False, dtype=None):
    """Stage the NumPy reduction `name` (sum, prod, mean, max, min, any, all, argmax,
    argmin) of `x` over `axis` (None: all axes)."""
    x = as_tensor(x)
    if name in ("argmax", "argmin"):
        if isinstance(axis, (tuple, list)):   # (an integer is checked as NumPy does below)
            raise TypeError(f"numpy.{name}: axis must be an integer or None, not {axis!r}"
                            f"{shapes.where()}")
        ndim = None if x.shape is None else len(x.shape)
        if shapes.names_the_element(axis, ndim):   # NumPy: the flattened 0-d input
            axis = None
        axes = None if axis is None else shapes.normalize_axes(axis, ndim)
        if x.dtype == BOOL:
            x = cast(x, INT8)
        return bind1(name, (x,), {"axis": None if axes is None else axes[0],
                                  "keepdims": bool(keepdims)})
    axes = shapes.normalize_axes(axis, None if x.shape is None else len(x.shape),
                                 element_ok=name != "mean")   # NumPy's mean refuses it
    attrs = {"axis": axes, "keepdims": bool(keepdims)}
    if name in ("sum", "prod", "mean"):
        rule = _REDUCTIONS[name]
        out_dtype = dtypes.as_dtype(dtype) if dtype is not None else rule(x.dtype)
        x = cast(x, out_dtype if name != "mean" else _mean_dtype(out_dtype), weak=x.weak)
        if name != "mean":
            attrs["dtype"] = out_dtype
        result = bind1(name, (x,), attrs)
        return result if name != "mean" or result.dtype == out_dtype else cast(result, out_dtype)
    if dtype is not None:
        raise TypeError(f"numpy.{name} takes no dtype argument")
    if x.dtype == BOOL and name in ("max", "min"):   # the array API orders numbers only
        name = "any" if name == "max" else "all"
    return bind1(name, (x,), attrs)


def _cumulative_infer(x, *, axis, dtype):
    return [(dtype, x.shape, False)]


register("cumulative_sum", _cumulative_infer, "cumulative_sum", doc="numpy.cumsum")
register("cumulative_prod", _cumulative_infer, "cumulative_prod", doc="numpy.cumprod")


def cumulative(name, x, axis=None, dtype=None):
    """np.cumsum / np.cumprod: axis None runs over the flattened tensor."""
    x = as_tensor(x)
    if axis is None or shapes.names_the_element(axis, None if x.shape is None else
                                                len(x.shape)):
        x = reshape(x, (-1,))
        axis = 0
    elif x.shape is not None:
        axis = shapes.normalize_axis(axis, len(x.shape))
    out_dtype = dtypes.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)
    x = cast(x, out_dtype, weak=x.weak)
    return bind1(name, (x,), {"axis": axis, "dtype": out_dtype})


# -- statistics and comparisons built from the primitives above ------------------------------

def _count(x, axes):
    """How many elements each reduction over `axes` sees (a Python int, known shapes only)."""
    dims = x.shape if axes is None else [x.shape[a] for a in axes]
    if None in dims:
        raise NotImplementedError("numpy.var/std with ddof != 0 need the reduced dimensions "
                                  f"of {x!r} to be known while tracing")
    return math.prod(dims)


def var(a, axis=None, dtype=None, keepdims=False, ddof=0):
    """np.var: the mean of squared deviations from the mean (divided by n - ddof)."""
    x = as_tensor(a)
    mean = reduction("mean", x, axis, True, dtype)
    deviation = ufunc(np.subtract, cast(x, mean.dtype), mean)
    squared = ufunc(np.multiply, deviation, deviation)
    if not ddof:
        return reduction("mean", squared, axis, keepdims)
    n = _count(x, shapes.normalize_axes(axis, len(x.shape)))
    return ufunc(np.divide, reduction("sum", squared, axis, keepdims), n - ddof)


def std(a, axis=None, dtype=None, keepdims=False, ddof=0):
    return ufunc(np.sqrt, var(a, axis, dtype, keepdims, ddof))


def count_nonzero(a, axis=None, keepdims=False):
    return reduction("sum", cast(as_tensor(a), BOOL), axis, keepdims, INT64)


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm for the default order: the 2-norm of vectors, Frobenius of matrices."""
    x = as_tensor(x)
    if ord not in (None, "fro") and not (ord == 2 and x.shape is not None and len(x.shape) == 1):
        raise NotImplementedError(f"numpy.linalg.norm(..., ord={ord!r}) is not supported "
                                  "while tracing; only the default (2-norm / Frobenius) is")
    if x.dtype.kind not in "fc":
        x = cast(x, dtypes.FLOAT64)
    if x.dtype.kind == "c":
        x = ufunc(np.absolute, x)
    return ufunc(np.sqrt, reduction("sum", ufunc(np.multiply, x, x), axis, keepdims))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose: |a - b| <= atol + rtol * |b| where b is finite, or a == b exactly."""
    y = as_tensor(b)
    y = cast(y, dtypes.result_type((dtypes.key_of(y.dtype, y.weak), float)), weak=y.weak)
    close = ufunc(np.less_equal, ufunc(np.absolute, ufunc(np.subtract, a, y)),
                  ufunc(np.add, atol, ufunc(np.multiply, rtol, ufunc(np.absolute, y))))
    result = ufunc(np.logical_or, ufunc(np.logical_and, close, ufunc(np.isfinite, y)),
                   ufunc(np.equal, a, y))
    if equal_nan:
        both_nan = ufunc(np.logical_and, ufunc(np.isnan, a), ufunc(np.isnan, y))
        result = ufunc(np.logical_or, result, both_nan)
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return reduction("all", isclose(a, b, rtol, atol, equal_nan))


# -- NaN-ignoring reductions, median, average --------------------------------------------------

def _nan_to(x, fill):
    """x with NaNs replaced by `fill` (integers and bools have no NaNs)."""
    if x.dtype.kind not in "fc":
        return x
    return where(ufunc(np.isnan, x), fill, x)


def nansum(a, axis=None, dtype=None, keepdims=False):
    return reduction("sum", _nan_to(as_tensor(a), 0), axis, keepdims, dtype)


def nanprod(a, axis=None, dtype=None, keepdims=False):
    return reduction("prod", _nan_to(as_tensor(a), 1), axis, keepdims, dtype)


def _nan_extreme(name, a, axis, keepdims):
    x = as_tensor(a)
    if x.dtype.kind not in "fc":
        return reduction(name, x, axis, keepdims)
    nan = ufunc(np.isnan, x)
    best = reduction(name, _nan_to(x, -np.inf if name == "max" else np.inf), axis, keepdims)
    return where(reduction("all", nan, axis, keepdims), np.nan, best)   # all NaN: NaN


def nanmax(a, axis=None, keepdims=False):
    return _nan_extreme("max", a, axis, keepdims)


def nanmin(a, axis=None, keepdims=False):
    return _nan_extreme("min", a, axis, keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    x = as_tensor(a)
    if x.dtype.kind not in "fc":
        return reduction("mean", x, axis, keepdims, dtype)
    total = reduction("sum", _nan_to(x, 0), axis, keepdims, dtype)
    count = reduction("sum", ufunc(np.logical_not, ufunc(np.isnan, x)), axis, keepdims)
    return ufunc(np.divide, total, cast(count, total.dtype))


def median(a, axis=None, keepdims=False):
    """np.median: the middle of the sorted values (the mean of the two middle ones for an
    even count). The length of the reduced axis must be known while tracing."""
    x = as_tensor(a)
    ndim = len(x.shape) if x.shape is not None else None
    if axis is None:
        flat, ax = ravel(x), 0
    else:
        if ndim is None:
            raise ValueError(f"numpy.median needs the rank of {x!r}, unknown while tracing")
        from autograph.runtime.numpy import merged_axes   # (a tuple of axes only)
        axes = merged_axes.several_axes(x, axis, "numpy.median")
        if axes is not None:
            return merged_axes.over_axes(lambda t: median(t, -1), x, axes, keepdims)
        flat, ax = x, merged_axes.one_axis(x, axis, "numpy.median")
    n = flat.shape[ax] if flat.shape is not None else None
    if n is None:
        raise NotImplementedError(f"numpy.median needs the length of the reduced axis of "
                                  f"{x!r}, which is unknown while tracing")
    ordered = sort(flat, axis=ax)
    lead = (slice(None),) * ax
    middle = getitem(ordered, lead + (slice((n - 1) // 2, n // 2 + 1),))
    out = reduction("mean", middle, ax, keepdims=True)
    if keepdims:
        return reshape(out, (1,) * ndim) if axis is None else out
    return squeeze(out, ax)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """np.average: the mean, or with `weights` sum(a * w) / sum(w) along `axis`."""
    if returned:
        raise NotImplementedError("numpy.average(..., returned=True) is not supported "
                                  "while tracing")
    if weights is None:
        return reduction("mean", a, axis, keepdims)
    x, w = as_tensor(a), as_tensor(weights)
    if x.shape != w.shape:
        if axis is None or w.shape is None or len(w.shape) != 1:
            raise TypeError("numpy.average: weights of a different shape need a 1-D weights "
                            "array and an axis")
        ax = shapes.normalize_axis(axis, len(x.shape))
        w = reshape(w, tuple(-1 if i == ax else 1 for i in range(len(x.shape))))
    total = reduction("sum", ufunc(np.multiply, x, w), axis, keepdims)
    return ufunc(np.divide, total, reduction("sum", w, axis, keepdims))


# -- reverse-mode rules ------------------------------------------------------------------------

def _sum_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, expand_reduced, differentiable, ins
    x = ins(node)[0]
    if not differentiable(x):
        return [None]
    return [cast_like(expand_reduced(cts[0], x, node.attrs["axis"], node.attrs["keepdims"]), x)]


def _mean_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import count, differentiable, ins
    x = ins(node)[0]
    if not differentiable(x):
        return [None]
    n = count(x, node.attrs["axis"])
    g = ufunc(np.divide, cts[0], cast(n, cts[0].dtype) if not isinstance(n, int) else n)
    return _sum_vjp([g], node)


def _extreme_vjp(cts, node):
    """max/min: the cotangent is shared equally by the elements that attain the extreme."""
    from autograph.runtime.numpy.adjoint import expand_reduced, differentiable, ins
    x = ins(node)[0]
    if not differentiable(x):
        return [None]
    axis, keepdims = node.attrs["axis"], node.attrs["keepdims"]
    y = expand_reduced(node.outputs[0], x, axis, keepdims)
    hit = cast(ufunc(np.equal, x.value, y), x.dtype)
    ties = reduction("sum", hit, axis, keepdims=True)
    g = expand_reduced(cts[0], x, axis, keepdims)
    return [ufunc(np.divide, ufunc(np.multiply, g, hit),
                  expand_reduced(ties, x, axis, True))]


def _others_product(x, axis):
    """The product of every element of x along `axis` but the one in place (exclusive
    cumulative products from both ends: exact where x holds zeros)."""
    ones = getitem(ufunc(np.multiply, x, 0.0), _along(x, axis, slice(0, 1)))
    ones = ufunc(np.add, ones, 1.0)
    from autograph.runtime.numpy.joins import concatenate
    left = concatenate([ones, getitem(cumulative("cumulative_prod", x, axis),
                                      _along(x, axis, slice(None, -1)))], axis=axis)
    flipped = bind1("flip", (x,), {"axis": (axis,)})
    right = concatenate([ones, getitem(cumulative("cumulative_prod", flipped, axis),
                                       _along(x, axis, slice(None, -1)))], axis=axis)
    return ufunc(np.multiply, left, bind1("flip", (right,), {"axis": (axis,)}))


def _along(x, axis, piece):
    return (slice(None),) * axis + (piece,)


def _prod_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import (
        cast_like, dims, expand_reduced, differentiable, ins)
    from autograph.runtime.numpy.shape_ops import transpose
    x = ins(node)[0]
    if not differentiable(x):
        return [None]
    axis, keepdims = node.attrs["axis"], node.attrs["keepdims"]
    ndim = len(x.shape)
    axes = tuple(range(ndim)) if axis is None else tuple(axis)
    g = expand_reduced(cts[0], x, axis, keepdims)
    if not axes:
        return [cast_like(g, x)]
    # the reduced axes moved last and flattened into one: others' products along it
    keep = tuple(a for a in range(ndim) if a not in axes)
    perm = keep + axes
    moved = transpose(x.value, perm)
    shape = dims(x)
    flat = reshape(moved, [shape[a] for a in keep] + [-1])
    others = _others_product(flat, len(keep))
    others = reshape(others, [shape[a] for a in perm])
    others = transpose(others, tuple(np.argsort(perm)))
    return [cast_like(ufunc(np.multiply, g, others), x)]


def _cumsum_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, differentiable, ins
    x, axis = ins(node)[0], node.attrs["axis"]
    if not differentiable(x):
        return [None]
    flipped = bind1("flip", (cts[0],), {"axis": (axis,)})
    total = bind1("cumulative_sum", (flipped,), {"axis": axis, "dtype": cts[0].dtype})
    return [cast_like(bind1("flip", (total,), {"axis": (axis,)}), x)]


def _cumprod_vjp(cts, node):
    """d y_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, without dividing by x (exact,
    to any order, where x holds zeros): the cotangent is L_i * R_i, with L the exclusive
    cumulative product and R_i = ct_i + x_{i+1} R_{i+1} a reversed linear recurrence,
    scanned in log2(n) doubling steps (an unknown length falls back to dividing by x)."""
    from autograph.runtime.numpy.adjoint import cast_like, differentiable, ins
    from autograph.runtime.numpy.joins import concatenate
    x, axis = ins(node)[0], node.attrs["axis"]
    if not differentiable(x):
        return [None]
    xv, ct, n = x.value, cts[0], x.shape[axis]

    def flip(t):
        return bind1("flip", (t,), {"axis": (axis,)})

    if n is None:
        gy = ufunc(np.multiply, ct, node.outputs[0])
        total = bind1("cumulative_sum", (flip(gy),), {"axis": axis, "dtype": gy.dtype})
        return [cast_like(ufunc(np.divide, flip(total), xv), x)]
    if n == 0:
        return [cast_like(ct, x)]
    head, tail = _along(xv, axis, slice(0, 1)), _along(xv, axis, slice(None, -1))
    one = ufunc(np.add, ufunc(np.multiply, getitem(xv, head), 0), 1)
    exclusive = concatenate([one, getitem(node.outputs[0], tail)], axis=axis)
    # S = flip(R): S_m = b_m + a_m S_{m-1}, b = flip(ct), a_m = x_{n-m} (a_0 unused)
    b = flip(ct)
    a = concatenate([one, getitem(flip(xv), tail)], axis=axis)
    shift = 1
    while shift < n:   # after the step, each S_m has folded in the 2*shift terms up to m
        early, late = _along(xv, axis, slice(0, n - shift)), _along(xv, axis, slice(shift, n))
        keep = _along(xv, axis, slice(0, shift))
        a_late = getitem(a, late)
        b = concatenate([getitem(b, keep), ufunc(np.add, getitem(b, late),
                                                 ufunc(np.multiply, a_late, getitem(b, early)))],
                        axis=axis)
        a = concatenate([getitem(a, keep), ufunc(np.multiply, a_late, getitem(a, early))],
                        axis=axis)
        shift *= 2
    return [cast_like(ufunc(np.multiply, exclusive, flip(b)), x)]


defvjp("sum", _sum_vjp)
defvjp("mean", _mean_vjp)
defvjp("prod", _prod_vjp)
defvjp("max", _extreme_vjp)
defvjp("min", _extreme_vjp)
defvjp("cumulative_sum", _cumsum_vjp)
defvjp("cumulative_prod", _cumprod_vjp)
nondifferentiable("any", "all", "argmax", "argmin")
