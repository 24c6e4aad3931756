"""The ufuncs of `jax.numpy` beyond the array API standard: cbrt, fabs, float_power,
reciprocal, heaviside, ldexp, logaddexp2, frexp, modf, bitwise_count (composed from the
staged ufuncs, so they are differentiable through their parts), and gcd, lcm, nextafter,
spacing (primitives of their own: integer or step functions, marked non-differentiable).

A composed ufunc asks NumPy for its loop dtypes (`np.ufunc.resolve_dtypes`, as every
staged ufunc does), casts its operands to them, computes in that dtype and casts to
NumPy's output dtypes, so dtype promotion (NEP 50 included) and broadcasting are NumPy's.
"""

import numpy as np

from autograph.runtime.ir import dtypes
from autograph.runtime.ir.primitives import current_graph, nondifferentiable
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import (
    UFUNCS, _elementwise, as_tensor, cast, describe, operand_key, ufunc)
from autograph.runtime.numpy.array_ops import where


class Composed:
    """A NumPy ufunc staged as a composition `fn(*operands_in_loop_dtypes)`."""

    def __init__(self, uf, fn):
        self.ufunc, self.fn = uf, fn

    def __call__(self, *args, strong=False):
        uf = self.ufunc
        if len(args) != uf.nin:
            raise TypeError(f"numpy.{uf.__name__} takes {uf.nin} argument(s), got {len(args)}")
        current_graph(args)
        keys = tuple(operand_key(a)[0] for a in args)
        try:
            ins, outs = dtypes.resolve_ufunc(uf, keys)
        except TypeError as e:
            raise TypeError(f"numpy.{uf.__name__} is not defined for {describe(args)}: "
                            f"{e}") from None
        xs = [cast(a, dt) if isinstance(a, Tensor) else as_tensor(a, dt)
              for a, dt in zip(args, ins)]
        got = self.fn(*xs)
        got = got if isinstance(got, tuple) else (got,)
        res = tuple(cast(as_tensor(g), dt) for g, dt in zip(got, outs))
        return res if uf.nout > 1 else res[0]


def _u(uf, *args):
    return ufunc(uf, *args)


def _cbrt(x):
    y = _u(np.multiply, _u(np.sign, x), _u(np.power, _u(np.absolute, x), 1.0 / 3.0))
    # one Newton step on y**3 = x: the power's rounding is well below the dtype's ulp after
    y3 = _u(np.multiply, _u(np.multiply, y, y), y)
    step = _u(np.divide, _u(np.subtract, y3, x), _u(np.multiply, 3.0, _u(np.multiply, y, y)))
    ok = _u(np.logical_and, _u(np.isfinite, y), _u(np.not_equal, y, 0))
    return where(ok, _u(np.subtract, y, where(ok, step, 0)), y)


def _reciprocal(x):
    if x.dtype.kind in "fc":
        return _u(np.divide, 1, x)
    # integers: 1 // x truncated toward zero, as C does (NumPy's integer loop)
    one = _u(np.equal, _u(np.absolute, x), 1)
    return where(one, x, where(_u(np.equal, x, 0), np.iinfo(x.dtype).min, 0)
                 if x.dtype.kind == "i" else 0)


def _heaviside(x1, x2):
    step = where(_u(np.less, x1, 0), 0, where(_u(np.greater, x1, 0), 1, x2))
    return where(_u(np.isnan, x1), x1, step)


def _ldexp(x1, x2):
    # two factors, so that 2**x2 does not overflow where x1 * 2**x2 does not
    e = cast(x2, np.dtype(np.int64))
    h = _u(np.floor_divide, e, 2)
    two = np.asarray(2, x1.dtype)
    f1 = _u(np.power, two, cast(h, x1.dtype))
    f2 = _u(np.power, two, cast(_u(np.subtract, e, h), x1.dtype))
    return _u(np.multiply, _u(np.multiply, x1, f1), f2)


def _logaddexp2(a, b):
    m = _u(np.maximum, a, b)
    d = _u(np.negative, _u(np.absolute, _u(np.subtract, a, b)))
    log2e = 1.0 / np.log(2.0)
    out = _u(np.add, m, _u(np.multiply, _u(np.log1p, _u(np.exp2, d)), log2e))
    return where(_u(np.equal, a, b), _u(np.add, a, 1), out)   # inf, -inf: NumPy's answer


def _frexp(x):
    finite = _u(np.logical_and, _u(np.isfinite, x), _u(np.not_equal, x, 0))
    ax = where(finite, _u(np.absolute, x), 1)
    e = _u(np.add, _u(np.floor, _u(np.log2, ax)), 1)
    m = _u(np.divide, x, _u(np.exp2, e))
    # log2 may round across a power of two: move the mantissa back into [0.5, 1)
    big = _u(np.greater_equal, _u(np.absolute, m), 1)
    m, e = where(big, _u(np.divide, m, 2), m), where(big, _u(np.add, e, 1), e)
    small = _u(np.logical_and, _u(np.less, _u(np.absolute, m), 0.5), finite)
    m, e = where(small, _u(np.multiply, m, 2), m), where(small, _u(np.subtract, e, 1), e)
    return where(finite, m, x), where(finite, e, 0)


def _modf(x):
    whole = _u(np.trunc, x)
    frac = where(_u(np.isinf, x), 0, _u(np.subtract, x, whole))
    return _u(np.copysign, frac, x), whole


_SWAR = ((1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F))


def _bitwise_count(x):
    if x.dtype.kind == "i":
        x = _u(np.absolute, x)   # NumPy counts the bits of |x|
    u = cast(x, np.dtype(np.uint64))
    u = _u(np.subtract, u, _u(np.bitwise_and, _u(np.right_shift, u, 1), _SWAR[0][1]))
    u = _u(np.add, _u(np.bitwise_and, u, _SWAR[1][1]),
           _u(np.bitwise_and, _u(np.right_shift, u, 2), _SWAR[1][1]))
    u = _u(np.bitwise_and, _u(np.add, u, _u(np.right_shift, u, 4)), _SWAR[2][1])
    return _u(np.right_shift, _u(np.multiply, u, 0x0101010101010101), 56)


for _uf, _fn in ((np.cbrt, _cbrt), (np.fabs, lambda x: _u(np.absolute, x)),
                 (np.float_power, lambda a, b: _u(np.power, a, b)),
                 (np.reciprocal, _reciprocal), (np.heaviside, _heaviside),
                 (np.ldexp, _ldexp), (np.logaddexp2, _logaddexp2), (np.frexp, _frexp),
                 (np.modf, _modf)):
    UFUNCS[_uf] = Composed(_uf, _fn)
if hasattr(np, "bitwise_count"):
    UFUNCS[np.bitwise_count] = Composed(np.bitwise_count, _bitwise_count)


# -- primitives of their own ---------------------------------------------------------------------

def _gcd_kernel(xp, a, b):
    a, b = xp.broadcast_arrays(xp.abs(a), xp.abs(b))
    while bool(xp.any(b != 0)):   # Euclid, every element at once; done ones keep b == 0
        nz = b != 0
        a, b = xp.where(nz, b, a), xp.where(nz, a % xp.where(nz, b, xp.ones_like(b)),
                                            xp.zeros_like(b))
    return a


def _lcm_kernel(xp, a, b):
    g = _gcd_kernel(xp, a, b)
    safe = xp.where(g == 0, xp.ones_like(g), g)
    return xp.where(g == 0, xp.zeros_like(g), xp.abs((a // safe) * b))


def _spacing_kernel(xp, x):
    big = xp.abs(x) + xp.inf   # inf, NaN where x is NaN
    return xp.nextafter(x, xp.where(x < 0, -big, big)) - x


_elementwise(np.gcd, kernel=_gcd_kernel)
_elementwise(np.lcm, kernel=_lcm_kernel)
_elementwise(np.nextafter)
_elementwise(np.spacing, kernel=_spacing_kernel)
# integer functions, and step functions of their float inputs: zero cotangents
nondifferentiable("gcd", "lcm", "nextafter", "spacing")
