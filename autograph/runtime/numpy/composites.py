"""Smaller NumPy functions composed from the primitives of the other families: axis
moves (swapaxes, rollaxis, rot90, fliplr/flipud), joins (column_stack, dstack, append,
hsplit/vsplit/dsplit), NaN-aware statistics (nanstd, nanvar, nancumsum, nancumprod,
nanargmax, nanargmin), cov/corrcoef, digitize, ediff1d, trapezoid, select, diagflat,
vander, sinc, angle, isposinf/isneginf/isreal/iscomplex, fix, compress/extract
(length unknown while tracing), cumulative_sum/prod (NumPy 2.1 names)."""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.dtypes import BOOL, FLOAT64, INT64
from autograph.runtime.numpy.array_ops import clip, full_like, imag, real, where
from autograph.runtime.numpy.elementwise import as_tensor, cast, ufunc
from autograph.runtime.numpy.indexing import getitem
from autograph.runtime.numpy.joins import atleast_nd, concatenate, split, stack
from autograph.runtime.numpy.linalg import diag, moveaxis
from autograph.runtime.numpy.reductions import (
    _nan_to, cumulative, nanmean, reduction)
from autograph.runtime.numpy.shape_ops import flip, need_rank, ravel, reshape, transpose
from autograph.runtime.numpy.sorting import searchsorted


def swapaxes(a, axis1, axis2):
    x = as_tensor(a)
    ndim = need_rank(x, "numpy.swapaxes")
    i, j = shapes.normalize_axis(axis1, ndim), shapes.normalize_axis(axis2, ndim)
    order = list(range(ndim))
    order[i], order[j] = order[j], order[i]
    return transpose(x, tuple(order))


def rollaxis(a, axis, start=0):
    x = as_tensor(a)
    ndim = need_rank(x, "numpy.rollaxis")
    axis = shapes.normalize_axis(axis, ndim)
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    x = as_tensor(m)
    ndim = need_rank(x, "numpy.rot90")
    a0, a1 = (shapes.normalize_axis(a, ndim) for a in axes)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)


def column_stack(tup):
    cols = []
    for a in tup:
        t = as_tensor(a)
        cols.append(reshape(t, (-1, 1)) if need_rank(t, "numpy.column_stack") < 2 else t)
    return concatenate(cols, 1)


def dstack(tup):
    return concatenate([atleast_nd(as_tensor(a), 3) if need_rank(as_tensor(a), "dstack") != 2
                        else reshape(as_tensor(a), tuple(as_tensor(a).shape) + (1,))
                        for a in tup], 2)


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(as_tensor(arr)), ravel(as_tensor(values))], 0)
    return concatenate([arr, values], axis)


def _split_along(axis, what):
    def fn(ary, indices_or_sections):
        x = as_tensor(ary)
        ax = axis if not (axis == 1 and need_rank(x, what) == 1) else 0
        return split(x, indices_or_sections, ax)
    fn.__name__ = what
    return fn


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    if out is not None or where is not None or mean is not None:
        raise NotImplementedError("numpy.nanvar: out=, where= and mean= are not supported "
                                  "while tracing")
    ddof = ddof if correction is None else correction
    x = as_tensor(a)
    if x.dtype.kind not in "fc":
        from autograph.runtime.numpy.reductions import var
        return var(x, axis, dtype, keepdims, ddof)
    m = nanmean(x, axis, dtype, True)
    d = ufunc(np.subtract, cast(x, m.dtype), m)
    sq = ufunc(np.multiply, d, ufunc(np.conjugate, d)) if d.dtype.kind == "c" else \
        ufunc(np.multiply, d, d)
    if sq.dtype.kind == "c":
        sq = real(sq)
    total = reduction("sum", _nan_to(sq, 0), axis, keepdims)
    count = reduction("sum", ufunc(np.logical_not, ufunc(np.isnan, x)), axis, keepdims)
    return ufunc(np.divide, total, cast(ufunc(np.subtract, count, ddof), total.dtype))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    return ufunc(np.sqrt, nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                                 correction=correction))


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumulative("cumulative_sum", _nan_to(as_tensor(a), 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumulative("cumulative_prod", _nan_to(as_tensor(a), 1), axis, dtype)


def _nanarg(name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        x = as_tensor(a)
        if x.dtype.kind in "fc":
            if axis is not None:   # NumPy checks the axis as np.all(isnan(a), axis) first
                shapes.normalize_axes(axis, need_rank(x, "nan" + name), element_ok=True)
            x = _nan_to(x, -np.inf if name == "argmax" else np.inf)
        return reduction(name, x, axis, keepdims)
    fn.__name__ = "nan" + name
    return fn


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    if fweights is not None or aweights is not None:
        raise NotImplementedError("numpy.cov: weights are not supported while tracing")
    x = as_tensor(m)
    x = reshape(x, (1, -1)) if need_rank(x, "numpy.cov") == 1 else x
    if not rowvar:
        x = transpose(x)
    if y is not None:
        yt = as_tensor(y)
        yt = reshape(yt, (1, -1)) if need_rank(yt, "numpy.cov") == 1 else yt
        x = concatenate([x, yt if rowvar else transpose(yt)], 0)
    out_dtype = np.result_type(x.dtype, np.float64) if dtype is None else np.dtype(dtype)
    x = cast(x, out_dtype)
    n = x.shape[1]
    if n is None:
        raise NotImplementedError("numpy.cov needs the number of observations known")
    ddof = (0 if bias else 1) if ddof is None else ddof
    centred = ufunc(np.subtract, x, reduction("mean", x, 1, True))
    conj = ufunc(np.conjugate, centred) if centred.dtype.kind == "c" else centred
    from autograph.runtime.numpy.array_ops import matmul
    c = ufunc(np.divide, matmul(centred, transpose(conj)), n - ddof)
    return reshape(c, ()) if x.shape[0] == 1 else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.shape == ():
        return ufunc(np.divide, c, c)
    d = real(diag(c)) if c.dtype.kind == "c" else diag(c)
    s = ufunc(np.sqrt, d)
    c = ufunc(np.divide, ufunc(np.divide, c, getitem(s, (slice(None), None))),
              getitem(s, (None, slice(None))))
    if c.dtype.kind == "c":   # NumPy clips the real and imaginary parts to [-1, 1]
        return ufunc(np.add, cast(clip(real(c), -1, 1), c.dtype),
                     ufunc(np.multiply, cast(clip(imag(c), -1, 1), c.dtype), 1j))
    return clip(c, -1, 1)


def digitize(x, bins, right=False):
    b = as_tensor(bins)
    if need_rank(b, "numpy.digitize") != 1 or b.shape[0] is None:
        raise NotImplementedError("numpy.digitize needs 1-D bins of known length")
    side = "left" if right else "right"
    # increasing bins: searchsorted; decreasing: len - searchsorted of the reversed bins
    up = searchsorted(b, x, side=side)
    down = ufunc(np.subtract, b.shape[0],
                 searchsorted(flip(b, 0), x, side=side))
    if b.shape[0] < 2:
        return up
    increasing = ufunc(np.less_equal, getitem(b, 0), getitem(b, -1))
    return where(increasing, up, down)


def ediff1d(ary, to_end=None, to_begin=None):
    x = ravel(as_tensor(ary))
    d = ufunc(np.subtract, getitem(x, slice(1, None)), getitem(x, slice(None, -1)))
    parts = [d]
    if to_begin is not None:
        parts.insert(0, cast(ravel(as_tensor(to_begin)), d.dtype))
    if to_end is not None:
        parts.append(cast(ravel(as_tensor(to_end)), d.dtype))
    return concatenate(parts, 0) if len(parts) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    yt = as_tensor(y)
    ndim = need_rank(yt, "numpy.trapezoid")
    ax = shapes.normalize_axis(axis, ndim)
    lead = (slice(None),) * ax
    hi, lo = getitem(yt, lead + (slice(1, None),)), getitem(yt, lead + (slice(None, -1),))
    if x is None:
        d = dx
    else:
        xt = as_tensor(x)
        if need_rank(xt, "numpy.trapezoid") == 1:
            d = ufunc(np.subtract, getitem(xt, slice(1, None)), getitem(xt, slice(None, -1)))
            d = reshape(d, tuple(-1 if i == ax else 1 for i in range(ndim)))
        else:
            d = ufunc(np.subtract, getitem(xt, lead + (slice(1, None),)),
                      getitem(xt, lead + (slice(None, -1),)))
    return reduction("sum", ufunc(np.divide, ufunc(np.multiply, d, ufunc(np.add, hi, lo)),
                                  2.0), ax)


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    from autograph.runtime.numpy.elementwise import common
    choices, _, _ = common(list(choicelist) + [default])
    out = choices[-1]
    for c, v in zip(reversed(list(condlist)), reversed(choices[:-1])):
        out = where(c, v, out)
    return out


def diagflat(v, k=0):
    return diag(ravel(as_tensor(v)), k)


def vander(x, N=None, increasing=False):
    t = as_tensor(x)
    n = t.shape[0] if N is None else N
    if n is None:
        raise NotImplementedError("numpy.vander needs N or the length of x known")
    dtype = np.promote_types(t.dtype, np.int64)   # NumPy's: at least int64
    base = getitem(cast(t, dtype), (slice(None), None))
    # NumPy multiplies up the columns (x**0 = 1, x**1 = x, ...): cumulative products
    ones = ufunc(np.add, ufunc(np.multiply, base, 0), 1)
    if n == 0:
        return getitem(ones, (slice(None), slice(0, 0)))
    reps = concatenate([ones] + [base] * (n - 1), 1) if n > 1 else ones
    out = cumulative("cumulative_prod", reps, 1, dtype)
    return out if increasing else flip(out, 1)


def sinc(x):
    t = as_tensor(x)
    t = cast(t, FLOAT64) if t.dtype.kind not in "fc" else t
    y = ufunc(np.multiply, np.pi, where(ufunc(np.equal, t, 0), 1.0e-20, t))
    return ufunc(np.divide, ufunc(np.sin, y), y)


def angle(z, deg=False):
    t = as_tensor(z)
    if t.dtype.kind == "c":
        a = ufunc(np.arctan2, imag(t), real(t))
    else:
        a = ufunc(np.arctan2, 0, t)
    return ufunc(np.multiply, a, 180 / np.pi) if deg else a


def isposinf(x, out=None):
    return ufunc(np.logical_and, ufunc(np.isinf, x), ufunc(np.logical_not, ufunc(np.signbit, x)))


def isneginf(x, out=None):
    return ufunc(np.logical_and, ufunc(np.isinf, x), ufunc(np.signbit, x))


def isreal(x):
    t = as_tensor(x)
    if t.dtype.kind != "c":
        return full_like(t, True, dtype=BOOL)
    return ufunc(np.equal, imag(t), 0)


def iscomplex(x):
    t = as_tensor(x)
    if t.dtype.kind != "c":
        return full_like(t, False, dtype=BOOL)
    return ufunc(np.not_equal, imag(t), 0)


def fix(x, out=None):
    return ufunc(np.trunc, x) if as_tensor(x).dtype.kind == "f" else as_tensor(x)


def extract(condition, arr):
    from autograph.runtime.numpy.indexing import getitem as gi
    return gi(ravel(as_tensor(arr)), cast(ravel(as_tensor(condition)), BOOL))


def compress(condition, a, axis=None, out=None):
    c = cast(as_tensor(condition), BOOL)
    x = as_tensor(a)
    if axis is None or shapes.names_the_element(axis, need_rank(x, "numpy.compress")):
        x = ravel(x)   # (NumPy: axis 0 of a 0-d input is its flattening)
        axis = 0
    axis = shapes.normalize_axis(axis, need_rank(x, "numpy.compress"))
    n = c.shape[0]
    if n is not None and x.shape[axis] is not None and n < x.shape[axis]:
        x = getitem(x, (slice(None),) * axis + (slice(0, n),))
    from autograph.runtime.numpy.sorting import nonzero
    from autograph.runtime.numpy.indexing import take
    return take(x, nonzero(c)[0], axis)


FUNCTIONS = {
    np.swapaxes: swapaxes, np.rollaxis: rollaxis, np.fliplr: fliplr, np.flipud: flipud,
    np.rot90: rot90, np.column_stack: column_stack, np.dstack: dstack, np.append: append,
    np.hsplit: _split_along(1, "hsplit"), np.vsplit: _split_along(0, "vsplit"),
    np.dsplit: _split_along(2, "dsplit"),
    np.nanvar: nanvar, np.nanstd: nanstd, np.nancumsum: nancumsum, np.nancumprod: nancumprod,
    np.nanargmax: _nanarg("argmax"), np.nanargmin: _nanarg("argmin"),
    np.cov: cov, np.corrcoef: corrcoef, np.digitize: digitize, np.ediff1d: ediff1d,
    np.select: select, np.diagflat: diagflat, np.vander: vander, np.sinc: sinc,
    np.angle: angle, np.isposinf: isposinf, np.isneginf: isneginf, np.isreal: isreal,
    np.iscomplex: iscomplex, np.fix: fix, np.extract: extract, np.compress: compress,
}
for _name, _impl in (("trapezoid", trapezoid),
                     ("cumulative_sum", lambda x, /, *, axis=None, dtype=None, out=None,
                      include_initial=False: _cumulative2("cumulative_sum", x, axis, dtype,
                                                          include_initial)),
                     ("cumulative_prod", lambda x, /, *, axis=None, dtype=None, out=None,
                      include_initial=False: _cumulative2("cumulative_prod", x, axis, dtype,
                                                          include_initial))):
    if hasattr(np, _name):
        FUNCTIONS[getattr(np, _name)] = _impl


def _cumulative2(name, x, axis, dtype, include_initial):
    t = as_tensor(x)
    if isinstance(axis, (tuple, list)):   # NumPy: a tuple of one axis is that axis
        if len(axis) != 1:
            raise ValueError(f"accumulate does not allow multiple axes, got {tuple(axis)!r}"
                             f"{shapes.where()}")
        (axis,) = axis
    if axis is None:
        if need_rank(t, f"numpy.{name}") > 1:
            raise ValueError(f"numpy.{name}: axis must be given for arrays of more than one "
                             "dimension")
        axis = 0
    out = cumulative(name, t, axis, dtype)
    if include_initial:
        ax = shapes.normalize_axis(axis, len(out.shape))
        first = getitem(out, (slice(None),) * ax + (slice(0, 1),))
        fill = ufunc(np.add, ufunc(np.multiply, first, 0), 0 if name == "cumulative_sum" else 1)
        out = concatenate([cast(fill, out.dtype), out], ax)
    return out


# -- polynomials (NumPy's own steps: polymul is convolve, polyadd pads the shorter) -------------

def _poly(p, what):
    t = as_tensor(p)
    if need_rank(t, what) != 1 or t.shape[0] is None:
        raise NotImplementedError(f"{what} needs 1-D coefficients of known length while "
                                  "tracing")
    return t


def polyadd(a1, a2, _op=np.add):
    a, b = _poly(a1, "numpy.polyadd"), _poly(a2, "numpy.polyadd")
    n, m = a.shape[0], b.shape[0]
    from autograph.runtime.numpy.array_ops import zeros
    if n < m:
        a = concatenate([zeros((m - n,), a.dtype), a], 0)
    elif m < n:
        b = concatenate([zeros((n - m,), b.dtype), b], 0)
    return ufunc(_op, a, b)


def polysub(a1, a2):
    return polyadd(a1, a2, np.subtract)


def polymul(a1, a2):
    a, b = _poly(a1, "numpy.polymul"), _poly(a2, "numpy.polymul")
    return _prims().bind1("polymul", [a, b])


def _prims():
    from autograph.runtime.ir import primitives
    return primitives


def _polymul_infer(a, b):
    # NumPy reads the inputs as poly1d, which drops leading zero coefficients: the length
    # of the product depends on the data
    return [(np.result_type(a.dtype, b.dtype), (None,), False)]


def _polymul_kernel(xp, a, b):
    def trim(x):   # poly1d's rule: leading zeros go, all zeros keep one
        nz = xp.nonzero(x != 0)[0]
        return x[int(nz[0]):] if nz.shape[0] else x[x.shape[0] - 1:]
    a, b = trim(a), trim(b)
    dtype = xp.result_type(a, b)
    a, b = xp.astype(a, dtype), xp.astype(b, dtype)
    n, m = a.shape[0], b.shape[0]
    out = xp.zeros(n + m - 1, dtype=dtype)
    for i in range(n):   # out[k] = sum over i + j = k of a[i] * b[j]
        out[i:i + m] += a[i] * b
    return out


_prims().register("polymul", _polymul_infer, _polymul_kernel, doc="numpy.polymul")


def _polymul_vjp(cts, node):
    """out[k] = sum over i + j = k of a[i] b[j], so a's cotangent is the correlation
    sum_j g[i + j] b[j] (and b's likewise). Lengths must be known while tracing, and the
    inputs free of leading zeros (which NumPy's poly1d drops, changing the length)."""
    from autograph.runtime.numpy.adjoint import cast_like, ins, needs
    g = cts[0]
    a, b = ins(node)
    if None in (a.shape[0], b.shape[0]):
        raise NotImplementedError("the gradient of numpy.polymul needs the lengths of both "
                                  "polynomials known while tracing")

    def corr(other, length):
        total = None
        for j in range(other.shape[0]):
            term = g[j:j + length] * other[j]
            total = term if total is None else total + term
        return total
    return [cast_like(corr(b.value, a.shape[0]), a) if needs(node, 0) and a.dtype.kind in "fc"
            else None,
            cast_like(corr(a.value, b.shape[0]), b) if needs(node, 1) and b.dtype.kind in "fc"
            else None]


_prims().defvjp("polymul", _polymul_vjp)


def polyder(p, m=1):
    t = _poly(p, "numpy.polyder")
    for _ in range(int(m)):
        n = t.shape[0] - 1   # NumPy: p[:-1] * arange(n, 0, -1), empty past the degree
        t = ufunc(np.multiply, getitem(t, slice(None, -1)), np.arange(n, 0, -1))
    return t


def polyint(p, m=1, k=None):
    t = _poly(p, "numpy.polyint")
    ks = np.zeros(int(m)) if k is None else np.atleast_1d(np.asarray(k, dtype=float))
    if len(ks) == 1 and m > 1:
        ks = ks[0] * np.ones(int(m))
    for i in range(int(m)):
        n = t.shape[0]
        t = ufunc(np.divide, t, np.arange(n, 0, -1))
        t = concatenate([t, cast(as_tensor(ks[i:i + 1]), t.dtype)], 0)
    return t


# -- index helpers that depend only on the (static) shape ----------------------------------------

def _static_shape(arr, what):
    t = as_tensor(arr)
    if t.shape is None or None in t.shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return t.shape


def tril_indices_from(arr, k=0):
    n, m = _static_shape(arr, "numpy.tril_indices_from")
    return np.tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = _static_shape(arr, "numpy.triu_indices_from")
    return np.triu_indices(n, k, m)


def diag_indices_from(arr):
    shape = _static_shape(arr, "numpy.diag_indices_from")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return np.diag_indices(shape[0], len(shape))


def unravel_index(indices, shape, order="C"):
    if order != "C":
        raise NotImplementedError("numpy.unravel_index: only order='C' while tracing")
    i = cast(as_tensor(indices), INT64)
    dims = tuple(int(d) for d in np.atleast_1d(shape))
    out = []
    for d in reversed(dims):
        out.append(ufunc(np.remainder, i, d))
        i = ufunc(np.floor_divide, i, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if order != "C" or mode != "raise":
        raise NotImplementedError("numpy.ravel_multi_index: only order='C', mode='raise' "
                                  "while tracing")
    dims = tuple(int(d) for d in dims)
    total = None
    for idx, d in zip(multi_index, dims):
        i = cast(as_tensor(idx), INT64)
        total = i if total is None else ufunc(np.add, ufunc(np.multiply, total, d), i)
    return total


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """np.linspace with tensor ends (scalars): NumPy's steps, start + arange * step, the
    last value set to stop."""
    if not isinstance(num, (int, np.integer)):
        raise NotImplementedError("numpy.linspace: num must be a Python int while tracing")
    a, b = as_tensor(start), as_tensor(stop)
    if a.shape != () or b.shape != () or axis != 0:
        raise NotImplementedError("numpy.linspace: only scalar start and stop while tracing")
    calc = np.result_type(a.dtype if not a.weak else np.float64,
                          b.dtype if not b.weak else np.float64, np.float64)
    a, b = cast(a, calc), cast(b, calc)
    div = (num - 1) if endpoint else num
    delta = ufunc(np.subtract, b, a)
    y = np.arange(0, num, dtype=calc)
    step = ufunc(np.divide, delta, div) if div > 0 else delta
    if div > 0:
        values = ufunc(np.add, ufunc(np.multiply, y, step), a)
    else:
        values = ufunc(np.add, ufunc(np.multiply, y, delta), a)
    if endpoint and num > 1:
        values = where(np.arange(num) == num - 1, b, values)
    out_dtype = calc if dtype is None else np.dtype(dtype)
    if out_dtype.kind in "iu":
        values = ufunc(np.floor, values)
    values = cast(values, out_dtype)
    return (values, step) if retstep else values


FUNCTIONS.update({
    np.polyadd: polyadd, np.polysub: polysub, np.polymul: polymul, np.polyder: polyder,
    np.polyint: polyint, np.tril_indices_from: tril_indices_from,
    np.triu_indices_from: triu_indices_from, np.diag_indices_from: diag_indices_from,
    np.unravel_index: unravel_index, np.ravel_multi_index: ravel_multi_index,
    np.linspace: linspace,
})


def lexsort(keys, axis=-1):
    """np.lexsort of 1-D keys: stable argsorts from the last key (primary) to the first."""
    from autograph.runtime.numpy.array_ops import argsort
    from autograph.runtime.numpy.indexing import take
    keys = [as_tensor(k) for k in keys]
    if any(need_rank(k, "numpy.lexsort") != 1 for k in keys) or axis not in (-1, 0):
        raise NotImplementedError("numpy.lexsort: only 1-D keys while tracing")
    order = argsort(keys[0])
    for k in keys[1:]:
        order = take(order, argsort(take(k, order)))
    return order


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    from autograph.runtime.numpy.statistics import histogram
    return histogram(a, bins, range)[1]


def unstack(x, /, *, axis=0):
    t = as_tensor(x)
    ax = shapes.normalize_axis(axis, need_rank(t, "numpy.unstack"))
    if t.shape[ax] is None:
        raise NotImplementedError("numpy.unstack needs the length of the axis known")
    return tuple(getitem(t, (slice(None),) * ax + (i,)) for i in range(t.shape[ax]))


FUNCTIONS.update({np.lexsort: lexsort, np.histogram_bin_edges: histogram_bin_edges})
for _name, _impl in (("unstack", unstack),
                     ("matrix_transpose", lambda x, /: moveaxis(x, -1, -2))):
    if hasattr(np, _name):
        FUNCTIONS[getattr(np, _name)] = _impl
