"""The array API namespace of symbolic tensors: what `Tensor.__array_namespace__()` returns.

Libraries written against the Python array API standard (SciPy under SCIPY_ARRAY_API=1,
scikit-learn under `array_api_dispatch=True`, array-api-extra) ask an array for its
namespace, `xp = x.__array_namespace__()`, and then call only `xp.<name>(...)`. A traced
tensor answers with this module's `namespace`: every function of the 2024.12 standard
(creation, elementwise, linear algebra, statistics, manipulation, searching, sorting, set
functions, `fft`, `linalg`, inspection), each of which stages the primitives the NumPy
surface already has. So those libraries trace through unchanged, and what they build is an
ordinary graph: optimised, differentiated, saved like any.

NumPy 2's main namespace is itself an array API namespace (`np.__array_api_version__` is
"2024.12"), and calling its functions on tensors stages them (NumPy's dispatch protocols).
So most names here are NumPy's function run through `packing.call` (which stages creation
functions and lists holding tensors too), with the result made a tensor: the standard says
a namespace's functions return *its* arrays, and a NumPy constant in the middle of a traced
computation would make `array_namespace(x, y)` see two libraries. The few places where
NumPy's signature or semantics differ from the standard (sort's `descending`, `finfo` of an
array, `asarray`'s `copy`, `astype`'s `device`, ...) have their own function below.

Eager values keep NumPy's namespace: only symbolic tensors return this one.
"""

import types

import numpy as np

from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor

API_VERSION = "2024.12"

# the standard's names, by section (2024.12); each is NumPy's function of that name unless
# _OWN below defines it
CREATION = ("arange", "asarray", "empty", "empty_like", "eye", "full", "full_like",
            "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros",
            "zeros_like")
ELEMENTWISE = (
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal",
    "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
    "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "pow", "real",
    "reciprocal", "remainder", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
    "subtract", "tan", "tanh", "trunc")
LINEAR_ALGEBRA = ("matmul", "matrix_transpose", "tensordot", "vecdot")
MANIPULATION = ("broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip",
                "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack",
                "tile", "unstack")
SEARCHING = ("argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where")
SETS = ("unique_all", "unique_counts", "unique_inverse", "unique_values")
SORTING = ("argsort", "sort")
STATISTICS = ("cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std",
              "sum", "var")
UTILITY = ("all", "any", "diff")
INDEXING = ("take", "take_along_axis")
DATA_TYPES = ("astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type")
INSPECTION = ("__array_namespace_info__",)
CONSTANTS = ("e", "inf", "nan", "newaxis", "pi")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128")
OTHER = ("broadcast_shapes", "from_dlpack", "isin")   # (isin: the 2025.12 draft's)
LINALG = ("cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
          "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
          "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
          "vector_norm")
FFT = ("fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
       "irfft", "irfftn", "rfft", "rfftfreq", "rfftn")

FUNCTION_NAMES = (CREATION + ELEMENTWISE + LINEAR_ALGEBRA + MANIPULATION + SEARCHING + SETS
                  + SORTING + STATISTICS + UTILITY + INDEXING + DATA_TYPES + OTHER)


def _tensor(x):
    """A result as this namespace's array: NumPy values made while tracing become constants
    (tuples and namedtuples of results, item by item); anything else is returned as is."""
    if isinstance(x, (np.ndarray, np.generic)):
        if get_default_graph() is None:
            return x
        from autograph.runtime.ir.primitives import const
        return const(x)
    if isinstance(x, tuple):
        items = [_tensor(v) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, list):
        return [_tensor(v) for v in x]
    return x


def _staged(np_fn, name):
    """The namespace's `name`: NumPy's function, called so that tensors stage it."""
    from autograph.runtime.numpy import packing

    def fn(*args, **kwargs):
        if "device" in kwargs:   # NumPy takes only "cpu"; say what we take
            _device(kwargs.pop("device"))
        return _tensor(packing.call(np_fn, args, kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name} on symbolic tensors (the array API's `{name}`)."
    return fn


# -- where NumPy's signature or meaning is not the standard's --------------------------------

def _dtype_of(x):
    return x.dtype if isinstance(x, Tensor) or hasattr(x, "dtype") else x


def _finfo(type, /):
    return np.finfo(_dtype_of(type))


def _iinfo(type, /):
    return np.iinfo(_dtype_of(type))


def _sort(x, /, *, axis=-1, descending=False, stable=True):
    return _sorted(np.sort, x, axis, descending)


def _argsort(x, /, *, axis=-1, descending=False, stable=True):
    return _sorted(np.argsort, x, axis, descending)


def _sorted(fn, x, axis, descending):
    if not descending:
        return _tensor(fn(x, axis=axis, stable=True))
    # descending and stable: sort the reversed array, then reverse back (equal keys keep
    # their order, as the standard asks); argsort's indices are mapped back
    n = x.shape[axis]
    out = np.flip(fn(np.flip(x, axis=axis), axis=axis, stable=True), axis=axis)
    return out if fn is np.sort else (n - 1) - out


def _asarray(obj, /, *, dtype=None, device=None, copy=None):
    from autograph.runtime.numpy import packing
    from autograph.runtime.numpy.elementwise import as_tensor, cast
    _device(device)
    if isinstance(obj, Tensor):
        out = obj if dtype is None else cast(obj, np.dtype(dtype))
        return out.copy() if copy and out is obj else out
    if packing.contains_tensor(obj):
        return packing.pack(obj, dtype)
    return as_tensor(np.asarray(obj, dtype=dtype)) if get_default_graph() is not None \
        else np.asarray(obj, dtype=dtype)


def _astype(x, dtype, /, *, copy=True, device=None):
    from autograph.runtime.numpy.elementwise import as_tensor, cast
    _device(device)
    if not isinstance(x, Tensor):   # called eagerly on an array
        return np.astype(x, dtype, copy=copy)
    return cast(as_tensor(x), np.dtype(dtype))


def _diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _tensor(np.concatenate(parts, axis=axis))
    return _tensor(np.diff(x, n=n, axis=axis))


def _device(device):
    if device is not None and str(device) != "cpu":
        raise ValueError(f"autograph's array API namespace has one device, 'cpu' (the graph "
                         f"runs where ag.function's device= puts it), not {device!r}")


def _from_dlpack(x, /, *, device=None, copy=None):
    raise TypeError("from_dlpack cannot make a symbolic tensor: it reads memory another "
                    "object owns, and a traced graph holds values, not buffers. Convert the "
                    "array with asarray outside the traced function and pass it in.")


def _take_along_axis(x, indices, /, *, axis=-1):
    return _tensor(np.take_along_axis(x, indices, axis=axis))


def _count_nonzero(x, /, *, axis=None, keepdims=False):
    return _tensor(np.count_nonzero(x, axis=axis, keepdims=keepdims))


class Info:
    """`__array_namespace_info__()`: what the namespace supports. Shapes that depend on
    values (boolean masks, `nonzero`, `unique_*`) exist only when the graph runs, so those
    capabilities are False, as in JAX's namespace."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        return np.__array_namespace_info__().default_dtypes(device="cpu")

    def dtypes(self, *, device=None, kind=None):
        return np.__array_namespace_info__().dtypes(device="cpu", kind=kind)


_OWN = {"finfo": _finfo, "iinfo": _iinfo, "sort": _sort, "argsort": _argsort,
        "asarray": _asarray, "astype": _astype, "from_dlpack": _from_dlpack,
        "take_along_axis": _take_along_axis, "count_nonzero": _count_nonzero, "diff": _diff}


def _build():
    ns = types.ModuleType("autograph.array_api", __doc__)
    ns.__array_api_version__ = API_VERSION
    for name in FUNCTION_NAMES:
        fn = _OWN.get(name) or getattr(np, name)
        # dtype and shape queries answer from static information: NumPy's own function
        plain = name in ("can_cast", "isdtype", "result_type", "broadcast_shapes") or name in _OWN
        setattr(ns, name, fn if plain else _staged(fn, name))
    for name in DTYPES:
        setattr(ns, name, np.dtype(name))
    for name in CONSTANTS:
        setattr(ns, name, getattr(np, name))
    info = Info()
    ns.__array_namespace_info__ = lambda: info
    ns.linalg = types.ModuleType("autograph.array_api.linalg")
    for name in LINALG:
        setattr(ns.linalg, name, _staged(getattr(np.linalg, name), name))
    from autograph.runtime.numpy.scipy_special import Special
    ns.special = Special()   # where SciPy looks for special functions of a namespace
    ns.fft = types.ModuleType("autograph.array_api.fft")
    for name in FFT:
        setattr(ns.fft, name, _staged(getattr(np.fft, name), name))
    return ns


namespace = _build()


def array_namespace(tensor, api_version=None):
    """What `Tensor.__array_namespace__(api_version=...)` returns."""
    if api_version is not None and api_version not in (
            "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"autograph's array API namespace implements the 2024.12 standard "
                         f"(and the versions before it), not {api_version!r}")
    return namespace
