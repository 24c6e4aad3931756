"""Dtype rules for symbolic tensors: NumPy's promotion, with NEP 50 weak Python scalars.

A *weak* tensor (made from a bare Python scalar, or computed only from such) behaves like
the Python scalar it came from: `x_int32 + 1` is int32, `x_int32 + 1.5` is float64. NumPy
itself knows these rules: `ufunc.resolve_dtypes` and `np.result_type` accept the Python
types `int`/`float`/`complex` (or Python values) as weak operands. Here a tensor is turned
into such a *dtype key* (an np.dtype, or a Python type when weak) and NumPy is asked once
per distinct key; answers are cached because tracing asks the same question many times.
"""

import numpy as np

BOOL = np.dtype(bool)
INT8 = np.dtype(np.int8)
INT64 = np.dtype(np.int64)
FLOAT64 = np.dtype(np.float64)

# what a weak tensor of a given dtype kind stands for (bool is the lowest kind anyway,
# so a weak bool behaves exactly like a strong one)
WEAK_TYPE = {"b": BOOL, "i": int, "u": int, "f": float, "c": complex}
# a representative Python value of each weak type, for np.result_type
WEAK_VALUE = {int: 0, float: 0.0, complex: 0j}
_PY_SCALARS = (bool, int, float, complex)


def key_of(dtype, weak):
    """The dtype key of a tensor: its dtype, or the Python type it stands for when weak."""
    return WEAK_TYPE[dtype.kind] if weak else dtype


def key_of_value(value):
    """(dtype key, weak) of a non-tensor operand: a Python scalar is weak, NumPy is not."""
    t = type(value)
    if t is bool:
        return BOOL, True
    if t in _PY_SCALARS:
        return t, True
    return np.asarray(value).dtype, False


def default_dtype(key):
    """The dtype a weak key becomes when nothing else decides (int -> int64, ...)."""
    return key if isinstance(key, np.dtype) else np.asarray(WEAK_VALUE[key]).dtype


_RESOLVED = {}


def resolve_ufunc(ufunc, keys):
    """(input dtypes, output dtypes) of NumPy's loop for `ufunc` on operands with `keys`.

    Raises TypeError (NumPy's message kept) when NumPy has no loop for these dtypes."""
    cache_key = (ufunc, keys)
    hit = _RESOLVED.get(cache_key)
    if hit is None:
        dtypes = ufunc.resolve_dtypes(keys + (None,) * ufunc.nout)
        if all(not isinstance(k, np.dtype) for k in keys) and \
                any(d.kind == "O" for d in dtypes):
            # only weak operands: NumPy picks object loops for comparisons of Python
            # types (np.less on (int, int)); use the default dtypes, as Python values would
            dtypes = ufunc.resolve_dtypes(tuple(default_dtype(k) for k in keys) +
                                          (None,) * ufunc.nout)
        hit = _RESOLVED[cache_key] = (dtypes[:ufunc.nin], dtypes[ufunc.nin:])
    return hit


_RESULT = {}


def result_type(keys):
    """np.result_type of operands with these dtype keys (weak keys promote like scalars)."""
    hit = _RESULT.get(keys)
    if hit is None:
        args = [k if isinstance(k, np.dtype) else WEAK_VALUE[k] for k in keys]
        hit = _RESULT[keys] = np.result_type(*args)
    return hit


def as_dtype(dtype):
    """np.dtype(dtype), accepting also array-API dtype objects by name (`xp.float32`)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        name = getattr(dtype, "name", None) or str(dtype).rsplit(".", 1)[-1]
        return np.dtype(name)
