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
    if axis is None:
        x = ravel(x)
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
