"""SciPy functions covered directly: what converted code runs for them on tensors.

`scipy.linalg.solve`, `cholesky`, `inv`, `det`, `norm`, ... and the `logpdf`/`cdf` of the
common `scipy.stats` distributions convert their arguments with `np.asarray`, so SciPy
itself cannot run on a traced tensor. Converted code calls every function through
`converted_call`, which asks `lookup(f)` first: for these, it runs the staged equivalent
below (NumPy's linear algebra and SciPy's special functions on tensors, both primitives
with gradient rules). Called on arrays, `lookup` is never asked: SciPy runs as usual.
Unconverted code (`autograph=False`) reaches SciPy and gets its clear error
(library_calls).
"""

import math
import sys

import numpy as np

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
           assume_a=None, transposed=False):
    a = np.swapaxes(a, -1, -2) if transposed else a
    return np.linalg.solve(a, b)


def _cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    factor = np.linalg.cholesky(a)   # the lower factor; SciPy's default is the upper one
    return factor if lower else np.conjugate(np.swapaxes(factor, -1, -2))


def _norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    return np.linalg.norm(a, ord, axis, keepdims)


def _plain(fn):
    def wrapper(a, overwrite_a=False, check_finite=True):
        return fn(a)
    return wrapper


def _eigh(a, b=None, *, lower=True, eigvals_only=False, **unused):
    if b is not None:
        return NotImplemented
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def _svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
         lapack_driver="gesdd"):
    return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152   # the 1-norm up to which Pade 13 is accurate (Higham 2005)


def _expm(A):
    """The matrix exponential by scaling and squaring with the [13/13] Pade approximant
    (Higham 2005, SciPy's algorithm at its highest order): A / 2**s has 1-norm below
    theta13, and the s squarings run in a while_loop (s is only known when the graph runs)."""
    from autograph.runtime.control_flow import while_loop
    n = A.shape[-1]
    norm = np.max(np.sum(np.abs(A), axis=-2))
    s = np.maximum(0.0, np.ceil(np.log2(np.maximum(norm, 1e-300) / _THETA13)))
    A = A / np.power(2.0, s)
    b, eye = _PADE13, np.eye(n, dtype=A.dtype)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2)
             + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
        + b[0] * eye
    R = np.linalg.solve(V - U, V + U)
    steps = s.astype(np.int64)
    _, R = while_loop(lambda i, r: i < steps, lambda i, r: (i + 1, r @ r), (np.int64(0), R))
    return R


def _expm_call(A):
    return _expm(A) if getattr(A, "ndim", 0) == 2 else NotImplemented


LINALG = {"expm": _expm_call, "solve": _solve, "cholesky": _cholesky, "norm": _norm,
          "inv": _plain(np.linalg.inv),
          "det": _plain(np.linalg.det), "eigh": _eigh, "svd": _svd}


# -- distributions: (name, method) -> fn(x, *shape args, loc, scale) -------------------------

def _special(name):
    return getattr(sys.modules["scipy.special"], name)


def _standard(x, loc, scale):
    return (x - loc) / scale


def _norm_logpdf(x, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - np.log(scale)


def _norm_pdf(x, loc=0.0, scale=1.0):
    return np.exp(_norm_logpdf(x, loc, scale))


def _norm_cdf(x, loc=0.0, scale=1.0):
    return _special("ndtr")(_standard(x, loc, scale))


def _norm_logcdf(x, loc=0.0, scale=1.0):
    return _special("log_ndtr")(_standard(x, loc, scale))


def _norm_ppf(q, loc=0.0, scale=1.0):
    return loc + scale * _special("ndtri")(q)


def _logistic_cdf(x, loc=0.0, scale=1.0):
    return _special("expit")(_standard(x, loc, scale))


def _logistic_logpdf(x, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    return -z - 2.0 * np.logaddexp(0.0, -z) - np.log(scale)


def _gamma_logpdf(x, a, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    out = _special("xlogy")(a - 1.0, z) - z - _special("gammaln")(a) - np.log(scale)
    return np.where(z >= 0, out, -np.inf)


def _gamma_cdf(x, a, loc=0.0, scale=1.0):
    return _special("gammainc")(a, np.maximum(_standard(x, loc, scale), 0.0))


def _expon_logpdf(x, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    return np.where(z >= 0, -z - np.log(scale), -np.inf)


DISTRIBUTIONS = {
    ("norm", "logpdf"): _norm_logpdf, ("norm", "pdf"): _norm_pdf, ("norm", "cdf"): _norm_cdf,
    ("norm", "logcdf"): _norm_logcdf, ("norm", "ppf"): _norm_ppf,
    ("logistic", "cdf"): _logistic_cdf, ("logistic", "logpdf"): _logistic_logpdf,
    ("gamma", "logpdf"): _gamma_logpdf, ("gamma", "cdf"): _gamma_cdf,
    ("expon", "logpdf"): _expon_logpdf,
}


def _polygamma(n, x):
    from autograph.runtime.numpy import scipy_special
    if not isinstance(n, (int, np.integer)):
        return NotImplemented   # an array of orders: SciPy's own (and its error)
    return scipy_special.polygamma(int(n), x)


def _zeta(x, q=None, out=None):
    from autograph.runtime.numpy.scipy_special import Special
    if out is not None:
        return NotImplemented
    return Special().zeta(x, 1.0 if q is None else q)   # Riemann's is Hurwitz's at q = 1


SPECIAL = {"polygamma": _polygamma, "zeta": _zeta}


def lookup(f):
    """The staged version of SciPy callable `f`, or None."""
    name = getattr(f, "__name__", None)
    owner = getattr(f, "__self__", None)
    if owner is not None:   # a method of a scipy.stats distribution instance
        dist = getattr(owner, "name", None)
        stats = sys.modules.get("scipy.stats")
        if stats is not None and isinstance(dist, str) and getattr(stats, dist, None) is owner:
            return DISTRIBUTIONS.get((dist, name))
        return None
    special = sys.modules.get("scipy.special")
    if special is not None and name in SPECIAL and getattr(special, name, None) is f:
        return SPECIAL[name]
    linalg = sys.modules.get("scipy.linalg")
    if linalg is not None and name in LINALG and getattr(linalg, name, None) is f:
        return LINALG[name]
    return None


def call(f, args, kwargs):
    """`f(*args, **kwargs)`: ours when an argument is a tensor and we cover `f`."""
    from autograph.runtime.numpy.packing import contains_tensor
    if any(contains_tensor(a) for a in args) or any(contains_tensor(v)
                                                    for v in kwargs.values()):
        ours = lookup(f)
        if ours is not None:
            out = ours(*args, **kwargs)
            if out is not NotImplemented:
                return out
    return f(*args, **kwargs)
