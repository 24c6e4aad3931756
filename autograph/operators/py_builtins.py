"""Python builtins with a tensor meaning: what `range(n)`, `len(x)`, ... become in
converted code.

Each one is the builtin itself on Python values (so converted code on Python values behaves
like the original) and does the sensible graph thing when an argument is a tensor:
`range(n)` with a tensor n is a graph range that `for` loops iterate with a counter,
`len(x)` is the length of the first axis, `abs`/`min`/`max` are NumPy's element-wise
functions, `int`/`float`/`bool` are casts. `print` is not here on purpose: a plain `print`
runs while tracing (as the guides teach); `ag.print` prints on every run.

Tensor iterables (`StagedIterable`: what a staged `for` loop needs to know about its
iterable; one module with the builtins that make them, always loaded together). A staged `for` loop never materialises its iterable: it runs a counter from `start` by
`delta` while `test(counter)` holds, and reads item `item(counter)`. A graph range (the
runtime's "range" node) gives its own start, limit and delta; any other tensor is iterated
along its first axis; enumerate and zip wrap those.
"""

import builtins
import sys

import numpy as np

from autograph import errors
from autograph.operators.location import where
from autograph.runtime.ir.tensor import is_tensor


# -- tensor iterables for `for` loops -----------------------------------------------------

class StagedIterable:
    """A tensor iterable: how many items, and item i, for a counter loop. `progress`: the
    description of the bar the loop shows (ag.range(..., progress=...)), or None."""
    progress = None

    def __init__(self, start, limit, delta, item):
        self.start, self.limit, self.delta, self.item = start, limit, delta, item

    @classmethod
    def of(cls, tensor):
        node = tensor.node
        if node.op == "range":  # never materialise a range: loop over its counter
            start, limit, delta = node.inputs
            it = cls(start, limit, delta, lambda i: i)
            # a bar (ag.range(..., progress=True)): only a marked range's module is loaded
            progress = sys.modules.get("autograph.runtime.progress")
            if progress is not None:
                it.progress = progress.marked(node)
            return it
        return cls(0, first_dim(tensor), 1, lambda i: tensor[i])

    def test(self, i):
        """Whether counter value `i` is inside the iterable."""
        delta = _const_value(self.delta)
        if delta is not None:
            return i < self.limit if delta > 0 else i > self.limit
        return np.where(self.delta > 0, i < self.limit, i > self.limit)


def _const_value(x):
    """The value of a Python number or a Const tensor; None when only known at run time."""
    if is_tensor(x):
        if x.node.op == "Const":
            return x.node.attrs["value"].item() if x.node.attrs["value"].ndim == 0 else None
        return None
    return x


def first_dim(tensor):
    """The length of a tensor's first axis: a Python int when static, else a tensor."""
    if tensor.shape is not None and tensor.shape and tensor.shape[0] is not None:
        return tensor.shape[0]
    if tensor.shape is None:
        raise errors.StagingError(
            f"Cannot iterate over {tensor!r}{where()}: its rank is unknown while tracing, so "
            f"it has no first axis to loop over. Give the argument a TensorSpec with a known "
            f"rank (dimensions may still be None).")
    if not tensor.shape:
        raise errors.StagingError(
            f"Cannot iterate over the 0-d tensor {tensor!r}{where()}: iteration goes along "
            f"the first axis, and a scalar has none.")
    from autograph.runtime.numpy.dispatch import dim   # np.shape is static: None when unknown
    return dim(tensor, 0)


class StagedEnumerate(StagedIterable):
    """enumerate(tensor) (or of a staged zip): items are (index, item)."""

    def __init__(self, tensor, start=0):
        base = tensor if isinstance(tensor, StagedIterable) else StagedIterable.of(tensor)
        super().__init__(base.start, base.limit, base.delta,
                         lambda i: (i - base.start + start, base.item(i)))
        self.progress = base.progress


class StagedZip(StagedIterable):
    """zip(a, b, ...) where some are tensors: items are tuples, as long as the shortest."""

    def __init__(self, *iterables):
        from autograph.runtime.numpy import packing
        from autograph.runtime.ir import primitives
        # Python sequences zipped with a tensor become tensors (constants, or packed as NumPy
        # would pack them when they hold tensors), so a counter can index them
        iterables = [t if is_tensor(t) else packing.pack(t) if packing.contains_tensor(t)
                     else primitives.convert(np.asarray(t)) for t in iterables]
        lengths = [first_dim(t) for t in iterables]
        limit = lengths[0]
        for length in lengths[1:]:
            limit = np.minimum(limit, length) if (is_tensor(limit) or is_tensor(length)) else min(limit, length)
        super().__init__(0, limit, 1, lambda i: tuple(t[i] for t in iterables))


# -- the builtins ----------------------------------------------------------------------------

def _any_tensor(args):
    return any(is_tensor(a) for a in args)


def range_(*args):
    """range(...) on Python ints; a graph range (op "range") when an argument is a tensor."""
    if _any_tensor(args):
        from autograph.runtime import ops
        return ops.range_(*args)
    if any(a is None for a in args):     # (x.shape[0] of an unknown dimension, tracing)
        from autograph.runtime.ir import primitives
        if primitives.get_default_graph() is not None:
            raise TypeError(f"range() bound{where()}: " + primitives.not_a_value(None))
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
    if type(x).__name__ in ("TensorArray", "TensorList") and callable(size):
        return size()
    return builtins.len(x)


def _lists_as_arrays(args, what):
    """`args` with each list a staged loop changed (operators/tensor_list.py) as its
    elements stacked: iterating that array gives the elements."""
    return tuple(a.iterable(what) if type(a).__name__ == "TensorList" else a for a in args)


def enumerate_(iterable, start=0):
    iterable, = _lists_as_arrays((iterable,), "enumerate")
    if is_tensor(iterable) or isinstance(iterable, StagedIterable):
        return StagedEnumerate(iterable, start)
    if type(iterable).__name__ == "Dataset" and hasattr(iterable, "enumerate"):
        return iterable.enumerate(start)   # still a Dataset: a traced loop stays one node
    return builtins.enumerate(iterable, start)


def zip_(*iterables, **kwargs):
    iterables = _lists_as_arrays(iterables, "zip")
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
    if len(args) == 1 and type(args[0]).__name__ == "TensorList" and not kwargs:
        return whole(args[0].iterable(builtin_fn.__name__, scalars=True))
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
