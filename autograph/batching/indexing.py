"""Batching rules of indexing: `x[key]`, `np.take` (axes.py), `x[key] = v`, `ufunc.at`.

With one key for every lane (its dynamic parts unbatched) the key gets a leading full
slice: `x[key]` per lane is `x[:, key]` on the batch. A per-lane integer `x[i]` (the
common case inside a loop: each lane at its own position) gathers from the batch flattened
to (lanes * n, ...) at `lane * n + i`; `x[i] = v` scatters there. Other per-lane keys run
one lane at a time (lanes.py).
"""

import numpy as np

from autograph.runtime.numpy import array_ops, shape_ops, updates
from autograph.runtime.numpy.indexing import _index_shape
from autograph.batching.lanes import lane_loop
from autograph.batching.transform import (BatchingError, defbatch, dims_of, materialize, rank,
                                      rebind, where)

FULL = ("s", None, None, None)


def _prefixable(index):
    """Does a leading full slice keep every selected axis in place? (NumPy moves the axes of
    index arrays that are not adjacent to the front.)"""
    arrays = [k for k, it in enumerate(index) if it[0] == "t"]
    return not arrays or arrays == list(range(arrays[0], arrays[-1] + 1))


def _flat_positions(frame, x, i):
    """Rows of `x` flattened to (lanes * n, ...) for lane-wise integer `i` (negative ones
    counted from the end, as NumPy does)."""
    n = dims_of(x)[1]
    i = np.where(i < 0, i + n, i)
    return array_ops.arange(frame.size) * n + i, shape_ops.reshape(x, (-1,) + dims_of(x)[2:])


def getitem(frame, node, args, batched):
    x, dynamic = args[0], args[1:]
    index = node.attrs["index"]
    if not any(batched[1:]):
        if _prefixable(index):
            return [(t, True) for t in rebind(node, args, dict(node.attrs, index=(FULL,) + index))]
    elif index == (("d", 0),) and rank(node.inputs[0]) >= 1:
        if not batched[0]:          # every lane reads its own row of one array
            return [(np.take(x, dynamic[0], axis=0), True)]
        rows, flat = _flat_positions(frame, x, dynamic[0])
        return [(np.take(flat, rows, axis=0), True)]
    return lane_loop(frame, node, args, batched)


def _region_rank(node):
    """The rank of x[key] for one element (what the value broadcasts against)."""
    x, dynamic = node.inputs[0], node.inputs[2:]
    index = node.attrs["index"]
    if any(it[0] == "t" for it in index):
        shape = updates._advanced_shape(x.shape, index, dynamic)
    else:
        shape = _index_shape(x.shape, index)
    if shape is None:
        raise BatchingError(f"vmap needs the rank of the assigned region{where(node)}")
    return len(shape)


def _lift(v, r):
    have = rank(v) - 1
    return v if have >= r else np.expand_dims(v, tuple(range(1, 1 + r - have)))


def setitem(frame, node, args, batched):
    """setitem and ufunc_at: the updated array is batched whenever anything is."""
    x, v, dynamic = args[0], args[1], args[2:]
    if not batched[0]:
        x = materialize(frame, x)
    index = node.attrs["index"]
    if batched[1]:
        v = _lift(v, _region_rank(node))
    if not any(batched[2:]) and _prefixable(index):
        attrs = dict(node.attrs, index=(FULL,) + index)
        return [(t, True) for t in rebind(node, [x, v] + dynamic, attrs)]
    if index == (("d", 0),) and node.op == "setitem":
        rows, flat = _flat_positions(frame, x, dynamic[0])
        out = updates.setitem(flat, rows, v)
        return [(shape_ops.reshape(out, dims_of(x)), True)]
    return lane_loop(frame, node, [x, v] + dynamic, [True, batched[1]] + batched[2:])


def index_get(frame, node, args, batched):
    index = node.attrs["index"]
    if not any(batched[1:]) and _prefixable(index):
        return [(t, True) for t in rebind(node, args, dict(node.attrs, index=(FULL,) + index))]
    return lane_loop(frame, node, args, batched)


def boolean_mask(frame, node, args, batched):
    if batched[1]:
        raise BatchingError(
            f"vmap cannot batch x[mask] with a per-element mask{where(node)}: each element "
            "would select a different number of values (a ragged batch). Use "
            "np.where(mask, x, fill) to keep the shape.")
    return lane_loop(frame, node, args, batched)


defbatch("getitem", getitem)
defbatch(("setitem", "ufunc_at"), setitem)
defbatch("index_get", index_get)
defbatch("boolean_mask", boolean_mask)
