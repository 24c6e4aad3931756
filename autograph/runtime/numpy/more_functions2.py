"""More of jax.numpy's NumPy functions composed from covered ones (NumPy on tensors):
unwrap, gradient, matvec/vecmat/vecdot (and linalg.vecdot), packbits/unpackbits,
apply_along_axis/apply_over_axes/piecewise (the Python function runs while tracing, on
tensors), einsum_path (it needs only shapes), histogram2d/histogramdd, poly, polydiv,
polyfit, roots."""


import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank


def _t(x):
    return as_tensor(x)


def _static(shape, what):
    if shape is None or None in shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return tuple(shape)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    x = _t(p)
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.unwrap"))
    dd = np.diff(x, axis=ax)
    discont = period / 2 if discont is None else discont
    high = period / 2
    integer = x.dtype.kind in "iu" and isinstance(period, int)
    if integer:
        high, rem = divmod(period, 2)
        boundary = not rem
    else:
        boundary = True
    ddmod = np.mod(dd + high, period) - high
    if boundary:
        ddmod = np.where((ddmod == -high) & (dd > 0), high, ddmod)
    correct = np.where(np.abs(dd) < max(discont, high), 0, ddmod - dd)
    first = np.take(x, np.arange(1), axis=ax)
    rest = np.take(x, np.arange(1, np.size(x, ax)), axis=ax)
    return np.concatenate([first + 0 * correct.sum(axis=ax, keepdims=True),
                           rest + np.cumsum(correct, axis=ax)], axis=ax)


def _slice(ndim, ax, s):
    return (slice(None),) * ax + (s,)


def gradient(f, *varargs, axis=None, edge_order=1):
    x = _t(f)
    ndim = need_rank(x, "numpy.gradient")
    axes = tuple(range(ndim)) if axis is None else tuple(
        shapes.normalize_axis(int(a), ndim) for a in np.atleast_1d(axis))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes) and all(np.ndim(v) == 0 for v in varargs):
        spacing = list(varargs)
    else:
        raise NotImplementedError("numpy.gradient: only scalar spacings while tracing")
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    outs = []
    for ax, h in zip(axes, spacing):
        n = x.shape[ax]
        if n is None or n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        s = lambda a, b=None: x[_slice(ndim, ax, slice(a, b))]   # noqa: E731
        inner = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            lo = (s(1, 2) - s(0, 1)) / h
            hi = (s(-1, None) - s(-2, -1)) / h
        else:
            lo = -(3.0 * s(0, 1) - 4.0 * s(1, 2) + s(2, 3)) / (2.0 * h)
            hi = (3.0 * s(-1, None) - 4.0 * s(-2, -1) + s(-3, -2)) / (2.0 * h)
        outs.append(np.concatenate([lo, inner, hi], axis=ax).astype(x.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _conj(x):
    return np.conj(x) if x.dtype.kind == "c" else x


def vecdot(x1, x2, /, *, axis=-1, out=None, dtype=None, **kw):
    a, b = _t(x1), _t(x2)
    r = np.sum(_conj(a) * b, axis=axis)
    return r if dtype is None else r.astype(dtype)


def matvec(x1, x2, /, *, out=None, dtype=None, **kw):
    r = np.sum(_t(x1) * _t(x2)[..., None, :], axis=-1)
    return r if dtype is None else r.astype(dtype)


def vecmat(x1, x2, /, *, out=None, dtype=None, **kw):
    r = np.sum(_conj(_t(x1))[..., :, None] * _t(x2), axis=-2)
    return r if dtype is None else r.astype(dtype)


def packbits(a, /, axis=None, bitorder="big"):
    x = _t(a)
    if x.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if axis is None:
        x, axis = np.ravel(x), 0
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.packbits"))
    bits = np.moveaxis((x != 0).astype(np.uint8), ax, -1)
    n = bits.shape[-1]
    if n is None:
        raise NotImplementedError("numpy.packbits needs the length of the axis known")
    pad = -n % 8
    if pad:
        bits = np.concatenate([bits, np.zeros(tuple(bits.shape[:-1]) + (pad,), np.uint8)], -1)
    groups = np.reshape(bits, tuple(bits.shape[:-1]) + ((n + pad) // 8, 8))
    weights = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    packed = np.sum(groups * weights.astype(np.uint8), axis=-1, dtype=np.uint8)
    return np.moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    x = _t(a)
    if x.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x, axis = np.ravel(x), 0
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.unpackbits"))
    moved = np.moveaxis(x, ax, -1)
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    bits = (moved[..., None] >> shifts.astype(np.uint8)) & np.uint8(1)
    n = moved.shape[-1]
    if n is None:
        raise NotImplementedError("numpy.unpackbits needs the length of the axis known")
    bits = np.reshape(bits, tuple(moved.shape[:-1]) + (8 * n,))
    if count is not None:
        if count >= 0:
            bits = bits[..., :count] if count <= 8 * n else np.concatenate(
                [bits, np.zeros(tuple(bits.shape[:-1]) + (count - 8 * n,), np.uint8)], -1)
        else:
            bits = bits[..., :8 * n + count]
    return np.moveaxis(bits, -1, ax)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's loop over every other index, run while tracing: func1d sees tensors."""
    x = _t(arr)
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.apply_along_axis"))
    shape = _static(x.shape, "numpy.apply_along_axis")
    outer = shape[:ax] + shape[ax + 1:]
    moved = np.moveaxis(x, ax, -1)
    results = [_t(func1d(moved[idx], *args, **kwargs)) for idx in np.ndindex(*outer)]
    if not results:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    stacked = np.reshape(np.stack(results), outer + tuple(results[0].shape))
    k = len(results[0].shape)
    return np.moveaxis(stacked, list(range(len(outer), len(outer) + k)),
                       list(range(ax, ax + k))) if k else stacked


def apply_over_axes(func, a, axes):
    val = _t(a)
    n = need_rank(val, "numpy.apply_over_axes")
    for axis in np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = _t(func(val, axis))
        if len(res.shape) == n:
            val = res
        else:
            res = np.expand_dims(res, axis)
            if len(res.shape) != n:
                raise ValueError("function is not returning an array of the correct shape")
            val = res
    return val


def piecewise(x, condlist, funclist, *args, **kw):
    """Each function runs on all of x (as in jax.numpy: functions must be elementwise)
    and np.where keeps its part; NumPy runs it on the selected elements only."""
    t = _t(x)
    if isinstance(condlist, (Tensor, np.ndarray)) and len(getattr(condlist, "shape", ())) \
            <= len(t.shape):
        condlist = [condlist]
    conds = [_t(c) for c in condlist]
    if len(funclist) == len(conds) + 1:
        rest = ~np.any(np.stack(np.broadcast_arrays(*conds)), axis=0)
        conds.append(rest)
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = np.zeros_like(t)
    for cond, fn in zip(conds, funclist):
        value = fn(t, *args, **kw) if callable(fn) else fn
        y = np.where(cond, _t(value).astype(t.dtype), y)
    return y


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    stand_ins = [np.zeros(_static(_t(o).shape, "numpy.einsum_path"), _t(o).dtype)
                 if isinstance(o, Tensor) else o for o in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Each dimension binned as numpy.histogram bins it; the counts of the combined bin."""
    s = _t(sample)
    if isinstance(sample, (list, tuple)):
        s = np.stack([_t(c) for c in sample], axis=-1)
    if len(s.shape) == 1:
        s = s[:, None]
    d = _static(s.shape[1:], "numpy.histogramdd")[0]
    nbins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    if not all(isinstance(b, (int, np.integer)) for b in nbins):
        raise NotImplementedError("numpy.histogramdd: bins must be ints while tracing")
    ranges = [None] * d if range is None else list(range)
    edges, flat, inside = [], None, None
    for i in builtins_range(d):
        col = s[:, i]
        _, e = np.histogram(col, nbins[i], ranges[i])
        edges.append(e)
        idx = np.searchsorted(e, col, side="right") - 1
        idx = np.where(col == e[-1], nbins[i] - 1, idx)
        ok = (idx >= 0) & (idx < nbins[i])
        inside = ok if inside is None else inside & ok
        idx = np.clip(idx, 0, nbins[i] - 1)
        flat = idx if flat is None else flat * nbins[i] + idx
    total = int(np.prod(nbins))
    w = np.ones(np.shape(flat), np.float64) if weights is None else _t(weights)
    w = np.where(inside, w, 0)
    hits = (flat[:, None] == np.arange(total)[None, :])
    counts = np.sum(np.where(hits, w[:, None], 0), axis=0).astype(
        np.result_type(w.dtype, np.float64))
    hist = np.reshape(counts, tuple(nbins))
    if density:
        widths = np.ones((), np.float64)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = nbins[i]
            widths = widths * np.reshape(np.diff(e), shape)
        hist = hist / np.sum(hist) / widths
    return hist, edges


builtins_range = range


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    hist, edges = histogramdd(np.stack([_t(x), _t(y)], axis=-1), bins, range, density,
                              weights)
    return hist, edges[0], edges[1]


# -- polynomials ------------------------------------------------------------------------------

def poly(seq_of_zeros):
    r = _t(seq_of_zeros)
    if len(r.shape) == 2 and r.shape[0] == r.shape[1] and r.shape[0] is not None:
        r = np.linalg.eigvals(r)
        real_input = True
    else:
        real_input = False
    n = _static(r.shape, "numpy.poly")[0]
    dt = np.result_type(r.dtype, np.float64)
    a = np.ones((1,), dt)
    for k in builtins_range(n):
        z = np.zeros((1,), dt)
        a = np.concatenate([a, z]) - r[k] * np.concatenate([z, a])
    if real_input and a.dtype.kind == "c":   # a real matrix: conjugate pairs of roots
        a = np.real(a)
    return a


def polydiv(u, v):
    a, b = _t(u) + 0.0, _t(v) + 0.0
    m, n = _static(a.shape, "numpy.polydiv")[0] - 1, _static(b.shape, "numpy.polydiv")[0] - 1
    dt = np.result_type(a.dtype, b.dtype)
    r = a.astype(dt)
    scale = 1.0 / b[0]
    q = []
    for k in builtins_range(0, m - n + 1):
        d = scale * r[k]
        q.append(d)
        r = np.concatenate([r[:k], r[k:k + n + 1] - d * b, r[k + n + 1:]])
    quotient = np.stack(q) if q else np.zeros((1,), dt)
    # NumPy drops leading remainder terms while they are close to 0 (length: data)
    small = np.abs(r) <= 1e-8
    pos = np.arange(m + 1)
    start = np.min(np.where(small, m, pos))
    return quotient, r[start:]


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    if full or cov:
        raise NotImplementedError("numpy.polyfit(full=True / cov=True) is not supported "
                                  "while tracing")
    xs, ys = _t(x) + 0.0, _t(y) + 0.0
    n = _static(xs.shape, "numpy.polyfit")[0]
    rcond = n * np.finfo(xs.dtype).eps if rcond is None else rcond
    lhs = np.vander(xs, deg + 1)
    rhs = ys
    if w is not None:
        ww = _t(w) + 0.0
        lhs = lhs * ww[:, None]
        rhs = rhs * (ww if len(rhs.shape) == 1 else ww[:, None])
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    c = np.linalg.lstsq(lhs / scale, rhs, rcond)[0]
    return (c.T / scale).T


def roots(p):
    """NumPy's steps with the lengths known at run time: strip leading and trailing zero
    coefficients, the eigenvalues of the companion matrix, then one zero root per trailing
    zero."""
    c = np.ravel(_t(p))
    n = _static(c.shape, "numpy.roots")[0]
    pos = np.arange(n)
    nz = c != 0
    first = np.min(np.where(nz, pos, n))
    last = np.max(np.where(nz, pos, -1))
    trailing = np.maximum(n - 1 - last, 0)
    core = c[first:np.maximum(last + 1, first)]
    if core.dtype.kind in "iub":
        core = core.astype(np.float64)
    m = np.size(core, 0) - 1   # the degree
    from autograph.runtime.numpy.array_ops import arange, zeros   # lengths known at run time
    rows = arange(np.maximum(m, 0))
    lower = (rows[:, None] - 1 == rows[None, :]).astype(core.dtype)
    top = -core[1:] / core[0]
    comp = np.where(rows[:, None] == 0, top[None, :], lower)
    values = np.linalg.eigvals(comp)
    return np.concatenate([values, zeros((trailing,), values.dtype)])


