"""Python lists and tuples that hold symbolic tensors, packed into one tensor as NumPy would.

`np.array([x, 1])`, `np.concatenate((v, [i]))` or `np.sum([a, b])` give NumPy a Python
sequence whose items are (or contain) symbolic tensors. NumPy cannot look inside such a
sequence (`Tensor.__array__` has no value to give), and its dispatch protocol only sees
top-level arguments, so these calls are packed here: each nested sequence becomes a `stack`
of its items, all in the dtype `np.array` would choose.

NumPy's dtype for a nested sequence: every leaf counts with its own dtype, and a Python
scalar counts as its default dtype (int -> int64, float -> float64; inside a sequence
Python scalars are not weak, so `np.array([np.float32(1), 1.5])` is float64). A weak tensor
stands for a Python scalar and counts the same way. `np.asarray([x, 1])` with `x` an int32
tensor is therefore int64, as NumPy makes it from the values.

`call(f, args, kwargs)` is how converted code calls a NumPy function (see
`autograph.operators.calls.converted_call`): when some argument holds a tensor, the array-like
arguments are packed and the function runs on tensors; otherwise it is NumPy's own call.
"""

import functools

import numpy as np

from autograph.runtime.ir import dtypes
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy import none_operands

_SEQUENCES = (list, tuple)


def contains_tensor(x):
    """Whether `x` is a tensor or a list/tuple holding one at any depth."""
    if isinstance(x, Tensor):
        return True
    if type(x) in _SEQUENCES or isinstance(x, tuple):   # (namedtuples too)
        return any(contains_tensor(item) for item in x)
    return False


def _leaf_dtypes(x, out):
    if isinstance(x, Tensor):
        out.append(dtypes.default_dtype(dtypes.key_of(x.dtype, x.weak)) if x.weak else x.dtype)
    elif isinstance(x, _SEQUENCES) and contains_tensor(x):
        for item in x:
            _leaf_dtypes(item, out)
    else:   # a Python scalar, NumPy value or plain nested list: what NumPy makes of it
        out.append(np.asarray(x).dtype)
    return out


def packed_dtype(x):
    """The dtype `np.array(x)` would have."""
    return functools.reduce(np.promote_types, _leaf_dtypes(x, []))


def pack(x, dtype=None):
    """`np.array(x, dtype)` for a nested list/tuple holding tensors: a strong tensor."""
    from autograph.runtime.numpy.elementwise import cast
    if isinstance(x, Tensor):
        return cast(x, x.dtype if dtype is None and not x.weak else dtype or packed_dtype(x))
    dtype = packed_dtype(x) if dtype is None else np.dtype(dtype)
    return _build(x, dtype)


def _build(x, dtype):
    from autograph.runtime.numpy.elementwise import cast, const
    if isinstance(x, Tensor):
        return cast(x, dtype)
    if isinstance(x, _SEQUENCES) and contains_tensor(x):
        from autograph.runtime.numpy.joins import stack
        parts = [_build(item, dtype) for item in x]
        shapes = {p.shape for p in parts}
        if len(shapes) > 1 and all(s is not None and None not in s for s in shapes):
            raise ValueError(
                "setting an array element with a sequence: the items of the list have "
                f"different shapes ({', '.join(str(p.shape) for p in parts)}), so NumPy "
                "could not make an array of them either (an inhomogeneous shape)")
        return stack(parts)
    return const(np.asarray(x, dtype=dtype))


# -- calling NumPy functions with tensors inside sequences -----------------------------------

def _fn(name):
    return getattr(np, name, None)


# np.array and friends: argument 0 is the data, argument 1 the dtype
_ARRAY = {f for f in map(_fn, ("array", "asarray", "asanyarray", "ascontiguousarray",
                               "asfortranarray")) if f is not None}
# argument 0 is a sequence of arrays: each item is packed on its own
_SEQUENCE_OF_ARRAYS = {f for f in map(_fn, ("concatenate", "concat", "stack", "hstack",
                                            "vstack", "dstack", "column_stack", "row_stack"))
                       if f is not None}
# argument 0 is a nested list of arrays whose nesting is the layout (np.block): kept as it
# is (packing [[a, b], [c, d]] into one tensor would make np.block return that tensor)
_NESTED_ARRAYS = {f for f in map(_fn, ("block",)) if f is not None}
# every positional argument is array-like (besides the ufuncs)
_ALL_ARRAYS = {f for f in map(_fn, ("where", "dot", "vdot", "matmul", "outer", "inner",
                                    "clip", "isclose", "allclose", "array_equal", "tensordot",
                                    "cross", "broadcast_arrays", "meshgrid", "kron"))
               if f is not None}
# the shape comes first: lengths may be tensors, the runtime's own version takes them
_SHAPE_FIRST = {f for f in map(_fn, ("zeros", "ones", "empty", "full", "arange"))
                if f is not None}


class _Converts:
    """NumPy functions converted code always calls through converted_call (see
    call_trees): they make arrays from their arguments without NumPy's dispatch ever seeing
    a tensor (np.array, np.zeros, np.eye, np.hamming, np.fromiter, ...), and those whose
    lengths none_operands checks while tracing (np.linspace)."""

    def __contains__(self, f):
        if f in _ARRAY or f in _SHAPE_FIRST or f is np.fromiter or f in none_operands.CHECKED:
            return True
        from autograph.runtime.numpy import dispatch
        return dispatch.undispatched(f) is not None or dispatch.meaningless(f) is not None


CONVERTS = _Converts()


def is_numpy_callable(f):
    """Whether `f` is one of NumPy's functions or ufuncs (not a method of an array)."""
    if type(f) is np.ufunc:
        return True
    module = getattr(f, "__module__", None)
    return isinstance(module, str) and (module == "numpy" or module.startswith("numpy.")) \
        and callable(f) and not isinstance(f, type)


def _packed(x):
    return pack(x) if not isinstance(x, Tensor) and contains_tensor(x) else x


def call(f, args, kwargs):
    """`f(*args, **kwargs)` for a NumPy callable `f`, with tensors inside sequences packed."""
    none_operands.check(f, args, kwargs)   # (while tracing: x.shape[0] of an unknown length)
    if f is np.fromiter and args:   # an iterable of tensors: np.array of its items
        args = (list(args[0]),) + tuple(args[1:])
        if contains_tensor(args[0]):
            return _array(args[0], *args[1:2], **{k: v for k, v in kwargs.items()
                                                  if k == "dtype"})
    if not (any(contains_tensor(a) for a in args) or
            any(contains_tensor(v) for v in kwargs.values())):
        return f(*args, **kwargs)
    from autograph.runtime.numpy import dispatch
    from autograph.runtime.numpy.dispatch import FUNCTIONS
    why = dispatch.meaningless(f)
    if why is not None:
        raise TypeError(why)
    if f in _ARRAY:
        return _array(*args, **kwargs)
    if f in _SHAPE_FIRST:
        return FUNCTIONS[f](*args, **kwargs)
    ours = dispatch.undispatched(f)
    if ours is not None:   # NumPy would not hand the call to a tensor: ours runs it
        return ours(*[_packed(a) for a in args], **kwargs)
    args = list(args)
    if f in _NESTED_ARRAYS:
        pass
    elif f in _SEQUENCE_OF_ARRAYS and args and isinstance(args[0], _SEQUENCES):
        args[0] = [_packed(item) for item in args[0]]
    elif type(f) is np.ufunc or f in _ALL_ARRAYS:
        args = [_packed(a) for a in args]
    elif args:
        args[0] = _packed(args[0])
    return f(*args, **kwargs)


def _array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None,
           device=None):
    """np.array / np.asarray of a value holding tensors."""
    out = pack(obj, dtype)
    if ndmin:
        from autograph.runtime.numpy.shape_ops import expand_dims
        missing = ndmin - len(out.shape)
        if missing > 0:
            out = expand_dims(out, tuple(range(missing)))
    return out
