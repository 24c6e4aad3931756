"""NumPy on symbolic tensors: the dispatch from NumPy's callables to graph primitives.

`Tensor.__array_ufunc__` lands in `ufunc_method`, `Tensor.__array_function__` in
`array_function`; both look the NumPy callable up in a table (`UFUNCS`, `FUNCTIONS`) and
call the function that stages it. Those functions, and the primitives they bind, live in
one module per family (each primitive registered with its dtype/shape rule and an array
API kernel, so one table runs on NumPy, CuPy, torch and array-api-strict):

  elementwise.py  ufuncs and the operand rules (NEP 50 weak scalars, loop-dtype casts)
  reductions.py   sum, mean, max, argmax, cumsum, ...
  shape_ops.py    reshape, transpose, squeeze, flip, ..., shapes and sizes as values
  joins.py        concatenate, stack, split, repeat, tile, ...
  array_ops.py    creation, matmul/dot/tensordot, where, clip, round, sort
  linalg.py       numpy.linalg.inv, det, solve
  indexing.py     x[...], np.take

Everything a layer above needs is re-exported here: `numpy_ops.reshape(x, ...)`, ...
"""

import numpy as np

from autograph.runtime.ir import dtypes, shapes
from autograph.runtime.numpy.array_ops import (  # noqa: F401  (re-exported)
    arange, argsort, clip, diff, dot, full, full_like, imag, inner, matmul, ones, ones_like,
    outer, real, round_, sort, tensordot, where, zeros, zeros_like)
from autograph.runtime.numpy.elementwise import (  # noqa: F401
    UFUNCS, Elementwise, as_tensor, cast, common, const, operand_key, ufunc, ufunc_name)
from autograph.runtime.numpy.indexing import getitem, take  # noqa: F401
from autograph.runtime.numpy.reductions import (  # noqa: F401
    allclose, average, count_nonzero, cumulative, isclose, median, nanmax, nanmean, nanmin,
    nanprod, nansum, norm, reduction, std, var)
from autograph.runtime.numpy.joins import (  # noqa: F401
    atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, concatenate, hstack, meshgrid,
    repeat, split, stack, tile, vstack)
from autograph.runtime.numpy.linalg import det, inv, solve  # noqa: F401
from autograph.runtime.numpy.shape_ops import (  # noqa: F401
    broadcast_to, dim, expand_dims, flip, ndim, ravel, reshape, roll, shape, shape_of, size,
    squeeze, transpose)
from autograph.runtime.ir.tensor import Tensor


# reductions reachable as ufunc methods: np.add.reduce(x) is np.sum(x, axis=0)
_UFUNC_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                 np.logical_and: "all", np.logical_or: "any"}
_UFUNC_ACCUMULATE = {np.add: "cumulative_sum", np.multiply: "cumulative_prod"}


def ufunc_method(uf, method, inputs, kwargs):
    """What `Tensor.__array_ufunc__` does: `np.add(x, 1)`, `np.add.reduce(x)`, ..."""
    name = ufunc_name(uf) + ("" if method == "__call__" else f".{method}")
    if kwargs.get("out") is not None:
        raise TypeError(f"{name}(..., out=...) cannot store a symbolic result in place (an "
                        "augmented assignment like `array += tensor` does this): tensors are "
                        "immutable while tracing. Write `array = array + tensor`, or use the "
                        "returned value.")
    if kwargs.get("where", True) is not True:
        raise NotImplementedError(f"{name}(..., where=...) is not supported while tracing; "
                                  "use np.where on the result instead")
    if method == "__call__" and uf.signature is not None and uf in FUNCTIONS:
        kwargs.pop("out", None)   # a generalized ufunc (vecdot, matvec, vecmat)
        kwargs.pop("where", None)
        return FUNCTIONS[uf](*inputs, **kwargs)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("out", None)
    kwargs.pop("where", None)
    if method == "__call__":
        if kwargs:
            raise TypeError(f"{name}: unsupported keyword arguments {sorted(kwargs)} "
                            "while tracing")
        if dtype is None:
            return ufunc(uf, *inputs, strong=True)
        dtype = np.dtype(dtype)   # NumPy computes in `dtype`: give the loop those inputs
        return cast(ufunc(uf, *[as_tensor(x, dtype) for x in inputs]), dtype)
    if method == "reduce" and uf in _UFUNC_REDUCE and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs:
            raise TypeError(f"{name}: unsupported keyword arguments {sorted(kwargs)}")
        return reduction(_UFUNC_REDUCE[uf], inputs[0], axis, keepdims, dtype)
    if method == "accumulate" and uf in _UFUNC_ACCUMULATE and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        if isinstance(axis, (tuple, list)):   # NumPy's accumulate takes (1,) as 1
            x = as_tensor(inputs[0])
            axis = shapes.accumulate_axis(axis, None if x.shape is None else len(x.shape))
        return cumulative(_UFUNC_ACCUMULATE[uf], inputs[0], axis, dtype)
    extra = _coverage_ufunc_method(uf, method, inputs, kwargs, dtype)   # coverage block
    if extra is not NotImplemented:
        return extra
    raise NotImplementedError(
        f"autograph cannot trace {name} on symbolic tensors yet; supported ufunc methods are "
        "calls, reduce, accumulate and outer of the binary ufuncs. " + COVERAGE_HINT)


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


def _var_like(fn):
    def wrapper(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
                mean=None, correction=None):
        _plain(fn.__name__, out, where=where, mean=mean)
        return fn(a, axis, dtype, keepdims, ddof if correction is None else correction)
    return wrapper


def _sort_like(fn):
    def wrapper(a, axis=-1, kind=None, order=None, *, stable=None):
        _plain(fn.__name__, None, order=order)
        return fn(a, axis)
    return wrapper


def _nan_like(fn, has_dtype):
    def wrapper(a, axis=None, *args, out=None, keepdims=False, dtype=None, **unsupported):
        if args:   # positional: (dtype, out, keepdims) or (out, keepdims)
            names = ("dtype", "out", "keepdims") if has_dtype else ("out", "keepdims")
            given = dict(zip(names, args))
            dtype, out = given.get("dtype", dtype), given.get("out", out)
            keepdims = given.get("keepdims", keepdims)
        _plain(fn.__name__, out, **unsupported)
        if has_dtype:
            return fn(a, axis, dtype, keepdims)
        return fn(a, axis, keepdims)
    return wrapper


def _static_dtype(x):
    """A dtype query's view of an argument: a tensor's dtype (weak: the Python type it
    stands for), anything else as given."""
    if isinstance(x, Tensor):
        return dtypes.WEAK_VALUE[dtypes.key_of(x.dtype, x.weak)] if x.weak and \
            x.dtype.kind != "b" else x.dtype
    return x


def _result_type(*arrays_and_dtypes):
    return np.result_type(*[_static_dtype(a) for a in arrays_and_dtypes])


def _can_cast(from_, to, casting="safe"):
    return np.can_cast(_static_dtype(from_), _static_dtype(to), casting)


def _array_equal(a1, a2, equal_nan=False):
    """np.array_equal: False when the shapes differ (decided now when they are known),
    else whether every element is equal, as a bool tensor."""
    x, y = as_tensor(a1), as_tensor(a2)
    if x.shape is None or y.shape is None or None in x.shape or None in y.shape:
        raise NotImplementedError("numpy.array_equal needs both shapes known while tracing; "
                                  "compare with np.all(a == b) when the shapes agree")
    if x.shape != y.shape:
        return False
    same = ufunc(np.equal, x, y, strong=True)
    if equal_nan:
        both_nan = ufunc(np.logical_and, ufunc(np.isnan, x), ufunc(np.isnan, y))
        same = ufunc(np.logical_or, same, both_nan)
    return reduction("all", same)


def _is_complex(x):
    return (x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype).kind == "c"


def _cast_to(x, dtype):
    return x if dtype is None else cast(x, dtype)


def _copy(a, order="K", subok=False):
    t = as_tensor(a)
    return t.copy() if t is a else t   # a copy of a tensor is another name's own value


FUNCTIONS = {
    np.sum: _sum_like("sum"), np.prod: _sum_like("prod"), np.mean: _mean,
    np.max: _max_like("max"), np.amax: _max_like("max"),
    np.min: _max_like("min"), np.amin: _max_like("min"),
    np.any: _any_like("any"), np.all: _any_like("all"),
    np.argmax: _arg_like("argmax"), np.argmin: _arg_like("argmin"),
    np.cumsum: _cum_like("cumulative_sum"), np.cumprod: _cum_like("cumulative_prod"),
    np.where: _where, np.clip: _clip, np.round: _round, np.around: _round,
    np.transpose: lambda a, axes=None: transpose(a, axes),
    np.reshape: _reshape, np.ravel: lambda a, order="C": ravel(a),
    np.expand_dims: expand_dims, np.squeeze: squeeze,
    np.broadcast_to: lambda array, shape, subok=False: broadcast_to(array, shape),
    np.concatenate: _concatenate, np.stack: _stack,
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: zeros_like,   # unspecified contents: zeros are as good as any
    np.empty: _creation(zeros),
    np.zeros: _creation(zeros), np.ones: _creation(ones), np.full: _creation(full),
    np.arange: _creation(arange),
    np.dot: _dot, np.tensordot: tensordot, np.take: _take,
    np.shape: shape, np.size: size, np.ndim: ndim, np.copy: _copy,
    np.var: _var_like(var), np.std: _var_like(std),
    np.count_nonzero: lambda a, axis=None, *, keepdims=False: count_nonzero(a, axis, keepdims),
    np.linalg.norm: norm, np.isclose: isclose, np.allclose: allclose,
    np.linalg.inv: inv, np.linalg.det: det, np.linalg.solve: solve,
    np.sort: _sort_like(sort), np.argsort: _sort_like(argsort),
    np.flip: flip, np.roll: roll, np.diff: lambda a, n=1, axis=-1: diff(a, n, axis),
    np.outer: lambda a, b, out=None: _plain("outer", out) or outer(a, b),
    np.inner: inner, np.real: real, np.imag: imag,
    np.split: lambda ary, indices_or_sections, axis=0: split(ary, indices_or_sections, axis),
    np.array_split: lambda ary, indices_or_sections, axis=0: split(
        ary, indices_or_sections, axis, equal=False),
    np.vstack: lambda tup, *, dtype=None, casting="same_kind": _cast_to(vstack(tup), dtype),
    np.hstack: lambda tup, *, dtype=None, casting="same_kind": _cast_to(hstack(tup), dtype),
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d,
    np.broadcast_arrays: lambda *args, subok=False: broadcast_arrays(*args),
    np.repeat: repeat, np.tile: tile, np.meshgrid: meshgrid,
    np.nansum: _nan_like(nansum, True), np.nanprod: _nan_like(nanprod, True),
    np.nanmean: _nan_like(nanmean, True), np.nanmax: _nan_like(nanmax, False),
    np.nanmin: _nan_like(nanmin, False),
    np.median: lambda a, axis=None, out=None, overwrite_input=False, keepdims=False: (
        _plain("median", out) or median(a, axis, keepdims)),
    np.average: average,
    np.array_equal: _array_equal,
    # dtype queries: answered while tracing, from the static dtypes
    np.result_type: _result_type, np.can_cast: _can_cast,
    np.iscomplexobj: lambda x: _is_complex(x), np.isrealobj: lambda x: not _is_complex(x),
}


# NumPy 2 names of the array API standard (absent from NumPy 1.x)
for _name, _impl in (("permute_dims", lambda a, axes=None: transpose(a, axes)),
                     ("concat", _concatenate), ("astype", _astype)):
    if hasattr(np, _name):
        FUNCTIONS[getattr(np, _name)] = _impl


def supported():
    """The names of the NumPy functions, ufuncs and ufunc methods that work on symbolic
    tensors (docs/numpy_coverage.md is generated from this list)."""
    from autograph.runtime.numpy import coverage
    return coverage.names()


def array_function(func, args, kwargs):
    """What `Tensor.__array_function__` does: run our version of the NumPy function."""
    impl = FUNCTIONS.get(func)
    if impl is None:
        name = getattr(func, "__name__", repr(func))
        module = getattr(func, "__module__", "numpy") or "numpy"
        why = meaningless(func)
        if why is not None:
            raise TypeError(why)
        raise NotImplementedError(
            f"autograph cannot trace {module}.{name} on symbolic tensors yet; express it "
            "with supported NumPy functions, or compute it outside the traced function. "
            + COVERAGE_HINT)
    return impl(*args, **kwargs)


# -- coverage: linalg, fft, sorting and sets, statistics, ufunc methods (issue 12) -------------

COVERAGE_HINT = ("The supported names are listed in docs/numpy_coverage.md "
                 "(autograph.runtime.numpy.dispatch.supported()).")

from autograph.runtime.numpy import fft as _fft, linalg as _linalg  # noqa: E402
from autograph.runtime.numpy import sorting as _sorting, statistics as _statistics  # noqa: E402
from autograph.runtime.numpy import ufunc_methods as _ufunc_methods  # noqa: E402
from autograph.runtime.numpy import einsum as _einsum  # noqa: E402
from autograph.runtime.numpy import composites as _composites  # noqa: E402

FUNCTIONS.update(_fft.FUNCTIONS)
FUNCTIONS.update(_sorting.FUNCTIONS)
FUNCTIONS.update(_statistics.FUNCTIONS)
FUNCTIONS.update(_composites.FUNCTIONS)
FUNCTIONS.update({
    np.linalg.cholesky: _linalg.cholesky, np.linalg.eigh: _linalg.eigh,
    np.linalg.eigvalsh: _linalg.eigvalsh, np.linalg.qr: _linalg.qr, np.linalg.svd: _linalg.svd,
    np.linalg.slogdet: _linalg.slogdet, np.linalg.pinv: _linalg.pinv,
    np.linalg.matrix_rank: _linalg.matrix_rank, np.linalg.matrix_power: _linalg.matrix_power,
    np.linalg.multi_dot: _linalg.multi_dot, np.linalg.lstsq: _linalg.lstsq,
    np.linalg.norm: _linalg.norm,
    np.diagonal: _linalg.diagonal, np.trace: _linalg.trace, np.diag: _linalg.diag,
    np.tril: _linalg.tril, np.triu: _linalg.triu, np.vdot: _linalg.vdot, np.kron: _linalg.kron,
    np.cross: _linalg.cross, np.moveaxis: _linalg.moveaxis, np.einsum: _einsum.einsum,
    np.linalg.cond: _linalg.cond, np.linalg.tensorinv: _linalg.tensorinv,
    np.linalg.tensorsolve: _linalg.tensorsolve,
})
_ARRAY_API_LINALG = {   # NumPy 2's array API names in numpy.linalg
    "svdvals": _linalg.svdvals,
    "diagonal": lambda x, /, *, offset=0: _linalg.diagonal(x, offset, -2, -1),
    "trace": lambda x, /, *, offset=0, dtype=None: _linalg.trace(x, offset, -2, -1, dtype),
    "matrix_transpose": lambda x, /: _linalg.moveaxis(x, -1, -2),
    "outer": lambda x1, x2, /: outer(x1, x2),
    "cross": lambda x1, x2, /, *, axis=-1: _linalg.cross(x1, x2, axis=axis),
    "matrix_norm": lambda x, /, *, keepdims=False, ord="fro": _linalg.norm(
        x, ord, (-2, -1), keepdims),
    "vector_norm": _linalg.vector_norm,
    "matmul": lambda x1, x2, /: matmul(x1, x2),
    "tensordot": lambda x1, x2, /, *, axes=2: tensordot(x1, x2, axes),
}
for _name, _impl in _ARRAY_API_LINALG.items():
    if hasattr(np.linalg, _name):
        FUNCTIONS[getattr(np.linalg, _name)] = _impl

_coverage_ufunc_method = _ufunc_methods.method

# functions that cannot mean anything on a traced array: a TypeError that says why
_IO = "it reads or writes files, which happens once while tracing, not on every call"
_MEANINGLESS = {name: _IO for name in (
    "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
    "fromfile", "tofile", "fromregex", "memmap")}
_MEANINGLESS.update({name: "it works on strings or Python objects, which tensors never hold"
                     for name in ("array2string", "array_repr", "array_str", "frompyfunc",
                                  "vectorize", "fromstring", "char")})
_MEANINGLESS.update({name: "it reads memory another object owns (a buffer, a DLPack "
                           "capsule), and a symbolic tensor has no memory until the graph runs"
                     for name in ("frombuffer", "from_dlpack")})

# -- coverage, second part: the rest of what jax.numpy implements ---------------------------------
from autograph.runtime.numpy import composed_ufuncs as _composed_ufuncs  # noqa: E402,F401
from autograph.runtime.numpy import constructors as _constructors  # noqa: E402

FUNCTIONS.update(_constructors.FUNCTIONS)
NATIVE = list(_constructors.NATIVE)   # work unchanged: listed as covered


def undispatched(f):
    """Our version of NumPy function `f` when NumPy never hands `f`'s call to a tensor
    (`f` has no __array_function__ dispatch: np.eye, np.hamming, np.fft.fftfreq, ...), so
    converted code must call it here; None otherwise."""
    if type(f).__name__ == "_ArrayFunctionDispatcher" or type(f) is np.ufunc:
        return None
    try:
        return FUNCTIONS.get(f)
    except TypeError:
        return None


def meaningless(f):
    """The TypeError message for a NumPy function that cannot mean anything on a traced
    array (file I/O, strings, Python objects, foreign buffers), else None."""
    name = getattr(f, "__name__", None)
    why = _MEANINGLESS.get(name) if isinstance(name, str) else None
    if why is None or getattr(np, name, None) is not f:
        return None
    return (f"numpy.{name} cannot be traced: {why}. Call it outside the traced function, "
            "on its inputs or results.")
from autograph.runtime.numpy import linalg_eig as _linalg_eig  # noqa: E402
from autograph.runtime.numpy import (array_edits, bits, contractions, differences,  # noqa: E402
                                      function_application, histograms, order_statistics,
                                      polynomials, sets)
from autograph.runtime.numpy.packing import _array as _np_array  # noqa: E402

FUNCTIONS.update(_linalg_eig.FUNCTIONS)
FUNCTIONS.update({
    np.array: _np_array, np.asarray: _np_array,
    np.delete: array_edits.delete, np.insert: array_edits.insert,
    np.resize: array_edits.resize, np.trim_zeros: array_edits.trim_zeros,
    np.block: array_edits.block, np.choose: array_edits.choose,
    np.array_equiv: array_edits.array_equiv,
    np.partition: order_statistics.partition, np.argpartition: order_statistics.argpartition,
    np.sort_complex: order_statistics.sort_complex,
    np.nanquantile: order_statistics.nanquantile,
    np.nanpercentile: order_statistics.nanpercentile, np.nanmedian: order_statistics.nanmedian,
    np.union1d: sets.union1d, np.intersect1d: sets.intersect1d,
    np.setdiff1d: sets.setdiff1d, np.setxor1d: sets.setxor1d,
    np.unwrap: differences.unwrap, np.gradient: differences.gradient,
    np.einsum_path: contractions.einsum_path,
    np.packbits: bits.packbits, np.unpackbits: bits.unpackbits,
    np.apply_along_axis: function_application.apply_along_axis,
    np.apply_over_axes: function_application.apply_over_axes,
    np.piecewise: function_application.piecewise,
    np.histogram2d: histograms.histogram2d, np.histogramdd: histograms.histogramdd,
    np.poly: polynomials.poly, np.polydiv: polynomials.polydiv,
    np.polyfit: polynomials.polyfit, np.roots: polynomials.roots,
    np.fromiter: lambda iterable, dtype=None, count=-1, *, like=None: _np_array(
        list(iterable), dtype),
})
for _name, _impl in (("unique_values", sets.unique_values),
                     ("unique_counts", sets.unique_counts),
                     ("unique_inverse", sets.unique_inverse),
                     ("unique_all", sets.unique_all), ("vecdot", contractions.vecdot),
                     ("matvec", contractions.matvec), ("vecmat", contractions.vecmat)):
    if hasattr(np, _name):
        FUNCTIONS[getattr(np, _name)] = _impl
if hasattr(np.linalg, "vecdot"):
    FUNCTIONS[np.linalg.vecdot] = lambda x1, x2, /, *, axis=-1: contractions.vecdot(
        x1, x2, axis=axis)
from autograph.runtime.numpy import inplace_functions as _inplace  # noqa: E402

FUNCTIONS.update(_inplace.REFUSE)   # as a statement on a name: converters/item_updates.py
INPLACE = _inplace.INPLACE
