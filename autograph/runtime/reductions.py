"""Reductions on symbolic tensors: sum, prod, mean, max, min, any, all, argmax, argmin,
cumsum, cumprod, with NumPy's result dtypes (small ints and bools sum in 64 bits, the mean
of integers is float64). Inputs are cast so the array API kernel computes in that dtype."""

import numpy as np

from autograph.runtime import dtypes, shapes
from autograph.runtime.dtypes import BOOL, INT8, INT64
from autograph.runtime.elementwise import as_tensor, cast
from autograph.runtime.primitives import bind1, register
from autograph.runtime.shape_ops import reshape


# -- reductions ----------------------------------------------------------------------------

def _sum_dtype(dtype):
    """NumPy's accumulator for sum/prod/cumsum: small ints and bools widen to 64 bits."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return INT64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _mean_dtype(dtype):
    return dtype if dtype.kind in "fc" else dtypes.FLOAT64


def _reduce_infer(out_dtype, keeps_weak):
    def infer(x, *, axis, keepdims, dtype=None):
        out = dtype if dtype is not None else out_dtype(x.dtype)
        if isinstance(axis, int):   # argmax/argmin take one axis
            axis = (axis,)
        return [(out, shapes.reduce(x.shape, axis, keepdims), keeps_weak and x.weak)]
    return infer


_REDUCTIONS = {
    "sum": _sum_dtype, "prod": _sum_dtype, "mean": _mean_dtype,
    "max": lambda d: d, "min": lambda d: d,
    "any": lambda d: BOOL, "all": lambda d: BOOL,
    "argmax": lambda d: INT64, "argmin": lambda d: INT64,
}
for _name, _rule in _REDUCTIONS.items():
    _keeps_weak = _name not in ("any", "all", "argmax", "argmin")
    register(_name, _reduce_infer(_rule, _keeps_weak), _name, doc=f"numpy.{_name}")


def reduction(name, x, axis=None, keepdims=False, dtype=None):
    """Stage the NumPy reduction `name` (sum, prod, mean, max, min, any, all, argmax,
    argmin) of `x` over `axis` (None: all axes)."""
    x = as_tensor(x)
    if name in ("argmax", "argmin"):
        if axis is not None and not isinstance(axis, int):
            raise TypeError(f"numpy.{name}: axis must be an int or None, not {axis!r}")
        ndim = None if x.shape is None else len(x.shape)
        axes = None if axis is None else shapes.normalize_axes(axis, ndim)
        if x.dtype == BOOL:
            x = cast(x, INT8)
        return bind1(name, (x,), {"axis": None if axes is None else axes[0],
                                  "keepdims": bool(keepdims)})
    axes = shapes.normalize_axes(axis, None if x.shape is None else len(x.shape))
    attrs = {"axis": axes, "keepdims": bool(keepdims)}
    if name in ("sum", "prod", "mean"):
        rule = _REDUCTIONS[name]
        out_dtype = dtypes.as_dtype(dtype) if dtype is not None else rule(x.dtype)
        x = cast(x, out_dtype if name != "mean" else _mean_dtype(out_dtype), weak=x.weak)
        if name != "mean":
            attrs["dtype"] = out_dtype
        result = bind1(name, (x,), attrs)
        return result if name != "mean" or result.dtype == out_dtype else cast(result, out_dtype)
    if dtype is not None:
        raise TypeError(f"numpy.{name} takes no dtype argument")
    if x.dtype == BOOL and name in ("max", "min"):   # the array API orders numbers only
        name = "any" if name == "max" else "all"
    return bind1(name, (x,), attrs)


def _cumulative_infer(x, *, axis, dtype):
    return [(dtype, x.shape, x.weak)]


register("cumulative_sum", _cumulative_infer, "cumulative_sum", doc="numpy.cumsum")
register("cumulative_prod", _cumulative_infer, "cumulative_prod", doc="numpy.cumprod")


def cumulative(name, x, axis=None, dtype=None):
    """np.cumsum / np.cumprod: axis None runs over the flattened tensor."""
    x = as_tensor(x)
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    elif x.shape is not None:
        axis = shapes.normalize_axis(axis, len(x.shape))
    out_dtype = dtypes.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)
    x = cast(x, out_dtype, weak=x.weak)
    return bind1(name, (x,), {"axis": axis, "dtype": out_dtype})
