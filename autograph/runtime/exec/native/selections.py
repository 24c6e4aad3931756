"""Native forms of the selections whose length is counted when the graph runs: `x[mask]`,
`np.nonzero`, `np.unique`, `cumsum`, `searchsorted`, and what a counted `np.repeat` is made
of (`repeat_index`, `take`), for ops.py's table.

Each rule answers a Numba expression, or None where Numba's subset of NumPy cannot compute
the primitive exactly (then `jit_compile=True` raises `NativeLoweringError` naming the
operation and the user's line). Numba allows one advanced index per indexing, so masks and
index arrays are lowered along the first axis only: `x[mask]` with a 1-D mask, `x[i]` for
`take(..., axis=0)`.
"""

import numpy as np


def _rank(t):
    return None if t.shape is None else len(t.shape)


def _boolean_mask(node, ins, attrs):
    x, mask = node.inputs
    if _rank(mask) != 1 or not _rank(x):
        return None            # a mask over several axes: Numba has no such index
    return f"{ins[0]}[{ins[1]}]"


def _nonzero(node, ins, attrs):
    if _rank(node.inputs[0]) != 1 or len(node.outputs) != 1:
        return None
    return f"np.nonzero({ins[0]})[0].astype(np.int64)"


def _unique(node, ins, attrs):
    if tuple(attrs["outputs"]) != ("values",) or node.inputs[0].dtype.kind not in "biuf":
        return None
    return f"np.unique({ins[0]})"


def _cumulative_sum(node, ins, attrs):
    x, out = node.inputs[0], node.outputs[0]
    if _rank(x) != 1 or out.dtype != x.dtype or x.dtype.kind not in "iuf":
        return None
    return f"np.cumsum({ins[0]})"


def _searchsorted(node, ins, attrs):
    a, v = node.inputs[:2]
    if len(ins) != 2 or _rank(a) != 1 or a.dtype != v.dtype or a.dtype.kind not in "iuf":
        return None
    return f"np.searchsorted({ins[0]}, {ins[1]}, side={attrs['side']!r}).astype(np.int64)"


def _take(node, ins, attrs):
    x, i = node.inputs
    if attrs["axis"] != 0 or _rank(i) != 1 or not _rank(x) or i.dtype.kind not in "iu":
        return None
    return f"{ins[0]}[{ins[1]}]"


def _repeat_index(node, ins, attrs):
    # Numba's repeat raises ValueError for a negative count, as NumPy's does
    return f"np.repeat(np.arange({ins[0]}.shape[0]), {ins[0]}).astype(np.int64)"


def _repeat(node, ins, attrs):
    if attrs.get("axis") is not None or not isinstance(attrs["repeats"], (int, np.integer)):
        return None
    return f"np.repeat({ins[0]}, {int(attrs['repeats'])})"


RULES = {"boolean_mask": _boolean_mask, "nonzero": _nonzero, "unique": _unique,
         "cumulative_sum": _cumulative_sum, "searchsorted": _searchsorted, "take": _take,
         "repeat": _repeat, "repeat_index": _repeat_index}
