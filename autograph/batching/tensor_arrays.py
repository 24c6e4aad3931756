"""Batching rules of TensorArray operations: a handle whose elements carry the lane axis.

A TensorArray handle is batched when its elements are: each element written is the
batch of that element (lane on axis 0), written at ONE index for every lane. So a
TensorArray filled at a loop counter that all lanes share (`for t in ag.range(n)` with
an unbatched `n`) batches; `stack()` gives (n, lanes, ...), moved to (lanes, n, ...).
Per-lane indices (each lane writing or reading its own position) are refused: the lanes'
arrays would have different lengths. An empty TensorArray (just made) becomes batched by
its first batched write (`transform.materialize` lets it through).
"""

import numpy as np

from autograph.batching.transform import (BatchingError, batched_value, defbatch, rebind,
                                          where)


def _lanes(frame):
    return frame.size if isinstance(frame.size, int) else None


def _element_attrs(frame, node):
    es = node.attrs.get("element_shape")
    return dict(node.attrs, element_shape=None if es is None else (_lanes(frame),) + tuple(es))


def _no_per_lane_index(node, batched, k):
    if batched[k]:
        raise BatchingError(
            f"vmap cannot batch TensorArray {node.op[3:]}{where(node)} at a per-element "
            "index: each element would use a different position (a ragged batch). Collect "
            "the values in a preallocated array with x[i] = v instead")


def write(frame, node, args, batched):
    _no_per_lane_index(node, batched, 1)
    h, i, v = args
    return [(rebind(node, [h, i, batched_value(frame, v, batched[2])])[0], True)]


def unstack(frame, node, args, batched):
    h, value = args
    value = np.moveaxis(batched_value(frame, value, batched[1]), 1, 0)
    return [(rebind(node, [h, value])[0], True)]


def read(frame, node, args, batched):
    _no_per_lane_index(node, batched, 1)
    return [(rebind(node, args, _element_attrs(frame, node))[0], True)]


def stacked(frame, node, args, batched):
    """stack and gather: (n, lanes, ...) -> (lanes, n, ...)."""
    if node.op == "ta_gather":
        _no_per_lane_index(node, batched, 1)
    out = rebind(node, args, _element_attrs(frame, node))[0]
    return [(np.moveaxis(out, 1, 0), True)]


def size(frame, node, args, batched):
    return [(rebind(node, args)[0], False)]    # every lane has the same length


def pop(frame, node, args, batched):
    """ta_pop -> (the element, batched like every element, and the handle)."""
    _no_per_lane_index(node, batched, 1)
    value, handle = rebind(node, args, _element_attrs(frame, node))
    return [(value, True), (handle, True)]


def nonempty(frame, node, args, batched):
    return [(rebind(node, args)[0], batched[0])]   # every lane has the same length


defbatch("ta_write", write)
defbatch("ta_insert", write)          # (handle, index, value), as a write
defbatch("ta_pop", pop)
defbatch("ta_nonempty", nonempty)
defbatch("ta_unstack", unstack)
defbatch("ta_read", read)
defbatch(("ta_stack", "ta_gather"), stacked)
defbatch("ta_size", size)
