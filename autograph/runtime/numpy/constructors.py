"""NumPy's constructors whose arguments are lengths or scalars, when one of them is a
tensor: eye, identity, tri, the windows (bartlett, blackman, hamming, hanning, kaiser),
fft.fftfreq/rfftfreq, the index helpers (indices, ix_, diag_indices, tril/triu_indices,
mask_indices), logspace/geomspace; i0 (kaiser needs it). A length given as an integer
scalar tensor gives an unknown (None) dimension. With only Python values these run as
NumPy's own functions (converted code calls NumPy directly then), so the results here are
built from the same formulas NumPy uses and agree with them.

Also the names that need nothing from a tensor: dtype and shape queries
(`NATIVE`), which work unchanged inside a traced function.
"""

import numpy as np

from autograph.runtime.ir.dtypes import BOOL, FLOAT64
from autograph.runtime.numpy.array_ops import arange, ones, where
from autograph.runtime.numpy.elementwise import as_tensor, cast, ufunc
from autograph.runtime.numpy.indexing import getitem


def _u(uf, *args):
    return ufunc(uf, *args)


def _grid(n, m, k):
    """(column - row) for an n x m grid, and whether it is integer-valued: what eye and tri
    compare against k."""
    m = n if m is None else m
    rows = getitem(arange(n), (slice(None), None))
    cols = getitem(arange(m), (None, slice(None)))
    return _u(np.subtract, cols, rows)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    return cast(_u(np.equal, _grid(N, M, 0), k), np.dtype(dtype))


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    return cast(_u(np.less_equal, _grid(N, M, 0), k), np.dtype(dtype))


# -- windows: NumPy's formulas over n = arange(1 - M, M, 2) -------------------------------------

def _window(M, body):
    m = as_tensor(M)
    n = cast(arange(_u(np.subtract, 1, m), m, 2), FLOAT64)
    denom = cast(_u(np.subtract, m, 1), FLOAT64)
    one = _u(np.equal, m, 1)   # M == 1: NumPy's ones(1) (the formula would divide by 0)
    return where(one, 1.0, body(n, where(one, 1.0, denom)))


def hanning(M):
    return _window(M, lambda n, d: _u(np.add, 0.5, _u(np.multiply, 0.5, _u(
        np.cos, _u(np.divide, _u(np.multiply, np.pi, n), d)))))


def hamming(M):
    return _window(M, lambda n, d: _u(np.add, 0.54, _u(np.multiply, 0.46, _u(
        np.cos, _u(np.divide, _u(np.multiply, np.pi, n), d)))))


def blackman(M):
    def body(n, d):
        t = _u(np.divide, _u(np.multiply, np.pi, n), d)
        return _u(np.add, _u(np.add, 0.42, _u(np.multiply, 0.5, _u(np.cos, t))),
                  _u(np.multiply, 0.08, _u(np.cos, _u(np.multiply, 2.0, t))))
    return _window(M, body)


def bartlett(M):
    def body(n, d):
        r = _u(np.divide, n, d)
        return where(_u(np.less_equal, n, 0), _u(np.add, 1, r), _u(np.subtract, 1, r))
    return _window(M, body)


def kaiser(M, beta):
    m = as_tensor(M)
    n = cast(arange(m), FLOAT64)
    alpha = _u(np.divide, cast(_u(np.subtract, m, 1), FLOAT64), 2.0)
    safe = where(_u(np.equal, alpha, 0), 1.0, alpha)
    r = _u(np.divide, _u(np.subtract, n, alpha), safe)
    arg = _u(np.multiply, beta, _u(np.sqrt, _u(np.subtract, 1, _u(np.multiply, r, r))))
    return _u(np.divide, i0(arg), i0(cast(as_tensor(beta), FLOAT64)))


def i0(x):
    """The modified Bessel function of order 0: its power series for |x| <= 15 (terms
    fall below 1e-17 of the sum by 60 terms), the asymptotic series beyond."""
    t = as_tensor(x)
    t = cast(t, FLOAT64) if t.dtype.kind in "biu" else t
    if t.dtype.kind == "c":
        raise TypeError("numpy.i0 is not defined for complex values")
    out_dtype = t.dtype
    a = cast(_u(np.absolute, t), FLOAT64)   # the series' constants overflow float32
    small = _u(np.less_equal, a, 15.0)
    s = where(small, a, 15.0)
    q = _u(np.multiply, _u(np.multiply, s, s), 0.25)
    term = total = _u(np.add, _u(np.multiply, q, 0), 1.0)
    for k in range(1, 60):
        term = _u(np.multiply, term, _u(np.divide, q, float(k * k)))
        total = _u(np.add, total, term)
    b = where(small, 15.0, a)
    inv = _u(np.divide, 1.0, _u(np.multiply, 8.0, b))
    coef = 1.0
    series = power = _u(np.add, _u(np.multiply, inv, 0), 1.0)
    for k in range(1, 30):
        coef *= (2 * k - 1) ** 2 / k
        power = _u(np.multiply, power, inv)
        series = _u(np.add, series, _u(np.multiply, power, coef))
    big = _u(np.divide, _u(np.multiply, _u(np.exp, b), series),
             _u(np.sqrt, _u(np.multiply, 2 * np.pi, b)))
    return cast(where(small, total, big), out_dtype)


# -- fft frequencies ----------------------------------------------------------------------------

def fftfreq(n, d=1.0, device=None):
    m = as_tensor(n)
    k = arange(m)
    positive = _u(np.add, _u(np.floor_divide, _u(np.subtract, m, 1), 2), 1)
    k = where(_u(np.less, k, positive), k, _u(np.subtract, k, m))
    return _u(np.multiply, k, _u(np.divide, 1.0, _u(np.multiply, m, d)))


def rfftfreq(n, d=1.0, device=None):
    m = as_tensor(n)
    k = arange(_u(np.add, _u(np.floor_divide, m, 2), 1))
    return _u(np.multiply, k, _u(np.divide, 1.0, _u(np.multiply, m, d)))


# -- index helpers -------------------------------------------------------------------------------

def _nonzero(mask):
    from autograph.runtime.numpy.sorting import nonzero
    return nonzero(mask)


def tril_indices(n, k=0, m=None):
    return _nonzero(_u(np.less_equal, _grid(n, m, 0), k))


def triu_indices(n, k=0, m=None):
    return _nonzero(_u(np.greater_equal, _grid(n, m, 0), k))


def mask_indices(n, mask_func, k=0):
    m = mask_func(ones((n, n), dtype=int), k)
    return _nonzero(_u(np.not_equal, m, 0))


def diag_indices(n, ndim=2):
    return (arange(n),) * ndim


def indices(dimensions, dtype=int, sparse=False):
    dims = tuple(dimensions)
    grids = []
    for i, d in enumerate(dims):
        key = tuple(slice(None) if j == i else None for j in range(len(dims)))
        grids.append(cast(getitem(arange(d), key), np.dtype(dtype)))
    if sparse:
        return tuple(grids)
    zero = None
    for g in grids:   # 0 in the full shape: broadcasting makes every grid full
        z = _u(np.multiply, g, 0)
        zero = z if zero is None else _u(np.add, zero, z)
    from autograph.runtime.numpy.joins import stack
    return stack([_u(np.add, g, zero) for g in grids], 0) if grids else \
        as_tensor(np.zeros((0,), np.dtype(dtype)))


def ix_(*args):
    out = []
    for i, a in enumerate(args):
        t = as_tensor(a)
        if len(t.shape) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if t.dtype == BOOL:
            t = _nonzero(t)[0]
        key = tuple(slice(None) if j == i else None for j in range(len(args)))
        out.append(getitem(t, key))
    return tuple(out)


# -- logspace, geomspace -------------------------------------------------------------------------

def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    from autograph.runtime.numpy.composites import linspace
    y = linspace(start, stop, num, endpoint, axis=axis)
    out = _u(np.power, base, y)
    return out if dtype is None else cast(out, np.dtype(dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    a = _u(np.multiply, as_tensor(start), 1.0)
    b = _u(np.multiply, as_tensor(stop), 1.0)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        raise NotImplementedError("numpy.geomspace of complex values is not supported while "
                                  "tracing")
    sign = _u(np.sign, a)
    a, b = _u(np.divide, a, sign), _u(np.divide, b, sign)
    y = logspace(_u(np.log10, a), _u(np.log10, b), num, endpoint, 10.0, axis=axis)
    i = np.arange(num)
    if num > 0:
        y = where(i == 0, a, y)   # NumPy sets the ends exactly
    if num > 1 and endpoint:
        y = where(i == num - 1, b, y)
    y = _u(np.multiply, sign, y)
    dt = np.result_type(a.dtype, b.dtype, float(num), np.zeros((), dtype))
    return cast(y, dt if dtype is None else np.dtype(dtype))


FUNCTIONS = {
    np.eye: eye, np.identity: identity, np.tri: tri, np.hanning: hanning,
    np.hamming: hamming, np.blackman: blackman, np.bartlett: bartlett, np.kaiser: kaiser,
    np.i0: i0, np.fft.fftfreq: fftfreq, np.fft.rfftfreq: rfftfreq,
    np.tril_indices: tril_indices, np.triu_indices: triu_indices,
    np.mask_indices: mask_indices, np.diag_indices: diag_indices, np.indices: indices,
    np.ix_: ix_, np.logspace: logspace, np.geomspace: geomspace,
}

# names that need nothing from a tensor: dtype and shape questions, print options, and
# fromfunction (it calls the function on index arrays made from a static shape)
NATIVE = [getattr(np, name) for name in (
    "isscalar", "iterable", "broadcast_shapes", "promote_types", "issubdtype", "isdtype",
    "get_printoptions", "set_printoptions", "printoptions", "fromfunction")
    if hasattr(np, name)]
