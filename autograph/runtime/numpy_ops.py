"""NumPy on symbolic tensors: the primitives behind `x + 1`, `np.tanh(x)`, `np.sum(x)`, `x[i]`.

Each primitive is registered with an `infer` rule (dtype and static shape, following NumPy:
NEP 50 weak scalars, broadcasting, reductions) and a kernel: the name of a function of the
Python array API namespace `xp`, or a small function `kernel(xp, *arrays, **attrs)` built
only from namespace calls, so one table runs on NumPy, CuPy, torch and array-api-strict.

Kernels in the array API standard do not promote mixed dtypes the way NumPy does (and
some only accept floats or bools), so the functions here insert `astype` nodes that give
every kernel the loop dtypes NumPy would use, and remake Python-scalar constants directly
in the right dtype (no extra node). Two dispatch tables map NumPy's callables to these
functions: `UFUNCS` for `__array_ufunc__`, `FUNCTIONS` for `__array_function__`.
"""

import math

import numpy as np

from autograph.runtime import dtypes, shapes
from autograph.runtime.dtypes import BOOL, INT64
from autograph.runtime.primitives import bind1, register
from autograph.runtime.tensor import Tensor

_PY_SCALARS = (bool, int, float, complex)


# -- operands -------------------------------------------------------------------------------

def const(value, weak=False):
    """A Const node holding `value` (a NumPy array or scalar)."""
    return bind1("Const", (), {"value": np.asarray(value), "weak": weak}, node_name="Const")


def operand_key(x):
    """(dtype key, weak) of an operand: a Tensor or anything NumPy can make an array of."""
    if isinstance(x, Tensor):
        return dtypes.key_of(x.dtype, x.weak), x.weak
    return dtypes.key_of_value(x)


def as_tensor(x, dtype=None):
    """`x` as a Tensor of the given dtype: tensors are cast (a weak one stays weak), other
    values become constants made directly in `dtype` (a Python scalar stays weak)."""
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype == dtype else cast(x, dtype, weak=x.weak)
    weak = type(x) in _PY_SCALARS
    if dtype is None:
        dtype = dtypes.default_dtype(dtypes.key_of_value(x)[0])
    return const(np.asarray(x, dtype=dtype), weak)


def cast(x, dtype, weak=False):
    """`x.astype(dtype)` as a graph node (no node when the dtype already matches)."""
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype and x.weak == weak:
        return x
    attrs = {"dtype": dtype, "weak": True} if weak else {"dtype": dtype}
    return bind1("astype", (x,), attrs)


def common(args):
    """Tensors for `args`, all of NumPy's result dtype (weak scalars promote per NEP 50).
    Returns (tensors, dtype, weak): weak when every operand is weak."""
    keyed = [operand_key(a) for a in args]
    dtype = dtypes.result_type(tuple(k for k, _ in keyed))
    weak = all(w for _, w in keyed)
    return [as_tensor(a, dtype) for a in args], dtype, weak


def _astype_infer(x, *, dtype, weak=False):
    return [(dtype, x.shape, weak)]


def _astype_kernel(xp, x, *, dtype, weak=False):
    return xp.astype(x, dtype, copy=False)


register("astype", _astype_infer, _astype_kernel, doc="x.astype(dtype)")


def _describe(args):
    return ", ".join(repr(a) if isinstance(a, Tensor) else f"{type(a).__name__} {a!r}"
                     for a in args)


# -- elementwise: NumPy ufuncs ---------------------------------------------------------------

# NumPy runs some arithmetic on bools that the array API only defines for numbers:
# on bools, add/maximum are logical_or and multiply/minimum are logical_and ...
_BOOL_AS = {"add": "logical_or", "maximum": "logical_or", "multiply": "logical_and",
            "minimum": "logical_and", "abs": "positive_bool", "positive": "positive_bool"}
# ... and every other loop on bools computes as on the numbers 0 and 1
_BOOL_NATIVE = {"logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
                "bitwise_or", "bitwise_xor", "bitwise_invert", "equal", "not_equal"}
_INT8 = np.dtype(np.int8)


class Elementwise:
    """A NumPy ufunc staged as the primitive `prim` (an array API function name).
    `inputs_as` forces the kernel's input dtype (bool for the logical functions, whose
    array API versions take only bools)."""

    __slots__ = ("ufunc", "prim", "inputs_as")

    def __init__(self, ufunc, prim, inputs_as=None):
        self.ufunc, self.prim, self.inputs_as = ufunc, prim, inputs_as

    def prim_for(self, ins):
        """The primitive and input dtypes that compute NumPy's loop `ins` in the array API."""
        if ins[0] == BOOL and all(d == BOOL for d in ins):
            if self.prim in _BOOL_AS:
                return _BOOL_AS[self.prim], ins
            if self.prim not in _BOOL_NATIVE:
                return self.prim, (_INT8,) * len(ins)
        return self.prim, ins

    def loop(self, keys, args=()):
        try:
            ins, outs = dtypes.resolve_ufunc(self.ufunc, keys)
        except TypeError as e:  # NumPy has no loop for these dtypes
            raise TypeError(f"numpy.{self.ufunc.__name__} is not defined for "
                            f"{_describe(args) or keys}: {e}") from None
        if self.inputs_as is not None:
            ins = (self.inputs_as,) * len(ins)
        return ins, outs

    def infer(self, *xs):
        keys = tuple(dtypes.key_of(x.dtype, x.weak) for x in xs)
        _, outs = self.loop(keys, xs)
        out = outs[0]
        weak = out != BOOL and all(x.weak for x in xs)
        return [(out, shapes.broadcast(*(x.shape for x in xs)), weak)]

    def __call__(self, *args):
        if len(args) != self.ufunc.nin:
            raise TypeError(f"numpy.{self.ufunc.__name__} takes {self.ufunc.nin} "
                            f"argument(s), got {len(args)}")
        keys = tuple(operand_key(a)[0] for a in args)
        ins, outs = self.loop(keys, args)
        prim, ins = self.prim_for(ins)
        out = bind1(prim, [as_tensor(a, dt) for a, dt in zip(args, ins)])
        return out if out.dtype == outs[0] else cast(out, outs[0])


UFUNCS = {}


def _elementwise(ufunc, prim=None, inputs_as=None):
    prim = prim or ufunc.__name__
    entry = Elementwise(ufunc, prim, inputs_as)
    register(prim, entry.infer, prim, doc=f"numpy.{ufunc.__name__}")
    UFUNCS[ufunc] = entry
    return entry


for _uf in (np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.remainder,
            np.maximum, np.minimum, np.hypot, np.logaddexp, np.copysign,
            np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
            np.bitwise_and, np.bitwise_or, np.bitwise_xor,
            np.negative, np.positive, np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10,
            np.sqrt, np.square, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
            np.isnan, np.isfinite, np.isinf, np.sign, np.signbit, np.floor, np.ceil,
            np.trunc):
    _elementwise(_uf)
for _uf, _name in ((np.power, "pow"), (np.absolute, "abs"), (np.invert, "bitwise_invert"),
                   (np.left_shift, "bitwise_left_shift"), (np.right_shift, "bitwise_right_shift"),
                   (np.arcsin, "asin"), (np.arccos, "acos"), (np.arctan, "atan"),
                   (np.arcsinh, "asinh"), (np.arccosh, "acosh"), (np.arctanh, "atanh"),
                   (np.arctan2, "atan2"), (np.rint, "round"), (np.conjugate, "conj")):
    _elementwise(_uf, _name)
for _uf in (np.logical_and, np.logical_or, np.logical_xor, np.logical_not):
    _elementwise(_uf, inputs_as=BOOL)


register("positive_bool", lambda x: [(x.dtype, x.shape, x.weak)], lambda xp, x: x,
         doc="abs/positive of bools: the value itself")


def ufunc(uf, *args):
    """Stage NumPy ufunc `uf` called on `args` (at least one of them a Tensor)."""
    entry = UFUNCS.get(uf)
    if entry is None:
        if uf is np.matmul:
            return matmul(*args)
        raise NotImplementedError(
            f"autograph cannot trace numpy.{uf.__name__} on symbolic tensors yet; "
            "express it with supported NumPy functions, or run this part outside the traced "
            "function")
    return entry(*args)


# reductions reachable as ufunc methods: np.add.reduce(x) is np.sum(x, axis=0)
_UFUNC_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                 np.logical_and: "all", np.logical_or: "any"}
_UFUNC_ACCUMULATE = {np.add: "cumulative_sum", np.multiply: "cumulative_prod"}


def ufunc_method(uf, method, inputs, kwargs):
    """What `Tensor.__array_ufunc__` does: `np.add(x, 1)`, `np.add.reduce(x)`, ..."""
    name = f"numpy.{uf.__name__}" + ("" if method == "__call__" else f".{method}")
    if kwargs.get("out") is not None:
        raise TypeError(f"{name}(..., out=...) cannot write into a symbolic tensor: tensors "
                        "are immutable while tracing. Use the returned value instead.")
    if kwargs.get("where", True) is not True:
        raise NotImplementedError(f"{name}(..., where=...) is not supported while tracing; "
                                  "use np.where on the result instead")
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("out", None)
    kwargs.pop("where", None)
    if method == "__call__":
        if kwargs:
            raise TypeError(f"{name}: unsupported keyword arguments {sorted(kwargs)} "
                            "while tracing")
        result = ufunc(uf, *inputs)
        return result if dtype is None else cast(result, dtype)
    if method == "reduce" and uf in _UFUNC_REDUCE and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs:
            raise TypeError(f"{name}: unsupported keyword arguments {sorted(kwargs)}")
        return reduction(_UFUNC_REDUCE[uf], inputs[0], axis, keepdims, dtype)
    if method == "accumulate" and uf in _UFUNC_ACCUMULATE and len(inputs) == 1:
        return cumulative(_UFUNC_ACCUMULATE[uf], inputs[0], kwargs.pop("axis", 0), dtype)
    raise NotImplementedError(
        f"autograph cannot trace {name} on symbolic tensors; supported ufunc methods are "
        "calls, reduce (add, multiply, maximum, minimum, logical_and, logical_or) and "
        "accumulate (add, multiply)")


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
            x = cast(x, _INT8)
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


# -- shapes: reshape, transpose, expand_dims, squeeze, broadcast_to, concat, stack ----------

def _static_ints(value, what):
    """`value` (an int or a sequence of ints) as a tuple of Python ints, or a clear error
    when it holds symbolic tensors (shapes must be known while tracing)."""
    items = (value,) if isinstance(value, (int, np.integer, Tensor)) else tuple(value)
    if any(isinstance(d, Tensor) for d in items):
        raise NotImplementedError(
            f"{what} must be made of Python ints while tracing, got {_describe(items)}; "
            "a shape computed inside the graph is not supported yet")
    return tuple(int(d) for d in items)


def _need_rank(x, what):
    if x.shape is None:
        raise ValueError(f"{what} needs the rank of {x!r}, which is unknown while tracing; "
                         "give the argument a TensorSpec with a known rank")
    return len(x.shape)


def _reshape_infer(x, *, shape):
    return [(x.dtype, shapes.reshape(x.shape, shape), x.weak)]


register("reshape", _reshape_infer, "reshape", doc="numpy.reshape")


def reshape(x, shape):
    x = as_tensor(x)
    shape = _static_ints(shape, "the new shape of reshape")
    if x.shape is not None and tuple(x.shape) == shape:
        return x
    return bind1("reshape", (x,), {"shape": shape})


def _permute_infer(x, *, axes):
    return [(x.dtype, tuple(x.shape[a] for a in axes), x.weak)]


register("permute_dims", _permute_infer, "permute_dims", doc="numpy.transpose")


def transpose(x, axes=None):
    x = as_tensor(x)
    ndim = _need_rank(x, "transpose")
    if axes is None:
        axes = tuple(range(ndim))[::-1]
    else:
        axes = tuple(shapes.normalize_axis(a, ndim) for a in _static_ints(axes, "axes"))
        if sorted(axes) != list(range(ndim)):
            raise ValueError(f"transpose axes {axes} are not a permutation of {ndim} axes")
    if axes == tuple(range(ndim)):
        return x
    return bind1("permute_dims", (x,), {"axes": axes})


def _expand_infer(x, *, axis):
    out = list(x.shape)
    for a in axis:
        out.insert(a, 1)
    return [(x.dtype, tuple(out), x.weak)]


def _expand_kernel(xp, x, *, axis):
    for a in axis:                 # ascending, so each axis index is final
        x = xp.expand_dims(x, axis=a)
    return x


register("expand_dims", _expand_infer, _expand_kernel, doc="numpy.expand_dims")


def expand_dims(x, axis):
    x = as_tensor(x)
    axes = _static_ints(axis, "axis")
    ndim = _need_rank(x, "expand_dims") + len(axes)
    return bind1("expand_dims", (x,), {"axis": shapes.normalize_axes(axes, ndim)})


def _squeeze_infer(x, *, axis):
    return [(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axis), x.weak)]


def _squeeze_kernel(xp, x, *, axis):
    return xp.squeeze(x, axis=axis) if axis else x


register("squeeze", _squeeze_infer, _squeeze_kernel, doc="numpy.squeeze")


def squeeze(x, axis=None):
    x = as_tensor(x)
    ndim = _need_rank(x, "squeeze")
    if axis is None:
        if None in x.shape:
            raise ValueError(f"squeeze cannot tell which axes of {x!r} have length 1 while "
                             "tracing (some lengths are unknown); pass axis= explicitly")
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = shapes.normalize_axes(_static_ints(axis, "axis"), ndim)
        for a in axes:
            if x.shape[a] not in (1, None):
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one: axis {a} of {x!r}")
    return bind1("squeeze", (x,), {"axis": axes}) if axes else x


def _broadcast_to_infer(x, *, shape):
    out = shapes.broadcast(x.shape, shape)
    if x.shape is not None and len(x.shape) > len(shape):
        raise ValueError(f"cannot broadcast {x!r} to the smaller rank of shape {shape}")
    return [(x.dtype, shape if out is None else out, x.weak)]


register("broadcast_to", _broadcast_to_infer, "broadcast_to", doc="numpy.broadcast_to")


def broadcast_to(x, shape):
    return bind1("broadcast_to", (as_tensor(x),), {"shape": _static_ints(shape, "shape")})


def _concat_infer(*xs, axis):
    return [(xs[0].dtype, shapes.concat([x.shape for x in xs], axis),
             all(x.weak for x in xs))]


def _concat_kernel(xp, *xs, axis):
    return xp.concat(list(xs), axis=axis)


def _stack_infer(*xs, axis):
    shape = shapes.concat([x.shape for x in xs], None)   # only checks that shapes agree
    return [(xs[0].dtype, shape[:axis] + (len(xs),) + shape[axis:], all(x.weak for x in xs))]


def _stack_kernel(xp, *xs, axis):
    return xp.stack(list(xs), axis=axis)


register("concat", _concat_infer, _concat_kernel, doc="numpy.concatenate")
register("stack", _stack_infer, _stack_kernel, doc="numpy.stack")


def _sequence(arrays, what):
    if isinstance(arrays, Tensor):
        raise NotImplementedError(f"numpy.{what} of a single symbolic tensor (split along "
                                  "its first axis) is not supported; pass a list of tensors")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"need at least one array to {what}")
    tensors, _, _ = common(arrays)
    for t in tensors:
        _need_rank(t, what)
    return tensors


def concatenate(arrays, axis=0, dtype=None):
    tensors = _sequence(arrays, "concatenate")
    if axis is None:
        tensors, axis = [reshape(t, (-1,)) for t in tensors], 0
    axis = shapes.normalize_axis(axis, len(tensors[0].shape))
    out = bind1("concat", tensors, {"axis": axis})
    return out if dtype is None else cast(out, dtype)


def stack(arrays, axis=0, dtype=None):
    tensors = _sequence(arrays, "stack")
    axis = shapes.normalize_axis(axis, len(tensors[0].shape) + 1)
    out = bind1("stack", tensors, {"axis": axis})
    return out if dtype is None else cast(out, dtype)


def ravel(x):
    return reshape(x, (-1,))


# -- creation: zeros, ones, full, arange and the *_like functions ----------------------------

def _fill_infer(*, shape, dtype, fill_value=None):
    return [(dtype, shape, False)]


def _full_kernel(xp, *, shape, dtype, fill_value):
    return xp.full(shape, fill_value, dtype=dtype)


register("zeros", _fill_infer, "zeros", doc="numpy.zeros")
register("ones", _fill_infer, "ones", doc="numpy.ones")
register("full", _fill_infer, _full_kernel, doc="numpy.full")


def _fill_scalar(value, dtype):
    """A fill value as a Python scalar of `dtype`'s kind (NumPy casts it the same way)."""
    return np.asarray(value).astype(dtype).item()


def zeros(shape, dtype=float):
    return bind1("zeros", (), {"shape": _static_ints(shape, "shape"), "dtype": np.dtype(dtype)})


def ones(shape, dtype=float):
    return bind1("ones", (), {"shape": _static_ints(shape, "shape"), "dtype": np.dtype(dtype)})


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tensor):
        dtype = fill_value.dtype if dtype is None else np.dtype(dtype)
        return broadcast_to(cast(fill_value, dtype), shape)
    dtype = np.asarray(fill_value).dtype if dtype is None else np.dtype(dtype)
    return bind1("full", (), {"shape": _static_ints(shape, "shape"), "dtype": dtype,
                              "fill_value": _fill_scalar(fill_value, dtype)})


def _like_infer(x, *, dtype=None, fill_value=None):
    return [(x.dtype if dtype is None else dtype, x.shape, x.weak and dtype is None)]


def _full_like_kernel(xp, x, *, fill_value, dtype=None):
    return xp.full_like(x, fill_value, dtype=dtype)


register("zeros_like", _like_infer, "zeros_like", doc="numpy.zeros_like")
register("ones_like", _like_infer, "ones_like", doc="numpy.ones_like")
register("full_like", _like_infer, _full_like_kernel, doc="numpy.full_like")


def _like(name, x, dtype, shape):
    if shape is not None:
        raise NotImplementedError(f"numpy.{name}(..., shape=...) is not supported while "
                                  f"tracing; use numpy.{name.replace('_like', '')}(shape)")
    x = as_tensor(x)
    return x, ({} if dtype is None else {"dtype": np.dtype(dtype)})


def zeros_like(x, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("zeros_like", x, dtype, shape)
    return bind1("zeros_like", (x,), attrs)


def ones_like(x, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("ones_like", x, dtype, shape)
    return bind1("ones_like", (x,), attrs)


def full_like(x, fill_value, dtype=None, order="K", subok=True, shape=None):
    x, attrs = _like("full_like", x, dtype, shape)
    out_dtype = attrs.get("dtype", x.dtype)
    if isinstance(fill_value, Tensor):
        return cast(fill_value, out_dtype) + zeros_like(x, dtype=out_dtype)
    attrs["fill_value"] = _fill_scalar(fill_value, out_dtype)
    return bind1("full_like", (x,), attrs)


def _arange_infer(*bounds, dtype, length=None):
    return [(dtype, (length,), False)]


def _arange_kernel(xp, start, stop, step, *, dtype, length=None):
    to_py = int if xp.isdtype(dtype, "integral") else float
    return xp.arange(to_py(start), to_py(stop), to_py(step), dtype=dtype)


register("arange", _arange_infer, _arange_kernel, doc="numpy.arange")


def arange(start, stop=None, step=None, dtype=None):
    """np.arange; the bounds may be symbolic (then the length is unknown while tracing)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    bounds = (start, stop, step)
    if dtype is None:
        dtype = dtypes.result_type(tuple(dtypes.default_dtype(operand_key(b)[0])
                                         for b in bounds))
    dtype = np.dtype(dtype)
    length = None
    if not any(isinstance(b, Tensor) for b in bounds):
        length = len(np.arange(start, stop, step, dtype=dtype))
    return bind1("arange", [as_tensor(b, dtype) for b in bounds],
                 {"dtype": dtype, "length": length})


# -- linear algebra --------------------------------------------------------------------------

def _matmul_infer(a, b):
    return [(a.dtype, shapes.matmul(a.shape, b.shape), a.weak and b.weak)]


def _tensordot_infer(a, b, *, axes):
    ax, bx = axes
    for i, j in zip(ax, bx):
        if a.shape[i] is not None and b.shape[j] is not None and a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of {a!r} and axis {j} of {b!r} differ")
    shape = tuple(d for i, d in enumerate(a.shape) if i not in ax) + \
        tuple(d for j, d in enumerate(b.shape) if j not in bx)
    return [(a.dtype, shape, a.weak and b.weak)]


def _tensordot_kernel(xp, a, b, *, axes):
    return xp.tensordot(a, b, axes=axes)


register("matmul", _matmul_infer, "matmul", doc="numpy.matmul (the @ operator)")
register("tensordot", _tensordot_infer, _tensordot_kernel, doc="numpy.tensordot")


def matmul(a, b):
    (a, b), _, _ = common((a, b))
    return bind1("matmul", (a, b))


def tensordot(a, b, axes=2):
    (a, b), _, _ = common((a, b))
    na, nb = _need_rank(a, "tensordot"), _need_rank(b, "tensordot")
    if isinstance(axes, int):
        ax, bx = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ax, bx = (_static_ints(side, "tensordot axes") for side in axes)
    ax = tuple(shapes.normalize_axis(i, na) for i in ax)
    bx = tuple(shapes.normalize_axis(j, nb) for j in bx)
    return bind1("tensordot", (a, b), {"axes": (ax, bx)})


def dot(a, b):
    """np.dot: a product with a scalar, matmul for 1-D/2-D operands, and for N-D the sum
    over the last axis of `a` and the second-to-last of `b`."""
    ta, tb = as_tensor(a), as_tensor(b)
    na, nb = _need_rank(ta, "dot"), _need_rank(tb, "dot")
    if na == 0 or nb == 0:
        return ufunc(np.multiply, a, b)
    if nb == 1 or (na <= 2 and nb <= 2):
        return matmul(ta, tb)
    return tensordot(ta, tb, ((na - 1,), (nb - 2,)))


# -- selection: where, clip, round ----------------------------------------------------------

def _where_infer(c, x, y):
    return [(x.dtype, shapes.broadcast(c.shape, x.shape, y.shape), x.weak and y.weak)]


register("where", _where_infer, "where", doc="numpy.where")


def where(condition, x=None, y=None):
    if x is None or y is None:
        raise NotImplementedError(
            "numpy.where(condition) with one argument (the indices where it is true) has a "
            "data-dependent shape and cannot be traced; use numpy.where(condition, x, y)")
    (x, y), _, _ = common((x, y))
    return bind1("where", (as_tensor(condition, BOOL), x, y))


def _clip_infer(x, *bounds, which):
    return [(x.dtype, shapes.broadcast(x.shape, *(b.shape for b in bounds)),
             all(t.weak for t in (x,) + bounds))]


def _clip_kernel(xp, x, *bounds, which):
    # np.clip is minimum(maximum(x, lo), hi): hi wins when lo > hi, NaNs propagate
    bounds = list(bounds)
    if "min" in which:
        x = xp.maximum(x, bounds.pop(0))
    if "max" in which:
        x = xp.minimum(x, bounds.pop(0))
    return x


register("clip", _clip_infer, _clip_kernel, doc="numpy.clip")


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("numpy.clip needs a lower bound, an upper bound, or both")
    which = ("min",) * (lo is not None) + ("max",) * (hi is not None)
    tensors, _, _ = common([a] + [b for b in (lo, hi) if b is not None])
    return bind1("clip", tensors, {"which": which})


def _round_infer(x, *, decimals):
    return [(x.dtype, x.shape, x.weak)]


def _round_kernel(xp, x, *, decimals):
    if decimals == 0:
        return xp.round(x)
    scale = 10.0 ** decimals
    return xp.round(x * scale) / scale


register("round_decimals", _round_infer, _round_kernel, doc="numpy.round(x, decimals)")


def round_(a, decimals=0):
    x = as_tensor(a)
    decimals = int(decimals)
    if decimals == 0:
        return ufunc(np.rint, x)
    if x.dtype.kind in "biu":
        if decimals > 0:
            return x
        raise NotImplementedError("numpy.round of integers to negative decimals is not "
                                  "supported while tracing")
    return bind1("round_decimals", (x,), {"decimals": decimals})


# -- shape and size as values ----------------------------------------------------------------

def _shape_of_infer(x):
    return [(INT64, (None if x.shape is None else len(x.shape),), False)]


def _shape_of_kernel(xp, x):
    return xp.asarray([int(d) for d in x.shape], dtype=xp.int64)


def _size_of_infer(x):
    return [(INT64, (), False)]


def _size_of_kernel(xp, x):
    return xp.asarray(math.prod(int(d) for d in x.shape), dtype=xp.int64)


register("shape_of", _shape_of_infer, _shape_of_kernel, doc="the shape of x, as a tensor")
register("size_of", _size_of_infer, _size_of_kernel, doc="the size of x, as a tensor")


def shape_of(x):
    """The run-time shape of `x` as an int64 vector (for dims unknown while tracing)."""
    return bind1("shape_of", (as_tensor(x),))


def dim(x, axis=0):
    """The run-time length of axis `axis` of `x`: a Python int when it is known while
    tracing, else an int64 scalar tensor."""
    x = as_tensor(x)
    axis = shapes.normalize_axis(axis, _need_rank(x, "its length"))
    if x.shape[axis] is not None:
        return x.shape[axis]
    return getitem(shape_of(x), axis)


def size(x, axis=None):
    """np.size: a Python int when every dimension is known while tracing, else a tensor."""
    x = as_tensor(x)
    if axis is not None:
        return dim(x, axis)
    n = shapes.size(x.shape)
    return n if n is not None else bind1("size_of", (x,))


def shape(x):
    return as_tensor(x).shape


def ndim(x):
    return as_tensor(x).ndim


# -- indexing --------------------------------------------------------------------------------
# A basic index (ints, slices, None, ...) is kept in the node's attrs as a hashable tuple of
# items: ("i", k) an int, ("s", start, stop, step) a slice, ("n",) None, ("e",) Ellipsis,
# ("d", j) an int known only at run time: the node's (j+1)-th input. Slice bounds may be
# ("d", j) too. An index tensor alone selects along the first axis (`take`); a boolean
# tensor alone is a mask.

def _index_shape(shape, index):
    consumed = sum(1 for item in index if item[0] in "ids")
    if sum(1 for item in index if item[0] == "e") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if shape is None:
        return None
    if consumed > len(shape):
        raise IndexError(f"too many indices for a tensor of rank {len(shape)}: "
                         f"{consumed} were given")
    out, axis = [], 0
    for item in index:
        tag = item[0]
        if tag == "n":
            out.append(1)
        elif tag == "e":
            n = len(shape) - consumed
            out.extend(shape[axis:axis + n])
            axis += n
        elif tag == "i":
            d = shape[axis]
            if d is not None and not -d <= item[1] < d:
                raise IndexError(f"index {item[1]} is out of bounds for axis {axis} "
                                 f"with size {d}")
            axis += 1
        elif tag == "d":
            axis += 1
        else:  # slice
            d = shape[axis]
            bounds = item[1:]
            static = not any(isinstance(b, tuple) for b in bounds)
            out.append(len(range(*slice(*bounds).indices(d))) if d is not None and static
                       else None)
            axis += 1
    out.extend(shape[axis:])
    return tuple(out)


def _getitem_infer(x, *dynamic, index):
    return [(x.dtype, _index_shape(x.shape, index), x.weak)]


def _clamped(bounds, n):
    """Slice bounds NumPy clamps to the axis length (the array API leaves out-of-range
    bounds unspecified), as a slice every namespace reads the same way."""
    start, stop, step = slice(*bounds).indices(n)
    if len(range(start, stop, step)) == 0:
        return slice(0, 0, 1)
    return slice(start, None if stop < 0 else stop, step)


def _getitem_kernel(xp, x, *dynamic, index):
    def value(v):
        return int(dynamic[v[1]]) if isinstance(v, tuple) else v
    consumed = sum(1 for item in index if item[0] in "ids")
    key, axis = [], 0
    for item in index:
        tag = item[0]
        if tag == "n":
            key.append(None)
            continue
        if tag == "e":
            key.append(Ellipsis)
            axis += len(x.shape) - consumed
            continue
        if tag == "i":
            key.append(item[1])
        elif tag == "d":
            key.append(int(dynamic[item[1]]))
        else:
            key.append(_clamped([value(b) for b in item[1:]], x.shape[axis]))
        axis += 1
    if not any(k is Ellipsis for k in key):
        key.append(Ellipsis)   # the array API wants every axis indexed, or an ellipsis
    return x[tuple(key)]


def _take_infer(x, i, *, axis):
    if x.shape is None or i.shape is None:
        return [(x.dtype, None, x.weak)]
    return [(x.dtype, x.shape[:axis] + i.shape + x.shape[axis + 1:], x.weak)]


def _take_kernel(xp, x, i, *, axis):
    flat = xp.reshape(i, (-1,))
    flat = xp.where(flat < 0, flat + x.shape[axis], flat)   # NumPy's negative indices
    out = xp.take(x, flat, axis=axis)
    return xp.reshape(out, tuple(x.shape[:axis]) + tuple(i.shape) + tuple(x.shape[axis + 1:]))


def _mask_infer(x, mask):
    if x.shape is None or mask.shape is None:
        return [(x.dtype, None, x.weak)]
    k = len(mask.shape)
    if k > len(x.shape) or not all(a is None or b is None or a == b
                                   for a, b in zip(x.shape, mask.shape)):
        raise IndexError(f"the boolean mask {mask!r} does not match the shape of {x!r}")
    return [(x.dtype, (None,) + x.shape[k:], x.weak)]


def _mask_kernel(xp, x, mask):
    return x[mask]


register("getitem", _getitem_infer, _getitem_kernel, doc="x[ints, slices, None, ...]")
register("take", _take_infer, _take_kernel, doc="x[index tensor], numpy.take")
register("boolean_mask", _mask_infer, _mask_kernel, doc="x[boolean mask]")


def _is_array_index(k):
    return isinstance(k, (Tensor, np.ndarray, list)) and not (
        isinstance(k, Tensor) and k.shape == () and k.dtype.kind in "iu")


def take(a, indices, axis=None):
    x = as_tensor(a)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    else:
        axis = shapes.normalize_axis(axis, _need_rank(x, "take"))
    i = as_tensor(indices)
    if i.dtype.kind not in "iu":
        raise IndexError(f"indices must be integers, got {i!r}")
    return bind1("take", (x, i), {"axis": axis})


def getitem(x, key):
    """x[key] for the indices NumPy's basic indexing knows, plus an index tensor or a
    boolean mask used alone."""
    x = as_tensor(x)
    if isinstance(key, Tensor) and key.dtype.kind in "iu":
        return take(x, key, axis=0)
    if not isinstance(key, tuple):
        if _is_array_index(key):
            if not isinstance(key, Tensor) and np.asarray(key).dtype == BOOL \
                    and np.ndim(key) == 1:   # a mask known now: its true indices
                key = np.flatnonzero(key)
            mask = as_tensor(key)
            if mask.dtype == BOOL:
                return bind1("boolean_mask", (x, mask))
            return take(x, mask, axis=0)
        key = (key,)
    dynamic = []

    def bound(v):
        if v is None or isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return None if v is None else int(v)
        if isinstance(v, Tensor) and v.shape == () and v.dtype.kind in "iu":
            dynamic.append(v)
            return ("d", len(dynamic) - 1)
        raise IndexError(f"slice bounds must be ints, None or integer scalar tensors, "
                         f"got {_describe([v])}")

    index = []
    for k in key:
        if k is None:
            index.append(("n",))
        elif k is Ellipsis:
            index.append(("e",))
        elif isinstance(k, slice):
            index.append(("s", bound(k.start), bound(k.stop), bound(k.step)))
        elif _is_array_index(k) or isinstance(k, (bool, np.bool_)):
            raise NotImplementedError(
                f"indexing {x!r} with an array together with other indices ({_describe([k])}) "
                "is not supported while tracing; index one axis at a time, e.g. with "
                "numpy.take(x, indices, axis=...)")
        else:
            b = bound(k)
            index.append(("i", b) if isinstance(b, int) else b)
    return bind1("getitem", [x] + dynamic, {"index": tuple(index)})


# -- the dispatch table for __array_function__ -----------------------------------------------

def _plain(name, out=None, **unsupported):
    """Reject NumPy arguments that have no meaning on symbolic tensors."""
    if out is not None:
        raise TypeError(f"numpy.{name}(..., out=...) cannot write into a symbolic tensor: "
                        "tensors are immutable while tracing. Use the returned value instead.")
    given = sorted(k for k, v in unsupported.items() if v is not None)
    if given:
        raise NotImplementedError(f"numpy.{name}: the argument(s) {', '.join(given)} are not "
                                  "supported while tracing")


def _sum_like(name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        _plain(name, out, initial=initial, where=where)
        return reduction(name, a, axis, keepdims, dtype)
    fn.__name__ = name
    return fn


def _max_like(name):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _plain(name, out, initial=initial, where=where)
        return reduction(name, a, axis, keepdims)
    fn.__name__ = name
    return fn


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _plain("mean", out, where=where)
    return reduction("mean", a, axis, keepdims, dtype)


def _any_like(name):
    def fn(a, axis=None, out=None, keepdims=False, *, where=None):
        _plain(name, out, where=where)
        return reduction(name, a, axis, keepdims)
    fn.__name__ = name
    return fn


def _arg_like(name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        _plain(name, out)
        return reduction(name, a, axis, keepdims)
    fn.__name__ = name
    return fn


def _cum_like(name):
    def fn(a, axis=None, dtype=None, out=None):
        _plain(name, out)
        return cumulative(name, a, axis, dtype)
    return fn


def _creation(fn):
    """np.zeros(..., like=tensor) and friends: `like` only chose the dispatch."""
    def wrapper(*args, like=None, order="C", device=None, **kwargs):
        if order not in ("C", "K", "A"):
            raise NotImplementedError(f"numpy.{fn.__name__}: only order='C' is supported "
                                      "while tracing")
        return fn(*args, **kwargs)
    return wrapper


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise NotImplementedError("numpy.reshape: only order='C' is supported while tracing")
    return reshape(a, shape if shape is not None else newshape)


def _astype(x, dtype, /, *, copy=True, device=None):
    return cast(as_tensor(x), dtype)


def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _plain("concatenate", out)
    return concatenate(arrays, axis, dtype)


def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _plain("stack", out)
    return stack(arrays, axis, dtype)


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    _plain("clip", out, **kwargs)
    return clip(a, a_min, a_max, min=min, max=max)


def _round(a, decimals=0, out=None):
    _plain("round", out)
    return round_(a, decimals)


def _where(condition, x=None, y=None):
    return where(condition, x, y)


def _take(a, indices, axis=None, out=None, mode="raise"):
    _plain("take", out)
    return take(a, indices, axis)


def _dot(a, b, out=None):
    _plain("dot", out)
    return dot(a, b)


def _copy(a, order="K", subok=False):
    return as_tensor(a)


FUNCTIONS = {
    np.sum: _sum_like("sum"), np.prod: _sum_like("prod"), np.mean: _mean,
    np.max: _max_like("max"), np.amax: _max_like("max"),
    np.min: _max_like("min"), np.amin: _max_like("min"),
    np.any: _any_like("any"), np.all: _any_like("all"),
    np.argmax: _arg_like("argmax"), np.argmin: _arg_like("argmin"),
    np.cumsum: _cum_like("cumulative_sum"), np.cumprod: _cum_like("cumulative_prod"),
    np.where: _where, np.clip: _clip, np.round: _round, np.around: _round,
    np.transpose: lambda a, axes=None: transpose(a, axes),
    np.permute_dims: lambda a, axes=None: transpose(a, axes),
    np.reshape: _reshape, np.ravel: lambda a, order="C": ravel(a),
    np.expand_dims: expand_dims, np.squeeze: squeeze,
    np.broadcast_to: lambda array, shape, subok=False: broadcast_to(array, shape),
    np.concatenate: _concatenate, np.concat: _concatenate, np.stack: _stack,
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.zeros: _creation(zeros), np.ones: _creation(ones), np.full: _creation(full),
    np.arange: _creation(arange),
    np.dot: _dot, np.tensordot: tensordot, np.take: _take,
    np.shape: shape, np.size: size, np.ndim: ndim, np.astype: _astype, np.copy: _copy,
}


def array_function(func, args, kwargs):
    """What `Tensor.__array_function__` does: run our version of the NumPy function."""
    impl = FUNCTIONS.get(func)
    if impl is None:
        name = getattr(func, "__name__", repr(func))
        module = getattr(func, "__module__", "numpy") or "numpy"
        raise NotImplementedError(
            f"autograph cannot trace {module}.{name} on symbolic tensors yet; express it "
            "with supported NumPy functions (see autograph.runtime.numpy_ops.FUNCTIONS), or "
            "compute it outside the traced function")
    return impl(*args, **kwargs)
