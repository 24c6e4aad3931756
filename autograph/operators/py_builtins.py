"""Python builtins with a tensor meaning: what `range(n)`, `len(x)`, ... become in
converted code.

Each one is the builtin itself on Python values (so converted code on Python values behaves
like the original) and does the sensible graph thing when an argument is a tensor:
`range(n)` with a tensor n is a graph range that `for` loops iterate with a counter,
`len(x)` is the length of the first axis, `abs`/`min`/`max` are NumPy's element-wise
functions, `int`/`float`/`bool` are casts. `print` is not here on purpose: a plain `print`
runs while tracing (as the guides teach); `ag.print` prints on every run.
"""

import builtins

import numpy as np

from autograph.operators.iterables import StagedEnumerate, StagedIterable, StagedZip, first_dim
from autograph.operators.location import where
from autograph.runtime.ir.tensor import is_tensor


def _any_tensor(args):
    return any(is_tensor(a) for a in args)


def range_(*args):
    """range(...) on Python ints; a graph range (op "range") when an argument is a tensor."""
    if _any_tensor(args):
        from autograph.runtime import ops
        return ops.range_(*args)
    return builtins.range(*args)


def len_(x):
    """len(x); of a tensor, the length of its first axis: a Python int when the shape says
    it, else an int64 scalar tensor (never a guess: `range(len(x))` then loops in the graph,
    `[0.0] * len(x)` is refused, since no list of that length can be made while tracing)."""
    if is_tensor(x):
        if x.shape is None or not x.shape:
            raise TypeError(
                f"len() of {x!r}{where()}: "
                + ("its rank is unknown while tracing, so it has no known first axis. Give "
                   "the argument a TensorSpec with a known rank (dimensions may be None)"
                   if x.shape is None else "it is a scalar (0-d) tensor, which has no length")
                + ".")
        return first_dim(x)
    size = getattr(x, "size", None)
    if type(x).__name__ == "TensorArray" and callable(size):
        return size()
    return builtins.len(x)


def enumerate_(iterable, start=0):
    if is_tensor(iterable) or isinstance(iterable, StagedIterable):
        return StagedEnumerate(iterable, start)
    if type(iterable).__name__ == "Dataset" and hasattr(iterable, "enumerate"):
        return iterable.enumerate(start)   # still a Dataset: a traced loop stays one node
    return builtins.enumerate(iterable, start)


def zip_(*iterables, **kwargs):
    if _any_tensor(iterables):
        return StagedZip(*iterables)
    return builtins.zip(*iterables, **kwargs)


def abs_(x):
    return np.abs(x) if is_tensor(x) else builtins.abs(x)


def int_(*args, **kwargs):
    if args and is_tensor(args[0]):
        return args[0].astype(np.int64)
    return builtins.int(*args, **kwargs)


def float_(x=0.0):
    if is_tensor(x):
        return x.astype(np.float64)
    return builtins.float(x)


def bool_(x=False):
    if is_tensor(x):
        return x != 0 if x.dtype != np.bool_ else x
    return builtins.bool(x)


def _reduce(builtin_fn, elementwise, whole, args, kwargs):
    if len(args) == 1 and is_tensor(args[0]) and not kwargs:
        return whole(args[0])
    if _any_tensor(args) and not kwargs:
        value = args[0]
        for arg in args[1:]:
            value = elementwise(value, arg)
        return value
    return builtin_fn(*args, **kwargs)


def min_(*args, **kwargs):
    return _reduce(builtins.min, np.minimum, np.min, args, kwargs)


def max_(*args, **kwargs):
    return _reduce(builtins.max, np.maximum, np.max, args, kwargs)


# builtin name -> the function converted code calls instead (the call_trees converter reads
# this table; it is the one place that says which builtins have a tensor meaning)
BUILTINS = {
    builtins.range: "range",
    builtins.len: "len",
    builtins.enumerate: "enumerate",
    builtins.zip: "zip",
    builtins.abs: "abs",
    builtins.int: "int",
    builtins.float: "float",
    builtins.bool: "bool",
    builtins.min: "min",
    builtins.max: "max",
}
