"""Tensor iterables for `for` loops: what a staged loop needs to know about its iterable.

A staged `for` loop never materialises its iterable: it runs a counter from `start` by
`delta` while `test(counter)` holds, and reads item `item(counter)`. A graph range (the
runtime's "range" node) gives its own start, limit and delta; any other tensor is iterated
along its first axis; enumerate and zip wrap those.
"""

import numpy as np

from autograph import errors
from autograph.operators.location import where
from autograph.runtime.ir.tensor import is_tensor


class StagedIterable:
    """A tensor iterable: how many items, and item i, for a counter loop."""

    def __init__(self, start, limit, delta, item):
        self.start, self.limit, self.delta, self.item = start, limit, delta, item

    @classmethod
    def of(cls, tensor):
        node = tensor.node
        if node.op == "range":  # never materialise a range: loop over its counter
            start, limit, delta = node.inputs
            return cls(start, limit, delta, lambda i: i)
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
