"""numpy.linalg on symbolic tensors, through the array API's linalg extension (`xp.linalg`):
inv, det, solve, cholesky, qr, eigh, eigvalsh, svd, svdvals, slogdet, pinv, matrix_rank,
lstsq as primitives; matrix_power, multi_dot, norm (every order), diagonal, trace, diag,
tril/triu, vdot, kron, cross as compositions. Like NumPy, integer and bool input is
computed in float64."""

import numpy as np

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.ir.primitives import bind, bind1, defvjp, nondifferentiable, register
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.array_ops import dot, matmul, where, zeros
from autograph.runtime.numpy.elementwise import as_tensor, cast, common, ufunc
from autograph.runtime.numpy.indexing import getitem
from autograph.runtime.numpy.joins import concatenate, stack
from autograph.runtime.numpy.reductions import reduction
from autograph.runtime.numpy.shape_ops import (
    dim, expand_dims, need_rank, ravel, reshape, squeeze, transpose)


def _float_of(dtype):
    """The dtype np.linalg computes in: integers and bools in float64."""
    return dtype if dtype.kind in "fc" else dtypes.FLOAT64


def _square(x, what):
    if x.shape is None or len(x.shape) < 2:
        raise ValueError(f"numpy.linalg.{what} needs a (batch of) square matrices, got {x!r}")
    n, m = x.shape[-2:]
    if n is not None and m is not None and n != m:
        raise ValueError(f"numpy.linalg.{what}: the last two dimensions of {x!r} must be square")


def _inv_infer(x):
    return [(x.dtype, x.shape, False)]


def _det_infer(x):
    return [(x.dtype, x.shape[:-2], False)]


def _solve_infer(a, b):
    if len(b.shape) == 1:
        return [(a.dtype, a.shape[:-2] + b.shape, False)]
    return [(a.dtype, shapes.broadcast(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], False)]


register("inv", _inv_infer, lambda xp, x: xp.linalg.inv(x), doc="numpy.linalg.inv")
register("det", _det_infer, lambda xp, x: xp.linalg.det(x), doc="numpy.linalg.det")
register("solve", _solve_infer, lambda xp, a, b: xp.linalg.solve(a, b),
         doc="numpy.linalg.solve")


def inv(a):
    x = as_tensor(a)
    _square(x, "inv")
    return bind1("inv", (cast(x, _float_of(x.dtype)),))


def det(a):
    x = as_tensor(a)
    _square(x, "det")
    return bind1("det", (cast(x, _float_of(x.dtype)),))


def solve(a, b):
    (a, b), dtype, _ = common((a, b))
    _square(a, "solve")
    if b.shape is None or not (len(b.shape) == 1 or len(b.shape) == len(a.shape)):
        raise NotImplementedError("numpy.linalg.solve: b must be a vector or have the rank "
                                  f"of a while tracing, got {b!r}")
    dtype = _float_of(dtype)
    return bind1("solve", (cast(a, dtype), cast(b, dtype)))


# -- decompositions: cholesky, qr, eigh, svd, slogdet, pinv, matrix_rank ----------------------
# Each is one primitive on the array API's linalg extension; the result dtypes are NumPy's
# (a real dtype for eigenvalues, singular values and log|det| of complex input).

def _real_of(dtype):
    return np.dtype(np.float32) if dtype == np.complex64 else (
        dtypes.FLOAT64 if dtype.kind == "c" else dtype)


def _floated(a, what, square=True):
    x = as_tensor(a)
    if square:
        _square(x, what)
    elif x.shape is None or len(x.shape) < 2:
        raise ValueError(f"numpy.linalg.{what} needs a (batch of) matrices, got {x!r}")
    return cast(x, _float_of(x.dtype))


def _mn(x):
    m, n = x.shape[-2:]
    k = None if m is None or n is None else min(m, n)
    return m, n, k


register("cholesky", _inv_infer, lambda xp, x: xp.linalg.cholesky(x),
         doc="numpy.linalg.cholesky")
register("eigh", lambda x, *, uplo: [(_real_of(x.dtype), x.shape[:-1], False),
                                     (x.dtype, x.shape, False)],
         lambda xp, x, *, uplo: tuple(xp.linalg.eigh(_upper_to_lower(xp, x) if uplo == "U"
                                                     else x)),
         doc="numpy.linalg.eigh")
register("eigvalsh", lambda x, *, uplo: [(_real_of(x.dtype), x.shape[:-1], False)],
         lambda xp, x, *, uplo: xp.linalg.eigvalsh(_upper_to_lower(xp, x) if uplo == "U"
                                                   else x),
         doc="numpy.linalg.eigvalsh")


def _upper_to_lower(xp, x):
    """The Hermitian matrix NumPy reads from the upper triangle (UPLO='U'), as a full one
    whose lower triangle the array API's eigh reads."""
    upper = xp.triu(x)
    lower = xp.conj(xp.matrix_transpose(xp.triu(x, k=1)))
    return upper + lower


def _qr_infer(x, *, mode):
    m, n, k = _mn(x)
    batch = x.shape[:-2]
    if mode == "r":
        return [(x.dtype, batch + (k, n), False)]
    if mode == "complete":
        return [(x.dtype, batch + (m, m), False), (x.dtype, batch + (m, n), False)]
    return [(x.dtype, batch + (m, k), False), (x.dtype, batch + (k, n), False)]


def _qr_kernel(xp, x, *, mode):
    q, r = xp.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    return r if mode == "r" else (q, r)


register("qr", _qr_infer, _qr_kernel, doc="numpy.linalg.qr")


def _svd_infer(x, *, full_matrices):
    m, n, k = _mn(x)
    batch = x.shape[:-2]
    real = _real_of(x.dtype)
    if full_matrices:
        return [(x.dtype, batch + (m, m), False), (real, batch + (k,), False),
                (x.dtype, batch + (n, n), False)]
    return [(x.dtype, batch + (m, k), False), (real, batch + (k,), False),
            (x.dtype, batch + (k, n), False)]


register("svd", _svd_infer,
         lambda xp, x, *, full_matrices: tuple(xp.linalg.svd(x, full_matrices=full_matrices)),
         doc="numpy.linalg.svd")
register("svdvals", lambda x: [(_real_of(x.dtype), x.shape[:-2] + (_mn(x)[2],), False)],
         lambda xp, x: xp.linalg.svdvals(x), doc="numpy.linalg.svd(compute_uv=False)")
register("slogdet", lambda x: [(x.dtype, x.shape[:-2], False),
                               (_real_of(x.dtype), x.shape[:-2], False)],
         lambda xp, x: tuple(xp.linalg.slogdet(x)), doc="numpy.linalg.slogdet")


def _pinv_kernel(xp, x, *, rtol):
    return xp.linalg.pinv(x, rtol=rtol)


register("pinv", lambda x, *, rtol: [(x.dtype, x.shape[:-2] + x.shape[-2:][::-1], False)],
         _pinv_kernel, doc="numpy.linalg.pinv")
register("matrix_rank", lambda x, *, rtol: [(np.dtype(np.int64), x.shape[:-2], False)],
         lambda xp, x, *, rtol: xp.astype(xp.linalg.matrix_rank(x, rtol=rtol), xp.int64),
         doc="numpy.linalg.matrix_rank")


def cholesky(a, /, *, upper=False):
    x = _floated(a, "cholesky")
    low = bind1("cholesky", (x,))
    return _conj_t(low) if upper else low


def _conj_t(x):
    t = transpose(x, tuple(range(len(x.shape) - 2)) + (len(x.shape) - 1, len(x.shape) - 2))
    return ufunc(np.conjugate, t) if x.dtype.kind == "c" else t


def eigh(a, UPLO="L"):
    if UPLO not in ("L", "U"):
        raise ValueError("numpy.linalg.eigh: UPLO must be 'L' or 'U'")
    return tuple(bind("eigh", (_floated(a, "eigh"),), {"uplo": UPLO}).outputs)


def eigvalsh(a, UPLO="L"):
    if UPLO not in ("L", "U"):
        raise ValueError("numpy.linalg.eigvalsh: UPLO must be 'L' or 'U'")
    return bind1("eigvalsh", (_floated(a, "eigvalsh"),), {"uplo": UPLO})


def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f"numpy.linalg.qr(mode={mode!r}) is not supported while "
                                  "tracing; use 'reduced', 'complete' or 'r'")
    out = bind("qr", (_floated(a, "qr", square=False),), {"mode": mode}).outputs
    return out[0] if mode == "r" else tuple(out)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    x = _floated(a, "svd", square=False)
    if not compute_uv:
        return bind1("svdvals", (x,))
    return tuple(bind("svd", (x,), {"full_matrices": bool(full_matrices)}).outputs)


def svdvals(x, /):
    return bind1("svdvals", (_floated(x, "svdvals", square=False),))


def slogdet(a):
    return tuple(bind("slogdet", (_floated(a, "slogdet"),)).outputs)


def _rtol(rcond, rtol, x):
    """The cut-off the array API's pinv/matrix_rank take, from NumPy's arguments."""
    cut = rtol if rcond is None else rcond
    if isinstance(cut, Tensor) or (cut is not None and np.ndim(cut)):
        raise NotImplementedError("numpy.linalg: rcond/rtol must be a Python number while "
                                  "tracing")
    return None if cut is None else float(cut)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    x = _floated(a, "pinv", square=False)
    return bind1("pinv", (x,), {"rtol": _rtol(rcond, rtol, x)})


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    if tol is not None:
        raise NotImplementedError("numpy.linalg.matrix_rank(tol=...) is not supported while "
                                  "tracing; use rtol=")
    x = _floated(A, "matrix_rank", square=False)
    return bind1("matrix_rank", (x,), {"rtol": _rtol(None, rtol, x)})


def matrix_power(a, n):
    """Repeated squaring with matmul (NumPy's own method); n < 0 inverts first."""
    x = as_tensor(a)
    _square(x, "matrix_power")
    if isinstance(n, Tensor) or int(n) != n:
        raise TypeError("numpy.linalg.matrix_power: the exponent must be a Python int "
                        "while tracing")
    n = int(n)
    if n == 0:
        eye = np.eye(x.shape[-1], dtype=x.dtype)
        return ufunc(np.add, ufunc(np.multiply, x, 0), eye) if x.dtype != np.bool_ else \
            ufunc(np.logical_or, ufunc(np.logical_and, x, False), eye)
    if n < 0:
        x, n = inv(x), -n
    result, z = None, None
    while n > 0:
        z = x if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def multi_dot(arrays, *, out=None):
    if out is not None:
        raise TypeError("numpy.linalg.multi_dot(..., out=...) cannot write into a tensor")
    arrays = list(arrays)
    first, last = as_tensor(arrays[0]), as_tensor(arrays[-1])
    ts = [first] + [as_tensor(a) for a in arrays[1:-1]] + [last]
    if len(first.shape) == 1:
        ts[0] = reshape(first, (1, -1))
    if len(last.shape) == 1:
        ts[-1] = reshape(last, (-1, 1))
    result = ts[0]
    for t in ts[1:]:
        result = matmul(result, t)
    if len(first.shape) == 1 and len(last.shape) == 1:
        return reshape(result, ())
    if len(first.shape) == 1:
        return reshape(result, (-1,))
    if len(last.shape) == 1:
        return reshape(result, (-1,))
    return result


def _lstsq_infer(a, b, *, rcond):
    m, n = a.shape[-2:]
    squeeze_b = len(b.shape) == 1
    k = () if squeeze_b else b.shape[-1:]
    return [(a.dtype, (n,) + k, False), (_real_of(a.dtype), (None,), False),
            (np.dtype(np.int32), (), False), (_real_of(a.dtype), (_mn(a)[2],), False)]


def _lstsq_kernel(xp, a, b, *, rcond):
    """The least-squares solution through the pseudo-inverse; NumPy's residuals (the
    squared 2-norm of each column of b - a x, only when a has full column rank and more
    rows than columns), rank and singular values."""
    m, n = a.shape
    s = xp.linalg.svdvals(a)
    cut = rcond * xp.max(s) if s.shape[0] else 0.0
    rank = xp.astype(xp.sum(xp.astype(s > cut, xp.int64)), xp.int32)   # NumPy's: int32
    x = xp.linalg.pinv(a, rtol=rcond) @ b
    if int(rank) == n and m > n:
        r = b - a @ x
        r = xp.real(r * xp.conj(r)) if xp.isdtype(r.dtype, "complex floating") else r * r
        res = xp.reshape(xp.sum(r, axis=0), (-1,))
    else:
        res = xp.zeros((0,), dtype=s.dtype)
    return x, res, rank, s


register("lstsq", _lstsq_infer, _lstsq_kernel, doc="numpy.linalg.lstsq")


def lstsq(a, b, rcond=None):
    (a, b), dtype, _ = common((a, b))
    dtype = _float_of(dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    if a.shape is None or len(a.shape) != 2 or b.shape is None or len(b.shape) not in (1, 2):
        raise ValueError("numpy.linalg.lstsq needs a matrix a and a vector or matrix b")
    if rcond is None:
        m, n = a.shape
        if m is None or n is None:
            raise NotImplementedError("numpy.linalg.lstsq needs the shape of a known while "
                                      "tracing (its default rcond depends on it)")
        rcond = np.finfo(dtype).eps * max(m, n)
    return tuple(bind("lstsq", (a, b), {"rcond": float(rcond)}).outputs)


def _vector_norm(x, ord, axis, keepdims):
    absx = ufunc(np.absolute, x)
    if ord in (None, 2):
        if x.dtype.kind == "c":
            return ufunc(np.sqrt, reduction("sum", ufunc(np.multiply, absx, absx), axis,
                                            keepdims))
        return ufunc(np.sqrt, reduction("sum", ufunc(np.multiply, x, x), axis, keepdims))
    if ord == np.inf:
        return reduction("max", absx, axis, keepdims)
    if ord == -np.inf:
        return reduction("min", absx, axis, keepdims)
    if ord == 0:
        return cast(reduction("sum", ufunc(np.not_equal, x, 0), axis, keepdims), absx.dtype)
    if ord == 1:
        return reduction("sum", absx, axis, keepdims)
    return ufunc(np.power, reduction("sum", ufunc(np.power, absx, ord), axis, keepdims),
                 1.0 / ord)


def _matrix_norm(x, ord, axis, keepdims):
    r, c = axis
    absx = ufunc(np.absolute, x)
    if ord in ("fro", None):
        out = ufunc(np.sqrt, reduction("sum", ufunc(np.multiply, absx, absx), axis, True))
    elif ord == "nuc" or ord in (2, -2):
        moved = transpose(x, tuple(i for i in range(len(x.shape)) if i not in axis) + axis)
        s = bind1("svdvals", (moved,))
        s = {"nuc": lambda: reduction("sum", s, -1), 2: lambda: reduction("max", s, -1),
             -2: lambda: reduction("min", s, -1)}[ord]()
        for ax in sorted(axis):
            s = expand_dims(s, ax)
        out = s
    elif ord in (1, -1):
        out = reduction("max" if ord == 1 else "min",
                        reduction("sum", absx, r, True), c, True)
    elif ord in (np.inf, -np.inf):
        out = reduction("max" if ord == np.inf else "min",
                        reduction("sum", absx, c, True), r, True)
    else:
        raise ValueError(f"numpy.linalg.norm: invalid norm order {ord!r} for matrices")
    return out if keepdims else squeeze(out, axis)


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: every vector and matrix order NumPy has."""
    x = as_tensor(x)
    ndim = need_rank(x, "numpy.linalg.norm")
    if x.dtype.kind not in "fc":
        x = cast(x, dtypes.FLOAT64)
    if axis is None:
        if ord is None:
            return _vector_norm(reshape(x, (-1,)), None, None, False) if not keepdims else \
                reshape(_vector_norm(reshape(x, (-1,)), None, None, False), (1,) * ndim)
        axis = tuple(range(ndim))
    axes = tuple(shapes.normalize_axis(a, ndim) for a in np.atleast_1d(axis).tolist())
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError("numpy.linalg.norm: improper number of dimensions to norm")


# -- diagonals, triangles and products built on them -------------------------------------------

def _diagonal_infer(x, *, offset):
    n, m = x.shape[-2:]
    if n is None or m is None:
        k = None
    else:
        k = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    return [(x.dtype, x.shape[:-2] + (k,), False)]


register("diagonal", _diagonal_infer,
         lambda xp, x, *, offset: xp.linalg.diagonal(x, offset=offset), doc="numpy.diagonal")
register("tril", lambda x, *, k: [(x.dtype, x.shape, False)],
         lambda xp, x, *, k: xp.tril(x, k=k), doc="numpy.tril")
register("triu", lambda x, *, k: [(x.dtype, x.shape, False)],
         lambda xp, x, *, k: xp.triu(x, k=k), doc="numpy.triu")


def diagonal(a, offset=0, axis1=0, axis2=1):
    x = as_tensor(a)
    ndim = need_rank(x, "numpy.diagonal")
    if ndim < 2:
        raise ValueError("numpy.diagonal needs at least two dimensions")
    a1, a2 = shapes.normalize_axis(axis1, ndim), shapes.normalize_axis(axis2, ndim)
    if a1 == a2:
        raise ValueError("numpy.diagonal: axis1 and axis2 cannot be the same")
    rest = tuple(i for i in range(ndim) if i not in (a1, a2))
    return bind1("diagonal", (transpose(x, rest + (a1, a2)),), {"offset": int(offset)})


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise TypeError("numpy.trace(..., out=...) cannot write into a symbolic tensor")
    return reduction("sum", diagonal(a, offset, axis1, axis2), -1, False, dtype)


def _triangle(name, m, k):
    x = as_tensor(m)
    ndim = need_rank(x, f"numpy.{name}")
    if ndim < 2:
        raise NotImplementedError(f"numpy.{name} of a 1-D tensor is not supported while "
                                  "tracing; reshape it to a matrix first")
    if x.dtype == np.bool_:   # the array API's triangles take numbers
        return cast(bind1(name, (cast(x, np.dtype(np.int8)),), {"k": int(k)}), np.bool_)
    return bind1(name, (x,), {"k": int(k)})


def tril(m, k=0):
    return _triangle("tril", m, k)


def triu(m, k=0):
    return _triangle("triu", m, k)


def diag(v, k=0):
    """np.diag: the k-th diagonal of a matrix, or a matrix with a vector on it (built
    with where from a constant mask, so the values are exactly v's)."""
    x = as_tensor(v)
    ndim = need_rank(x, "numpy.diag")
    if ndim == 2:
        return diagonal(x, k)
    if ndim != 1:
        raise ValueError("numpy.diag: input must be 1-d or 2-d")
    n = x.shape[0]
    if n is None:
        raise NotImplementedError("numpy.diag of a vector needs its length known while "
                                  "tracing")
    k = int(k)
    size = n + abs(k)
    mask = np.eye(size, k=k, dtype=bool)
    padded = concatenate([x, zeros((abs(k),), x.dtype)], 0) if k else x
    # k >= 0: row i holds v[i]; k < 0: column j holds v[j]
    line = getitem(padded, (slice(None), None) if k >= 0 else (None, slice(None)))
    return where(mask, line, False if x.dtype == np.bool_ else 0)


def vdot(a, b):
    x, y = ravel(as_tensor(a)), ravel(as_tensor(b))
    if x.dtype.kind == "c":
        x = ufunc(np.conjugate, x)
    return reduction("sum", ufunc(np.multiply, x, y), None, False) \
        if x.dtype.kind in "fc" or y.dtype.kind in "fc" else dot(x, y)


def kron(a, b):
    """np.kron: every element of a times all of b, laid out block by block."""
    x, y = as_tensor(a), as_tensor(b)
    nx, ny = need_rank(x, "numpy.kron"), need_rank(y, "numpy.kron")
    nd = max(nx, ny)
    # new axes by indexing with None, lengths read at run time where unknown while tracing
    x, y = getitem(x, (None,) * (nd - nx)), getitem(y, (None,) * (nd - ny))
    xe = getitem(x, tuple(d for _ in range(nd) for d in (slice(None), None)))
    ye = getitem(y, tuple(d for _ in range(nd) for d in (None, slice(None))))
    prod = ufunc(np.multiply, xe, ye, strong=True)
    return reshape(prod, tuple(dim(x, k) * dim(y, k) for k in range(nd)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """np.cross of 3-vectors (and of 2-vectors, whose result is the z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_tensor(a), as_tensor(b)
    x = moveaxis(x, axisa, -1)
    y = moveaxis(y, axisb, -1)
    nx, ny = x.shape[-1], y.shape[-1]
    if nx not in (2, 3) or ny not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 "
                         "or 3)")

    def c(t, i, n):
        return getitem(t, (Ellipsis, i)) if i < n else 0

    def mul_sub(i, j):
        return ufunc(np.subtract, ufunc(np.multiply, c(x, i, nx), c(y, j, ny), strong=True),
                     ufunc(np.multiply, c(x, j, nx), c(y, i, ny), strong=True), strong=True)

    if nx == 2 and ny == 2:
        return mul_sub(0, 1)
    out = stack([mul_sub(1, 2), mul_sub(2, 0), mul_sub(0, 1)], -1)
    return moveaxis(out, -1, axisc)


def moveaxis(a, source, destination):
    x = as_tensor(a)
    ndim = need_rank(x, "numpy.moveaxis")
    src = tuple(shapes.normalize_axis(a, ndim) for a in np.atleast_1d(source).tolist())
    dst = tuple(shapes.normalize_axis(a, ndim) for a in np.atleast_1d(destination).tolist())
    if len(src) != len(dst):
        raise ValueError("numpy.moveaxis: source and destination must have the same length")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, tuple(order))


def cond(x, p=None):
    """np.linalg.cond: for the 2-norms the ratio of extreme singular values, otherwise
    norm(x) * norm(inv(x))."""
    t = _floated(x, "cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = bind1("svdvals", (t,))
        big, small = reduction("max", s, -1), reduction("min", s, -1)
        return ufunc(np.divide, small, big) if p == -2 else ufunc(np.divide, big, small)
    n = len(t.shape)
    return ufunc(np.multiply, norm(t, p, (n - 2, n - 1)), norm(inv(t), p, (n - 2, n - 1)))


def tensorinv(a, ind=2):
    x = as_tensor(a)
    if x.shape is None or None in x.shape:
        raise NotImplementedError("numpy.linalg.tensorinv needs a known shape")
    outer_, inner_ = x.shape[:ind], x.shape[ind:]
    prod = int(np.prod(outer_))
    return reshape(inv(reshape(x, (prod, -1))), tuple(inner_) + tuple(outer_))


def tensorsolve(a, b, axes=None):
    if axes is not None:
        raise NotImplementedError("numpy.linalg.tensorsolve(axes=...) is not supported while "
                                  "tracing")
    x, y = as_tensor(a), as_tensor(b)
    if x.shape is None or None in x.shape or y.shape is None:
        raise NotImplementedError("numpy.linalg.tensorsolve needs known shapes")
    rest = x.shape[len(y.shape):]
    prod = int(np.prod(rest))
    return reshape(solve(reshape(x, (-1, prod)), reshape(y, (-1,))), tuple(rest))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    t = as_tensor(x)
    ndim = need_rank(t, "numpy.linalg.vector_norm")
    if t.dtype.kind not in "fc":
        t = cast(t, dtypes.FLOAT64)
    if axis is None:
        out = _vector_norm(reshape(t, (-1,)), ord, (0,), False)
        return reshape(out, (1,) * ndim) if keepdims else out
    axes = tuple(shapes.normalize_axis(a, ndim) for a in np.atleast_1d(axis).tolist())
    if len(axes) > 1:   # several axes: one vector per remaining index
        rest = tuple(i for i in range(ndim) if i not in axes)
        moved = transpose(t, rest + axes)
        flat = reshape(moved, tuple(t.shape[i] for i in rest) + (-1,))
        out = _vector_norm(flat, ord, (len(rest),), False)
        if keepdims:
            out = reshape(out, tuple(1 if i in axes else t.shape[i] for i in range(ndim)))
        return out
    return _vector_norm(t, ord, axes, keepdims)


# -- reverse-mode rules (batched: matrices are the last two axes) ------------------------------

def _mT(x):
    n = len(x.shape)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _col(x):
    return expand_dims(expand_dims(x, -1), -1)


def _real_only(node, what):
    if getattr(node, "node", node).inputs[0].dtype.kind == "c":
        raise NotImplementedError(f"autograph has no gradient of numpy.linalg.{what} for "
                                  "complex matrices yet (real ones only)")


def _sym_read(s, uplo):
    """The cotangent of a matrix of which only one triangle is read (cholesky, eigh), from
    the symmetric cotangent `s` of the symmetric matrix that triangle stands for."""
    tri = "tril" if uplo == "L" else "triu"
    off = -1 if uplo == "L" else 1
    return ufunc(np.add, bind1(tri, (s,), {"k": 0}), bind1(tri, (s,), {"k": off}))


def _sym(x):
    return ufunc(np.multiply, ufunc(np.add, x, _mT(x)), 0.5)


def _inv_vjp(cts, node):
    y = node.outputs[0]
    return [ufunc(np.negative, _mT(y) @ cts[0] @ _mT(y))]


def _det_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import ins
    a = ins(node)[0].value
    scale = _col(ufunc(np.multiply, cts[0], node.outputs[0]))
    return [ufunc(np.multiply, scale, _mT(bind1("inv", (a,))))]


def _solve_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import fit, ins, needs
    ra, rb = ins(node)
    a, x, g = ra.value, node.outputs[0], cts[0]
    vector = len(rb.shape) == 1
    gcol = expand_dims(g, -1) if vector else g
    gb = bind1("solve", (_mT(a), gcol))
    ga = None
    if needs(node, 0):
        xcol = expand_dims(x, -1) if vector else x
        ga = fit(ufunc(np.negative, gb @ _mT(xcol)), ra)
    if vector:
        gb = squeeze(gb, -1)
    return [ga, fit(gb, rb) if needs(node, 1) else None]


def _slogdet_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import ins
    a = ins(node)[0]
    if cts[0] is not None and a.dtype.kind == "c":
        raise NotImplementedError("autograph has no gradient of the sign of a complex "
                                  "numpy.linalg.slogdet yet")
    if cts[1] is None:
        return [None]
    g = cast(cts[1], a.dtype)
    return [ufunc(np.multiply, _col(g), _mT(bind1("inv", (a.value,))))]


def _cholesky_vjp(cts, node):
    """Murray's formula: S = L^-T Phi(L^T gL) L^-1 (Phi: lower triangle, halved diagonal),
    symmetrised; NumPy reads the lower triangle of the input."""
    _real_only(node, "cholesky")
    low, g = node.outputs[0], cts[0]
    inner = _mT(low) @ g
    phi = ufunc(np.subtract, bind1("tril", (inner,), {"k": 0}),
                ufunc(np.multiply, bind1("tril", (bind1("triu", (inner,), {"k": 0}),),
                                         {"k": 0}), 0.5))
    linv = bind1("inv", (low,))
    return [_sym_read(_sym(_mT(linv) @ phi @ linv), "L")]


def _eigh_cotangent(gw, gv, w, v):
    """V (diag(gw) + F o (V^T gV)) V^T, F_ij = 1 / (w_j - w_i) off the diagonal."""
    inner = 0.0
    if gv is not None:
        diff = ufunc(np.subtract, expand_dims(w, -2), expand_dims(w, -1))
        eye = _eye_like(diff)
        f = ufunc(np.divide, ufunc(np.subtract, 1.0, eye), ufunc(np.add, diff, eye))
        inner = ufunc(np.multiply, f, _mT(v) @ gv)
    if gw is not None:
        inner = ufunc(np.add, inner, ufunc(np.multiply, expand_dims(gw, -2),
                                           _eye_like(v)))
    return _sym(v @ inner @ _mT(v))


def _eye_like(v):
    ones = ufunc(np.add, ufunc(np.multiply, v, 0.0), 1.0)
    return bind1("tril", (bind1("triu", (ones,), {"k": 0}),), {"k": 0})


def _eigh_vjp(cts, node):
    _real_only(node, "eigh")
    w, v = node.outputs
    return [_sym_read(_eigh_cotangent(cts[0], cts[1], w, v), node.attrs["uplo"])]


def _eigvalsh_vjp(cts, node):
    _real_only(node, "eigvalsh")
    from autograph.runtime.numpy.adjoint import ins
    x = ins(node)[0].value
    uplo = node.attrs["uplo"]
    w, v = bind("eigh", (x,), {"uplo": uplo}).outputs
    return [_sym_read(_eigh_cotangent(cts[0], None, w, v), uplo)]


def _svdvals_vjp(cts, node):
    """ds = diag(U^T dA V): the cotangent U diag(gs) Vh (distinct singular values)."""
    _real_only(node, "svd")
    from autograph.runtime.numpy.adjoint import ins
    u, _, vh = bind("svd", (ins(node)[0].value,), {"full_matrices": False}).outputs
    return [u @ ufunc(np.multiply, expand_dims(cts[0], -1), vh)]


def _svd_vjp(cts, node):
    """The thin SVD A = U S Vh (distinct nonzero singular values), V = Vh^T:
    U (F o (U^T gU - gU^T U) S + S F o (V^T gV - gV^T V) + diag(gs)) Vh
    + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - V Vh), F_ij = 1 / (s_j^2 - s_i^2) off the
    diagonal. With full_matrices=True only the first k = min(m, n) singular vectors are
    unique, so a non-square matrix differentiates through them alone."""
    _real_only(node, "svd")
    gu, gs, gvh = cts
    u, s, vh = node.outputs
    if node.attrs["full_matrices"]:
        m, n = getattr(node, "node", node).inputs[0].shape[-2:]
        if m is None or n is None:
            raise NotImplementedError("the gradient of numpy.linalg.svd(full_matrices=True) "
                                      "needs the matrix shape known while tracing")
        k = min(m, n)
        extra = [g for g, size in ((gu, m), (gvh, n)) if g is not None and size > k]
        if extra:
            raise NotImplementedError(
                "autograph differentiates numpy.linalg.svd(full_matrices=True) of a "
                "non-square matrix through its singular values only: the extra singular "
                "vectors are not unique. Use full_matrices=False")
        u = getitem(u, (Ellipsis, slice(None), slice(0, k)))
        vh = getitem(vh, (Ellipsis, slice(0, k), slice(None)))
    if gu is None and gvh is None:
        return [u @ ufunc(np.multiply, expand_dims(gs, -1), vh)]
    s2 = ufunc(np.multiply, s, s)
    diff = ufunc(np.subtract, expand_dims(s2, -2), expand_dims(s2, -1))
    eye = _eye_like(diff)
    inner = 0.0 if gs is None else ufunc(np.multiply, expand_dims(gs, -2), eye)
    f = ufunc(np.divide, ufunc(np.subtract, 1.0, eye), ufunc(np.add, diff, eye))
    row, col = expand_dims(s, -1), expand_dims(s, -2)   # S @ X scales rows, X @ S columns
    out = None
    if gu is not None:
        ut_gu = _mT(u) @ gu
        j = ufunc(np.multiply, f, ufunc(np.subtract, ut_gu, _mT(ut_gu)))
        inner = ufunc(np.add, inner, ufunc(np.multiply, j, col))
        # (I - U U^T) gU S^-1 Vh
        rest = ufunc(np.subtract, gu, u @ ut_gu)
        out = ufunc(np.divide, rest, col) @ vh
    if gvh is not None:
        v, gv = _mT(vh), _mT(gvh)
        vt_gv = vh @ gv
        k_ = ufunc(np.multiply, f, ufunc(np.subtract, vt_gv, _mT(vt_gv)))
        inner = ufunc(np.add, inner, ufunc(np.multiply, row, k_))
        # U S^-1 gVh (I - V Vh)
        rest = ufunc(np.subtract, gvh, _mT(vt_gv) @ vh)
        term = u @ ufunc(np.divide, rest, row)
        out = term if out is None else ufunc(np.add, out, term)
    core = u @ inner @ vh
    return [ufunc(np.add, core, out)]


def _eye(n, dtype):
    from autograph.runtime.numpy.array_ops import zeros as _zeros
    ones = ufunc(np.add, _zeros([n, n], dtype=dtype), 1.0)
    return bind1("tril", (bind1("triu", (ones,), {"k": 0}),), {"k": 0})


def _pinv_cotangent(a, p, g):
    """The cotangent of A from that of P = pinv(A) (A of constant rank):
    -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""
    from autograph.runtime.numpy.adjoint import dims
    m, n = dims(a)[-2:]
    gt = _mT(g)
    left = ufunc(np.subtract, _eye(m, a.dtype), a @ p)
    right = ufunc(np.subtract, _eye(n, a.dtype), p @ a)
    out = ufunc(np.negative, _mT(p) @ g @ _mT(p))
    out = ufunc(np.add, out, left @ gt @ p @ _mT(p))
    return ufunc(np.add, out, _mT(p) @ p @ gt @ right)


def _pinv_vjp(cts, node):
    _real_only(node, "pinv")
    from autograph.runtime.numpy.adjoint import ins
    return [_pinv_cotangent(ins(node)[0].value, node.outputs[0], cts[0])]


def _lstsq_vjp(cts, node):
    """x = pinv(a) @ b: through pinv's rule; singular values through svdvals'."""
    _real_only(node, "lstsq")
    from autograph.runtime.numpy.adjoint import ins
    gx, gres, _, gs = cts
    if gres is not None:
        raise NotImplementedError("autograph has no gradient of the residuals of "
                                  "numpy.linalg.lstsq yet; compute them as "
                                  "np.sum((b - a @ x) ** 2, axis=0)")
    a, b = (r.value for r in ins(node))
    ga = gb = None
    if gx is not None:
        p = bind1("pinv", (a,), {"rtol": node.attrs["rcond"]})
        vector = len(b.shape) == 1
        gxm = expand_dims(gx, -1) if vector else gx
        bm = expand_dims(b, -1) if vector else b
        ga = _pinv_cotangent(a, p, gxm @ _mT(bm))
        gb = _mT(p) @ gxm
        gb = squeeze(gb, -1) if vector else gb
    if gs is not None:
        u, _, vh = bind("svd", (a,), {"full_matrices": False}).outputs
        extra = u @ ufunc(np.multiply, expand_dims(gs, -1), vh)
        ga = extra if ga is None else ufunc(np.add, ga, extra)
    return [ga, gb]


def _qr_vjp(cts, node):
    """Reduced QR of a tall (m >= n) matrix: with M = R gR^T - gQ^T Q, the cotangent is
    (gQ + Q copyltu(M)) R^-T, copyltu(M) the symmetric matrix of M's lower triangle."""
    _real_only(node, "qr")
    mode = node.attrs["mode"]
    static = getattr(node, "node", node).inputs[0].shape
    m, n = static[-2:]
    if mode == "complete" and not (m is not None and n is not None and m == n):
        raise NotImplementedError("autograph differentiates numpy.linalg.qr of tall or square "
                                  "matrices in the reduced mode only")
    if m is None or n is None or m < n:
        raise NotImplementedError("autograph differentiates numpy.linalg.qr only for matrices "
                                  "with at least as many rows as columns, known while tracing")
    if mode == "r":
        from autograph.runtime.numpy.adjoint import ins
        q, r = bind("qr", (ins(node)[0].value,), {"mode": "reduced"}).outputs
        gq, gr = None, cts[0]
    else:
        (q, r), (gq, gr) = node.outputs, cts
    mm = 0.0
    if gr is not None:
        mm = r @ _mT(gr)
    if gq is not None:
        mm = ufunc(np.subtract, mm, _mT(gq) @ q)
    low = bind1("tril", (mm,), {"k": -1})
    sym = ufunc(np.add, ufunc(np.add, low, _mT(low)),
                ufunc(np.subtract, mm, ufunc(np.add, low, bind1("triu", (mm,), {"k": 1}))))
    total = q @ sym
    if gq is not None:
        total = ufunc(np.add, gq, total)
    return [total @ _mT(bind1("inv", (r,)))]


def _diagonal_vjp(cts, node):
    """The diagonal's cotangent put back on the (offset) diagonal of zeros: a 0/1 mask of
    that diagonal times the cotangent laid out along the columns (entry i sits in column
    i + max(offset, 0))."""
    from autograph.runtime.numpy.adjoint import dims, ins
    shape, offset, g = dims(ins(node)[0]), node.attrs["offset"], cts[0]
    ones = ufunc(np.add, zeros(shape, dtype=g.dtype), 1.0)
    mask = bind1("tril", (bind1("triu", (ones,), {"k": offset}),), {"k": offset})
    lead = max(offset, 0)
    pieces = ([zeros(shape[:-2] + [lead], dtype=g.dtype)] if lead else []) + [g]
    missing = shape[-1] - lead - dims(g)[-1]
    if not isinstance(missing, int) or missing > 0:
        pieces.append(zeros(shape[:-2] + [missing], dtype=g.dtype))
    columns = concatenate(pieces, axis=-1) if len(pieces) > 1 else g
    return [ufunc(np.multiply, mask, expand_dims(columns, -2))]


defvjp("inv", _inv_vjp)
defvjp("det", _det_vjp)
defvjp("solve", _solve_vjp)
defvjp("slogdet", _slogdet_vjp)
defvjp("cholesky", _cholesky_vjp)
defvjp("eigh", _eigh_vjp)
defvjp("eigvalsh", _eigvalsh_vjp)
defvjp("svdvals", _svdvals_vjp)
defvjp("svd", _svd_vjp)
defvjp("qr", _qr_vjp)
defvjp("pinv", _pinv_vjp)
defvjp("lstsq", _lstsq_vjp)
defvjp("diagonal", _diagonal_vjp)
defvjp("tril", lambda cts, node: [bind1("tril", (cts[0],), node.attrs)])
defvjp("triu", lambda cts, node: [bind1("triu", (cts[0],), node.attrs)])
nondifferentiable("matrix_rank")
