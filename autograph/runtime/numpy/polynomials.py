"""Polynomials composed from the covered NumPy functions (NumPy on tensors): poly, polydiv,
polyfit, roots.
"""

import numpy as np

from autograph.runtime.numpy.elementwise import as_tensor


def _t(x):
    return as_tensor(x)


builtins_range = range


def _static(shape, what):
    if shape is None or None in shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return tuple(shape)


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
