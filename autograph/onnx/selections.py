"""ONNX lowerings of the selections whose length is counted when the graph runs: `x[mask]`
(Compress), `x[mask] = v` (ScatterND at NonZero's indices), `np.nonzero` (NonZero),
`np.unique` (Unique), `np.cumsum` (CumSum), `broadcast_to` to lengths known at run time
(Expand), the fills from a shape tensor (ConstantOfShape), and `np.searchsorted` (no ONNX
operator: composed of a comparison of every value with every boundary, counted). Registered
into ops.RULES.
"""

import numpy as np

from autograph.onnx.ops import RULES, _shape_input, rule
from autograph.onnx.values import Unsupported, onnx_dtype


def _i64(b, values):
    return b.const(np.array(values, np.int64))


@rule("boolean_mask")
def _boolean_mask(b, node, ins):
    x, mask = node.inputs
    if mask.shape is None or x.shape is None:
        raise Unsupported(node, "a boolean mask of unknown rank")
    if len(mask.shape) == len(x.shape):          # the whole array: flattened, selected
        return b.emit("Compress", [ins[0], ins[1]])
    if len(mask.shape) == 1:                     # rows
        return b.emit("Compress", [ins[0], ins[1]], axis=0)
    # the leading k axes: flattened into one, then rows
    k = len(mask.shape)
    shape = b.emit("Shape", [ins[0]])
    rest = b.emit("Slice", [shape, _i64(b, [k]), _i64(b, [len(x.shape)])])
    flat = b.emit("Reshape", [ins[0], b.emit("Concat", [_i64(b, [-1]), rest], axis=0)])
    flat_mask = b.emit("Reshape", [ins[1], _i64(b, [-1])])
    return b.emit("Compress", [flat, flat_mask], axis=0)


@rule("nonzero")
def _nonzero(b, node, ins):
    x = ins[0]
    if node.inputs[0].dtype.kind == "c":
        raise Unsupported(node, "complex values")
    found = b.emit("NonZero", [x])                     # (rank, count) int64
    outs = [b.emit("Gather", [found, b.const(np.array(i, np.int64))], axis=0)
            for i in range(len(node.outputs))]
    return outs[0] if len(outs) == 1 else outs


@rule("unique")
def _unique(b, node, ins):
    x = node.inputs[0]
    values, index, inverse, counts = b.emit("Unique", [ins[0]], n_out=4, sorted=1)
    picked = {"values": values, "index": index, "counts": counts}
    outs = []
    for what, t in zip(node.attrs["outputs"], node.outputs):
        if what == "inverse":
            shape = b.emit("Shape", [ins[0]]) if t.shape is not None and \
                x.shape is not None and len(t.shape) == len(x.shape) else _i64(b, [-1])
            outs.append(b.emit("Reshape", [inverse, shape]))
        else:
            outs.append(picked[what])
    return outs[0] if len(outs) == 1 else outs


@rule("cumulative_sum")
def _cumulative_sum(b, node, ins):
    x, out = node.inputs[0], node.outputs[0]
    if out.shape is None or x.shape != out.shape:
        raise Unsupported(node, "a cumulative sum with an initial zero")
    value = b.cast(ins[0], x.dtype, out.dtype)
    return b.emit("CumSum", [value, _i64(b, node.attrs["axis"])])


@rule("searchsorted")
def _searchsorted(b, node, ins):
    a, v = node.inputs[:2]
    if len(ins) != 2 or a.shape is None or len(a.shape) != 1:
        raise Unsupported(node, "searchsorted into anything but a 1-D array")
    dtype = np.result_type(a.dtype, v.dtype)
    bounds, values = b.cast(ins[0], a.dtype, dtype), b.cast(ins[1], v.dtype, dtype)
    # how many boundaries lie before each value: a[j] < v (left) or a[j] <= v (right)
    before = b.emit("Less" if node.attrs["side"] == "left" else "LessOrEqual",
                    [bounds, b.emit("Unsqueeze", [values, _i64(b, [-1])])])
    counted = b.emit("Cast", [before], to=onnx_dtype(np.int64))
    return b.emit("ReduceSum", [counted, _i64(b, [-1])], keepdims=0)


@rule("repeat_index")
def _repeat_index(b, node, ins):
    """Output element j comes from the first i with cumsum(counts)[i] > j (ONNX has no
    repeat with counts, and no error: negative counts are not checked here)."""
    counts = b.cast(ins[0], node.inputs[0].dtype, np.int64)
    ends = b.emit("CumSum", [counts, _i64(b, 0)])
    total = b.emit("ReduceSum", [counts], keepdims=0)
    positions = b.emit("Range", [b.const(np.array(0, np.int64)), total,
                                 b.const(np.array(1, np.int64))])
    before = b.emit("LessOrEqual", [ends, b.emit("Unsqueeze", [positions, _i64(b, [-1])])])
    counted = b.emit("Cast", [before], to=onnx_dtype(np.int64))
    return b.emit("ReduceSum", [counted, _i64(b, [-1])], keepdims=0)


@rule("full_of_shape")
def _full_of_shape(b, node, ins):
    from onnx import numpy_helper
    dtype = node.attrs["dtype"]
    fill = numpy_helper.from_array(np.array([node.attrs["fill_value"]], dtype), "fill")
    shape = b.cast(ins[0], node.inputs[0].dtype, np.int64)
    return b.emit("ConstantOfShape", [shape], value=fill)


@rule("broadcast_to")
def _broadcast_to(b, node, ins):
    # the target is already the broadcast shape (checked while tracing): Expand gives it
    return b.emit("Expand", [ins[0], _shape_input(b, node, node.attrs["shape"], 1)])


@rule("setitem")
def _setitem(b, node, ins):
    """`x[mask] = v` for a mask of x's shape: v (one value, or one per True) scattered at
    the mask's indices."""
    x, v = node.inputs[:2]
    index = node.attrs["index"]
    if len(index) != 1 or index[0][0] != "t" or len(node.inputs) != 3:
        raise Unsupported(node, "an assignment other than x[mask] = v")
    mask = node.inputs[2]
    if mask.dtype.kind != "b" or x.shape is None or mask.shape is None or \
            len(mask.shape) != len(x.shape) or v.shape is None or len(v.shape) > 1:
        raise Unsupported(node, "an assignment other than x[mask] = v with a mask of x's shape")
    where = b.emit("Transpose", [b.emit("NonZero", [ins[2]])], perm=[1, 0])   # (count, rank)
    count = b.emit("Slice", [b.emit("Shape", [where]), _i64(b, [0]), _i64(b, [1])])
    values = b.emit("Expand", [b.cast(ins[1], v.dtype, x.dtype), count])
    return b.emit("ScatterND", [ins[0], where, values])


__all__ = ["RULES"]
