"""`Dataset.element_spec`: the nest of TensorSpec of one element, by tf.data's rules.

Each transformation says what it does to the spec, as tf.data does, without running the
pipeline:

    from_tensor_slices   each array's shape without its first axis
    from_tensors         each array's shape, exactly (from_tensors(np.array([1, 2])): (2,))
    range                () of the output type
    from_generator       the output signature
    map                  the function traced once, in a throwaway graph, on placeholders of
                         the input spec (its Python control flow converted, as in the loop)
    batch(n)             (None, *shape), or (n, *shape) with drop_remainder=True
    enumerate            (TensorSpec((), int64), spec)
    zip                  the nest of the inputs' specs
    concatenate          the most specific spec both inputs fit (autograph.data.combine)
    filter, shuffle, take, skip, shard, repeat, prefetch: the input's spec

A traced loop's elements have these shapes (autograph.data.stages pins a dropped-remainder
batch's first axis to n), and batch() after filter()/repeat() allocates its buffers from them.
"""

import contextlib
import io

import numpy as np

from autograph.runtime.ir import nest


def element_spec(ds):
    from autograph.function.trace_type import TensorSpec
    k, a = ds._kind, ds._args
    if k == "slices":
        return nest.pack_sequence_as(ds._structure, [
            TensorSpec(None if x.shape is None else x.shape[1:], x.dtype) for x in ds._own])
    if k == "tensors":
        return nest.pack_sequence_as(ds._structure, [TensorSpec(x.shape, x.dtype)
                                                     for x in ds._own])
    if k == "range":
        return TensorSpec((), a[3])
    if k == "gen":
        return a[0]
    if k == "zip":
        return nest.pack_sequence_as(ds._structure, [u.element_spec for u in ds._ups])
    if k == "concatenate":
        from autograph.data.combine import concatenated_spec
        return concatenated_spec(ds._ups[0].element_spec, ds._ups[1].element_spec)
    up = ds._ups[0].element_spec
    if k == "map":
        return _traced(ds._fn, up)
    if k == "batch":
        lead = a[0] if a[1] else None
        return nest.map_structure(
            lambda s: TensorSpec(None if s.shape is None else (lead,) + s.shape, s.dtype), up)
    if k == "enumerate":
        return (TensorSpec((), np.int64), up)
    return up


def _traced(fn, up):
    """The spec of `fn(element)` for elements of spec `up`."""
    from autograph import api
    from autograph.data.stages import call
    from autograph.runtime.ir.graph import Graph
    from autograph.runtime.ir.tensor import Tensor
    from autograph.function.trace_type import TensorSpec
    g = Graph("element_spec")
    with g.as_default(), contextlib.redirect_stdout(io.StringIO()):
        elem = nest.map_structure(lambda s: g.placeholder("x", np.dtype(s.dtype), s.shape), up)
        out = call(lambda *args: api.converted_call(fn, *args), elem)

    def spec(x):
        if isinstance(x, Tensor):
            return TensorSpec(x.shape, x.dtype)
        x = np.asarray(x)
        return TensorSpec(x.shape, x.dtype)
    return nest.map_structure(spec, out)
