"""Statistics and numeric helpers on symbolic tensors, composed from existing primitives
(exact where NumPy's own algorithm is followed step by step): quantile, percentile,
histogram, interp, nan_to_num, ptp, polyval, convolve, correlate, pad (constant/edge), and
bincount (a primitive: its length depends on the data, unknown while tracing)."""

import numpy as np

from autograph.runtime.ir.dtypes import FLOAT64, INT64
from autograph.runtime.ir.primitives import bind1, defvjp, register
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.array_ops import sort, where
from autograph.runtime.numpy.elementwise import as_tensor, cast, common, operand_key, ufunc
from autograph.runtime.ir import dtypes
from autograph.runtime.numpy.indexing import getitem, take
from autograph.runtime.numpy.joins import concatenate
from autograph.runtime.numpy.reductions import reduction
from autograph.runtime.numpy.shape_ops import dim, need_rank, ravel, reshape, transpose
from autograph.runtime.numpy.sorting import searchsorted


# -- quantile / percentile (NumPy's default 'linear' method) -----------------------------------

def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) t, computed from b's side for t >= 0.5."""
    diff = ufunc(np.subtract, b, a)
    low = ufunc(np.add, a, ufunc(np.multiply, diff, t))
    high = ufunc(np.subtract, b, ufunc(np.multiply, diff, ufunc(np.subtract, 1, t)))
    return where(ufunc(np.greater_equal, t, 0.5), high, low)


def check_quantile_args(name, q, out, weights, method):
    """What numpy.quantile-like `name` supports while tracing: the linear method, a q known
    while tracing, no out= or weights=."""
    if out is not None or weights is not None or method != "linear":
        raise NotImplementedError(f"numpy.{name}: only method='linear' without out= or "
                                  "weights= is supported while tracing")
    if isinstance(q, Tensor):
        raise NotImplementedError(f"numpy.{name}: q must be known while tracing")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    check_quantile_args("quantile", q, out, weights, method)
    x = as_tensor(a)
    key, weak = operand_key(q)
    dtype = dtypes.result_type((dtypes.key_of(x.dtype, False), key))
    dtype = dtype if dtype.kind in "fc" else FLOAT64
    qs = np.asarray(q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    ndim = need_rank(x, "numpy.quantile")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        from autograph.runtime.numpy import merged_axes   # (a tuple of axes only)
        axes = merged_axes.several_axes(x, axis, "numpy.quantile")
        if axes is not None:
            return merged_axes.over_axes(lambda t: quantile(t, q, -1), x, axes, keepdims,
                                         np.shape(qs))
        ax = merged_axes.one_axis(x, axis, "numpy.quantile")
    n = x.shape[ax]
    if n is None:
        raise NotImplementedError("numpy.quantile needs the length of the reduced axis known "
                                  "while tracing")
    ordered = sort(cast(x, dtype), ax)
    virtual = qs * (n - 1)   # NumPy: indices floor and floor + 1, weight = the remainder
    lo = np.floor(virtual).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    gamma = (virtual - lo).astype(dtype)
    below = take(ordered, lo, ax)
    above = take(ordered, hi, ax)
    # move q's axes first (NumPy's layout), then interpolate with gamma broadcast to them
    result_ndim = len(below.shape)
    order = tuple(range(ax, ax + qs.ndim)) + tuple(i for i in range(result_ndim)
                                                   if not ax <= i < ax + qs.ndim)
    below, above = transpose(below, order), transpose(above, order)
    gamma = reshape(gamma, qs.shape + (1,) * (result_ndim - qs.ndim))
    result = _lerp(below, above, gamma)
    if keepdims:
        keep = [1] * ndim if axis is None else list(x.shape)
        if axis is not None:
            keep[ax] = 1
        result = reshape(result, qs.shape + tuple(keep))
    return cast(result, dtype)


def percent_to_quantile(q, what):
    """A percentile's q (known while tracing) as the quantile NumPy computes."""
    if isinstance(q, Tensor):
        raise NotImplementedError(f"{what}: q must be known while tracing")
    qs = np.true_divide(q, 100)
    return qs if np.ndim(q) or not isinstance(q, (int, float)) else float(qs)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    qs = percent_to_quantile(q, "numpy.percentile")
    return quantile(a, qs, axis, out, overwrite_input, method, keepdims, weights=weights)


# -- bincount, histogram --------------------------------------------------------------------

def _bincount_infer(x, *weights, minlength):
    return [(FLOAT64 if weights else INT64, (None,), False)]


def _bincount_kernel(xp, x, *weights, minlength):
    length = max(int(xp.max(x)) + 1 if x.shape[0] else 0, minlength)
    hits = xp.reshape(x, (-1, 1)) == xp.reshape(xp.arange(length, dtype=x.dtype), (1, -1))
    if weights:
        w = xp.reshape(weights[0], (-1, 1))
        return xp.sum(xp.where(hits, w, xp.zeros_like(w)), axis=0)
    return xp.sum(xp.astype(hits, xp.int64), axis=0)


register("bincount", _bincount_infer, _bincount_kernel, doc="numpy.bincount")


def bincount(x, weights=None, minlength=0):
    t = as_tensor(x)
    if t.dtype.kind not in "iub" or need_rank(t, "numpy.bincount") != 1:
        raise TypeError("numpy.bincount needs a 1-D array of non-negative integers")
    if t.shape[0] == 0:   # NumPy: minlength zeros, int64 even with weights
        from autograph.runtime.numpy.array_ops import zeros
        return zeros((int(minlength),), INT64)
    t = cast(t, INT64)
    inputs = (t,) if weights is None else (t, cast(as_tensor(weights), FLOAT64))
    return bind1("bincount", inputs, {"minlength": int(minlength)})


def histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's uniform-bins histogram, step by step: edges from linspace, each value's bin
    from (x - first) * bins / (last - first), corrected against the edges; counts by
    comparison with every bin (exact)."""
    if not isinstance(bins, (int, np.integer)):
        raise NotImplementedError("numpy.histogram: bins must be an int while tracing")
    x = ravel(as_tensor(a))
    if x.dtype.kind not in "fiu":
        x = cast(x, FLOAT64)
    if range is not None:
        first, last = (as_tensor(np.float64(v) if x.dtype.kind in "iu" else v)
                       for v in range)
        inside = ufunc(np.logical_and, ufunc(np.greater_equal, x, first),
                       ufunc(np.less_equal, x, last))
    else:
        first, last = reduction("min", x), reduction("max", x)
        inside = None
    edge_dtype = np.result_type(x.dtype if x.dtype.kind == "f" else FLOAT64)
    first, last = cast(first, edge_dtype), cast(last, edge_dtype)
    same = ufunc(np.equal, first, last)
    first = where(same, ufunc(np.subtract, first, 0.5), first)
    last = where(same, ufunc(np.add, last, 0.5), last)
    n = int(bins)
    step = ufunc(np.divide, ufunc(np.subtract, last, first), n)
    i = np.arange(n + 1)
    edges = where(i == n, last, ufunc(np.add, ufunc(np.multiply, i.astype(edge_dtype), step),
                                      first))
    norm = ufunc(np.divide, n, ufunc(np.subtract, last, first))
    f = ufunc(np.multiply, ufunc(np.subtract, cast(x, edge_dtype), first), norm)
    index = cast(f, INT64)
    index = where(ufunc(np.equal, index, n), n - 1, index)
    # values outside range= are dropped below; keep their bins valid indices meanwhile
    index = ufunc(np.minimum, ufunc(np.maximum, index, 0), n - 1)
    index = ufunc(np.subtract, index, cast(ufunc(np.less, cast(x, edge_dtype),
                                                 take(edges, index)), INT64))
    up = ufunc(np.logical_and, ufunc(np.greater_equal, cast(x, edge_dtype),
                                     take(edges, ufunc(np.add, index, 1))),
               ufunc(np.not_equal, index, n - 1))
    index = ufunc(np.add, index, cast(up, INT64))
    hits = ufunc(np.equal, getitem(index, (slice(None), None)), np.arange(n)[None, :])
    if inside is not None:
        hits = ufunc(np.logical_and, hits, getitem(inside, (slice(None), None)))
    if weights is None:
        counts = reduction("sum", cast(hits, INT64), 0)
    else:
        w = ravel(as_tensor(weights))
        counts = reduction("sum", where(hits, getitem(w, (slice(None), None)), 0), 0)
    if density:
        widths = ufunc(np.subtract, getitem(edges, (slice(1, None),)),
                       getitem(edges, (slice(None, -1),)))
        total = reduction("sum", counts)
        counts = ufunc(np.divide, ufunc(np.divide, counts, total), widths)
    return counts, edges


# -- interp, nan_to_num, ptp, polyval, pad -----------------------------------------------------

def interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp: the segment of each x from searchsorted, then NumPy's formula
    slope * (x - xp[j]) + fp[j]; outside the ends `left`/`right` (default fp's ends)."""
    if period is not None:
        raise NotImplementedError("numpy.interp(period=...) is not supported while tracing")
    dtype = np.dtype(np.complex128) if any(
        operand_key(v)[0] in (complex,) or (isinstance(operand_key(v)[0], np.dtype)
                                             and operand_key(v)[0].kind == "c")
        for v in (fp,)) else FLOAT64
    xs = cast(as_tensor(x), FLOAT64)
    xpt = cast(as_tensor(xp), FLOAT64)
    fpt = cast(as_tensor(fp), dtype)
    n = xpt.shape[0]
    if n is None:
        raise NotImplementedError("numpy.interp needs the length of xp known while tracing")
    j = ufunc(np.subtract, searchsorted(xpt, xs, side="right"), 1)
    j = ufunc(np.minimum, ufunc(np.maximum, j, 0), max(n - 2, 0))
    x0, x1 = take(xpt, j), take(xpt, ufunc(np.add, j, 1) if n > 1 else j)
    y0, y1 = take(fpt, j), take(fpt, ufunc(np.add, j, 1) if n > 1 else j)
    slope = ufunc(np.divide, ufunc(np.subtract, y1, y0), ufunc(np.subtract, x1, x0))
    inner = ufunc(np.add, ufunc(np.multiply, slope, ufunc(np.subtract, xs, x0)), y0)
    inner = where(ufunc(np.equal, xs, x0), y0, inner)
    lo = getitem(fpt, 0) if left is None else as_tensor(left)
    hi = getitem(fpt, -1) if right is None else as_tensor(right)
    out = where(ufunc(np.equal, xs, getitem(xpt, -1)), getitem(fpt, -1), inner)
    out = where(ufunc(np.less, xs, getitem(xpt, 0)), lo, out)
    out = where(ufunc(np.greater, xs, getitem(xpt, -1)), hi, out)
    return cast(out, dtype)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = as_tensor(x)
    if t.dtype.kind not in "fc":
        return t
    if t.dtype.kind == "c":
        from autograph.runtime.numpy.array_ops import imag, real
        re = nan_to_num(real(t), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(t), nan=nan, posinf=posinf, neginf=neginf)
        return ufunc(np.add, cast(re, t.dtype), ufunc(np.multiply, cast(im, t.dtype), 1j))
    info = np.finfo(t.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    out = where(ufunc(np.isnan, t), cast(as_tensor(nan), t.dtype), t)
    out = where(ufunc(np.logical_and, ufunc(np.isinf, t), ufunc(np.greater, t, 0)),
                cast(as_tensor(big), t.dtype), out)
    return where(ufunc(np.logical_and, ufunc(np.isinf, t), ufunc(np.less, t, 0)),
                 cast(as_tensor(small), t.dtype), out)


def ptp(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise TypeError("numpy.ptp(..., out=...) cannot write into a symbolic tensor")
    return ufunc(np.subtract, reduction("max", a, axis, keepdims),
                 reduction("min", a, axis, keepdims))


def polyval(p, x):
    """NumPy's Horner loop: y = zeros_like(x); y = y * x + p[i] for each coefficient."""
    pt = as_tensor(p)
    if need_rank(pt, "numpy.polyval") != 1 or pt.shape[0] is None:
        raise NotImplementedError("numpy.polyval needs a 1-D p of known length while "
                                  "tracing")
    xt = as_tensor(x)
    from autograph.runtime.numpy.array_ops import zeros_like
    y = zeros_like(xt)
    for i in range(pt.shape[0]):
        y = ufunc(np.add, ufunc(np.multiply, y, xt), getitem(pt, i))
    return y


def pad(array, pad_width, mode="constant", **kwargs):
    """np.pad in constant and edge modes, with static widths: pieces joined per axis (the
    pieces' other lengths are read at run time where they are unknown while tracing)."""
    if mode not in ("constant", "edge"):
        raise NotImplementedError(f"numpy.pad(mode={mode!r}) is not supported while tracing; "
                                  "use 'constant' or 'edge'")
    x = as_tensor(array)
    ndim = need_rank(x, "numpy.pad")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    fill = kwargs.get("constant_values", 0)
    if isinstance(fill, Tensor):     # one value known when the graph runs (a loop counter)
        if fill.shape != ():
            raise NotImplementedError("numpy.pad: constant_values given as a tensor must be "
                                      "one scalar while tracing")
        values = [[fill, fill]] * ndim
    else:
        values = np.broadcast_to(np.asarray(fill), (ndim, 2))
    for ax in range(ndim):
        before, after = int(widths[ax, 0]), int(widths[ax, 1])
        if not before and not after:
            continue
        lead = (slice(None),) * ax
        parts = []
        for width, side, value in ((before, 0, values[ax][0]), (after, -1, values[ax][1])):
            # a length unknown while tracing (a growing loop variable) is read at run time
            shape = tuple(width if k == ax else dim(x, k) for k in range(ndim))
            if mode == "constant":
                from autograph.runtime.numpy.array_ops import full
                piece = full(shape, value if isinstance(value, Tensor) else
                             np.asarray(value).astype(x.dtype)[()], x.dtype)
            else:
                from autograph.runtime.numpy.shape_ops import broadcast_to
                piece = broadcast_to(getitem(x, lead + (slice(side, None if side == -1
                                                              else 1),)), shape)
            parts.append(piece)
        x = concatenate([parts[0], x, parts[1]], ax)
    return x


def convolve(a, v, mode="full"):
    """np.convolve: each output is the dot product of `a` with a window of reversed `v`,
    gathered with constant indices (lengths known while tracing)."""
    return _correlate(a, v, mode, flip=True)


def correlate(a, v, mode="valid"):
    return _correlate(a, v, mode, flip=False)


def _correlate(a, v, mode, flip):
    (x, y), dtype, _ = common((a, v))
    if need_rank(x, "numpy.convolve") != 1 or need_rank(y, "numpy.convolve") != 1:
        raise ValueError("numpy.convolve: both inputs must be 1-D")
    n, m = x.shape[0], y.shape[0]
    if n is None or m is None:
        raise NotImplementedError("numpy.convolve needs known lengths while tracing")
    if flip and m > n:   # convolve is symmetric
        x, y, n, m = y, x, m, n
    if flip:
        y = getitem(y, (slice(None, None, -1),))
    elif x.dtype.kind == "c":
        y = ufunc(np.conjugate, y)
    full = np.arange(-(m - 1), n)   # the start in x of every window, full mode
    if mode == "valid":
        starts = full[m - 1:n] if n >= m else full[n - 1:m]
    elif mode == "same":   # centred: NumPy drops (shorter - 1) // 2 values on the left
        left = (m - 1) // 2 if n >= m else n // 2
        starts = full[left:left + max(n, m)]
    elif mode == "full":
        starts = full
    else:
        raise ValueError(f"numpy.convolve: mode must be 'full', 'same' or 'valid', not {mode!r}")
    idx = starts[:, None] + np.arange(m)[None, :]
    inside = (idx >= 0) & (idx < n)
    windows = where(inside, take(x, np.clip(idx, 0, max(n - 1, 0))), 0)
    return reduction("sum", ufunc(np.multiply, windows, getitem(y, (None, slice(None)))), -1)


FUNCTIONS = {
    np.quantile: quantile, np.percentile: percentile, np.bincount: bincount,
    np.histogram: histogram, np.interp: interp, np.nan_to_num: nan_to_num, np.ptp: ptp,
    np.polyval: polyval, np.pad: pad, np.convolve: convolve, np.correlate: correlate,
}


# -- reverse-mode rules ------------------------------------------------------------------------

def _bincount_vjp(cts, node):
    """Weights: each weight's cotangent is its bin's (the counts are integers)."""
    from autograph.runtime.numpy.indexing import take
    if len(node.inputs) == 1:
        return [None]
    return [None, take(cts[0], node.inputs[0])]


defvjp("bincount", _bincount_vjp)
