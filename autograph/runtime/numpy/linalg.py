"""numpy.linalg on symbolic tensors: inv, det and solve, through the array API's linalg
extension (`xp.linalg`). Like NumPy, integer and bool input is computed in float64."""

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.numpy.elementwise import as_tensor, cast, common
from autograph.runtime.ir.primitives import bind1, register


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
