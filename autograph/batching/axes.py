"""Batching rules of the primitives that name axes: reductions, scans, sorts, flips,
joins, transposes and reshapes. The lane is axis 0, so each rule moves the element's axes
one to the right (an axis counted from the end stays where it was, counted from the start
it shifts by one); `axis=None` ("all of the element") becomes every axis but the lane.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.numpy import array_ops, shape_ops
from autograph.batching.transform import (BatchingError, defbatch, dims_of, materialize, rank,
                                      rebind, where)


def _shift(axis, r):
    """Axis `axis` of an element of rank `r`, as an axis of the batched value."""
    return shapes.normalize_axis(axis, r) + 1


def _shift_all(axis, r):
    if axis is None:
        return tuple(range(1, r + 1))
    if isinstance(axis, tuple):
        return tuple(_shift(a, r) for a in axis)
    return _shift(axis, r)


def _one(frame, node, args, batched, **changes):
    return [(t, True) for t in rebind(node, args, dict(node.attrs, **changes))]


def reduction(frame, node, args, batched):
    x = args[0]
    r = rank(x, node) - 1
    axis = node.attrs["axis"]
    if node.op in ("argmax", "argmin") and axis is None:
        # the index into the flattened element: flatten each lane first
        flat = shape_ops.reshape(x, (frame.size, -1) if r else (frame.size, 1))
        out = rebind(node, [flat], dict(node.attrs, axis=1))[0]
        if node.attrs.get("keepdims"):
            out = shape_ops.reshape(out, (frame.size,) + (1,) * r)
        return [(out, True)]
    return _one(frame, node, args, batched, axis=_shift_all(axis, r))


def along_axis(frame, node, args, batched):
    """cumulative_sum/prod, sort, argsort, flip: one (or None) axis of one input."""
    r = rank(args[0], node) - 1
    return _one(frame, node, args, batched, axis=_shift_all(node.attrs["axis"], r))


def roll(frame, node, args, batched):
    x = args[0]
    r = rank(x, node) - 1
    axis = node.attrs["axis"]
    if axis is None:   # rolls the flattened element
        flat = shape_ops.reshape(x, (frame.size, -1))
        shift = node.attrs["shift"]
        out = rebind(node, [flat], dict(node.attrs, axis=(1,),
                                        shift=shift if isinstance(shift, tuple) else (shift,)))[0]
        return [(shape_ops.reshape(out, (frame.size,) + dims_of(x)[1:]), True)]
    return _one(frame, node, args, batched, axis=_shift_all(axis, r))


def joins(frame, node, args, batched):
    """concat and stack: every input batched; the axis shifts."""
    args = [a if b else materialize(frame, a) for a, b in zip(args, batched)]
    r = rank(args[0], node) - 1
    axis = node.attrs["axis"]
    out_rank = r + 1 if node.op == "stack" else r
    return _one(frame, node, args, [True] * len(args),
                axis=shapes.normalize_axis(axis, out_rank) + 1)


def permute_dims(frame, node, args, batched):
    return _one(frame, node, args, batched, axes=(0,) + tuple(a + 1 for a in node.attrs["axes"]))


def expand_or_squeeze(frame, node, args, batched):
    out_rank = rank(node.outputs[0]) if node.op == "expand_dims" else rank(node.inputs[0])
    return _one(frame, node, args, batched,
                axis=tuple(_shift(a, out_rank) for a in node.attrs["axis"]))


def _spec_dims(spec, dynamic):
    """A shape attr (ints and ("d", j) markers) as ints and tensors."""
    return tuple(dynamic[d[1]] if isinstance(d, tuple) else d for d in spec)


def _unbatched_dims(node, batched):
    if any(batched[1:]):
        raise BatchingError(f"vmap cannot batch {node.op!r}{where(node)}: its shape would "
                            "differ from element to element (a ragged batch)")


def reshape(frame, node, args, batched):
    _unbatched_dims(node, batched)
    target = _spec_dims(node.attrs["shape"], args[1:])
    return [(shape_ops.reshape(args[0], (frame.size,) + target), True)]


def _lift(x, r):
    """Batched `x` with unit axes after the lane up to element rank `r`."""
    have = rank(x) - 1
    return x if have >= r else np.expand_dims(x, tuple(range(1, 1 + r - have)))


def broadcast_to(frame, node, args, batched):
    _unbatched_dims(node, batched)
    target = _spec_dims(node.attrs["shape"], args[1:])
    x = _lift(args[0], len(target))
    return [(np.broadcast_to(x, (frame.size,) + target), True)]


def sum_to_shape(frame, node, args, batched):
    _unbatched_dims(node, batched)
    target = _spec_dims(node.attrs["shape"], args[1:])
    x = args[0]
    extra = rank(x) - 1 - len(target)
    if extra > 0:
        x = np.sum(x, axis=tuple(range(1, 1 + extra)))
    keep = tuple(k + 1 for k, d in enumerate(target)
                 if isinstance(d, int) and d == 1 and x.shape[k + 1] != 1)
    if keep:
        x = np.sum(x, axis=keep, keepdims=True)
    return [(x, True)]


def repeat(frame, node, args, batched):
    x = args[0]
    axis = node.attrs["axis"]
    if axis is None:
        x, axis = shape_ops.reshape(x, (frame.size, -1)), 0
    r = rank(x) - 1
    return _one(frame, node, [x], batched[:1], axis=_shift(axis, r))


def tile(frame, node, args, batched):
    reps = tuple(node.attrs["reps"])
    x = args[0]
    r = rank(x) - 1
    if len(reps) > r:
        x = _lift(x, len(reps))
    reps = (1,) * (rank(x) - 1 - len(reps)) + reps
    return _one(frame, node, [x], batched[:1], reps=(1,) + reps)


def take(frame, node, args, batched):
    x, i = args
    axis = node.attrs["axis"]
    if not batched[1]:      # one index array for every lane
        return _one(frame, node, args, batched, axis=_shift(axis, rank(x) - 1))
    if not batched[0]:      # every lane its own indices into the same array
        out = np.take(x, i, axis=axis)
        return [(np.moveaxis(out, axis, 0) if axis else out, True)]
    # both: gather from the flattened (lane, axis) pair
    x = np.moveaxis(x, _shift(axis, rank(x) - 1), 1)
    n = dims_of(x)[1]
    i = np.where(i < 0, i + n, i)
    lanes = array_ops.arange(frame.size).reshape((-1,) + (1,) * (rank(i) - 1))
    flat = shape_ops.reshape(x, (-1,) + dims_of(x)[2:])
    out = np.take(flat, lanes * n + i, axis=0)           # (lanes, *i.shape[1:], *rest)
    k = rank(i) - 1
    r = rank(node.inputs[0])
    axis = shapes.normalize_axis(axis, r)
    if axis:   # the gathered axes go where the element's axis was
        order = (0,) + tuple(range(1 + k, 1 + k + axis)) + tuple(range(1, 1 + k)) + \
            tuple(range(1 + k + axis, rank(out)))
        out = np.transpose(out, order)
    return [(out, True)]


def matmul(frame, node, args, batched):
    a, b = args
    ra, rb = rank(node.inputs[0]), rank(node.inputs[1])
    if batched[0] and not batched[1]:
        if ra == 1:
            if rb > 2:     # (n,) @ a stack of matrices: one lane at a time
                from autograph.batching.lanes import lane_loop
                return lane_loop(frame, node, args, batched)
            return [(np.matmul(a, b), True)]
        return [(np.matmul(_lift(a, rb), b), True)]
    if batched[1] and not batched[0]:
        if rb == 1:        # each lane's vector as a column
            out = np.matmul(a, _lift(np.expand_dims(b, -1), ra))
            return [(np.squeeze(out, axis=-1), True)]
        return [(np.matmul(a, _lift(b, ra)), True)]
    squeeze = []
    if ra == 1:
        a, squeeze = np.expand_dims(a, 1), squeeze + [-2]
    if rb == 1:
        b, squeeze = np.expand_dims(b, -1), squeeze + [-1]
    r = max(rank(a), rank(b)) - 1
    out = np.matmul(_lift(a, r), _lift(b, r))
    if squeeze:
        out = np.squeeze(out, axis=tuple(squeeze))
    return [(out, True)]


defbatch(("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin"), reduction)
defbatch(("cumulative_sum", "cumulative_prod", "sort", "argsort", "flip"), along_axis)
defbatch("roll", roll)
defbatch(("concat", "stack"), joins)
defbatch("permute_dims", permute_dims)
defbatch(("expand_dims", "squeeze"), expand_or_squeeze)
defbatch("reshape", reshape)
defbatch("broadcast_to", broadcast_to)
defbatch("sum_to_shape", sum_to_shape)
defbatch("repeat", repeat)
defbatch("tile", tile)
defbatch("take", take)
defbatch("matmul", matmul)
