"""Indices proved in bounds when compiling, so that native code may run without checks.

Native functions are compiled with Numba's `boundscheck=True`: an index out of range then
raises IndexError, as NumPy does, instead of reading or writing stray memory. The checks
cost little per access, but they keep LLVM from optimising a tight loop: a prefix sum
`out[i] = out[i - 1] + x[i]` ran 2.2x slower than `numba.njit` (which checks nothing).

Most loops index with their counter: `for i in range(1, n)` over arrays whose shapes are
known when compiling (native code is compiled per shape). `in_bounds(graph, consts)` is
True when every integer index of the graph is one of these, provably in range:

- a constant, or a counter loop's counter (codegen's `_counter_loop`: start, limit and
  step constants, so its values are `range(start, limit, step)`) plus or minus constants
  (an interval is carried through `add`/`subtract` and Identity, into branches and into
  nested loops as captured values);
- used on an axis of static length D with every value within [-D, D) (a negative index
  counts from the end, which Numba does without bounds checks too);
- in a getitem, setitem or ufunc_at with basic indices (slices clamp; an index array or
  an Ellipsis is not proved);

and every other node is an operation that does not index (elementwise arithmetic,
reductions, matmul, constructors, control flow). Anything else (TensorArrays, gradient
stacks, gathers) keeps the checks. The compiled code is then `boundscheck=False`.
"""

import numpy as np

from autograph.runtime.exec.native import fuse as native_fuse

_INDEXING = ("getitem", "setitem", "ufunc_at")
_PLAIN = frozenset(native_fuse._ELEMENTWISE) | {
    "Const", "Placeholder", "Identity", "sum", "mean", "max", "min", "prod", "matmul",
    "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "where", "astype",
    "abs", "absolute"}


def in_bounds(graph, consts):
    """True when every index of `graph` is proved in bounds (see the module docstring);
    `consts`: id(tensor) -> known constant value (the lowering's)."""
    return _graph(graph, {}, consts)


def _graph(graph, ranges, consts):
    for nd in graph.nodes:
        op = nd.op
        if op == "Const":
            value = nd.attrs["value"]
            if np.ndim(value) == 0 and np.asarray(value).dtype.kind in "iu":
                ranges[id(nd.outputs[0])] = (int(value), int(value))
        elif op in ("add", "subtract") and not nd.attrs and len(nd.inputs) == 2:
            a, b = (ranges.get(id(t)) for t in nd.inputs)
            if a is not None and b is not None:
                ranges[id(nd.outputs[0])] = (a[0] + b[0], a[1] + b[1]) if op == "add" \
                    else (a[0] - b[1], a[1] - b[0])
        elif op in ("Identity", "negative") and id(nd.inputs[0]) in ranges:
            lo, hi = ranges[id(nd.inputs[0])]
            ranges[id(nd.outputs[0])] = (lo, hi) if op == "Identity" else (-hi, -lo)
        elif op == "cond":
            for key in ("true_graph", "false_graph"):
                branch = nd.attrs[key]
                if not _graph(branch, _passed(branch.inputs, nd.inputs[1:], ranges), consts):
                    return False
            continue
        elif op == "while_loop":
            if not _loop(nd, ranges, consts):
                return False
            continue
        elif op in _INDEXING:
            if not _index_proved(nd, ranges):
                return False
            continue
        if op not in _PLAIN:
            return False
    return True


def _passed(inner_inputs, outer, ranges):
    return {id(t): ranges[id(o)] for t, o in zip(inner_inputs, outer) if id(o) in ranges}


def _loop(node, ranges, consts):
    from autograph.runtime.exec.codegen import _constant_of, _counter_loop
    n = len(node.outputs)
    cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
    captured = list(node.inputs[n:])
    if node.attrs.get("maximum_iterations") == "input":
        captured = captured[:-1]
    cond_ranges = _passed(cg.inputs[n:], captured, ranges)
    body_ranges = _passed(bg.inputs[n:], captured, ranges)
    counter = _counter_loop(node, consts, shortest=0)
    if counter is not None:
        start = consts.get(id(node.inputs[counter.k]))
        limit = _constant_of(node, cg, counter.limit, consts)
        if start is not None and limit is not None and np.ndim(start) == 0 and \
                np.ndim(limit) == 0:
            values = range(int(start), int(limit) + counter.shift, counter.step)
            if len(values):
                lo, hi = min(values[0], values[-1]), max(values[0], values[-1])
                body_ranges[id(bg.inputs[counter.k])] = (lo, hi)
    return _graph(cg, cond_ranges, consts) and _graph(bg, body_ranges, consts)


def _index_proved(node, ranges):
    x = node.inputs[0]
    dynamic = node.inputs[1:] if node.op == "getitem" else node.inputs[2:]
    if x.shape is None or not all(isinstance(d, int) for d in x.shape):
        return False
    axis = 0
    for item in node.attrs["index"]:
        tag = item[0]
        if tag == "n":
            continue
        if tag in ("e", "t") or axis >= len(x.shape):
            return False
        size = x.shape[axis]
        if tag == "i":
            lo = hi = int(item[1])
        elif tag == "d":
            found = ranges.get(id(dynamic[item[1]]))
            if found is None:
                return False
            lo, hi = found
        elif tag != "s":               # (a slice clamps its bounds)
            return False
        if tag != "s" and not (-size <= lo and hi < size):
            return False
        axis += 1
    return True
