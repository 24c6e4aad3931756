"""Cheap scalar shape arithmetic in generated code (NumPy device only), and the cheap
NumPy-scalar box it and native code use.

`len(xb)` in a loop body traces to `shape_of(xb)` -> `getitem [0]` -> `astype(float64)`,
and a batch's end to `minimum(lo + batch, n)`: four kernel calls, ~1 us each, for what a
hand-written loop does with `xb.shape[0]` and `min`. Here codegen writes them as Python
where the result is provably the kernel's, value, dtype and type (NumPy scalar or 0-d
array) alike, so NEP 50 promotion downstream sees exactly what it saw before:

- `shape_of(x)` read only by constant-index getitems is `x.shape` (a tuple of Python ints)
  and each of those getitems is `int64(shape[k])` (written `(zero + shape[k])`, see
  `boxed`): the NumPy scalar that indexing the
  kernel's int64 array gives.
- `astype` of such a getitem (known to be a NumPy scalar) to a dtype it casts to safely is
  `float64(x)`: the NumPy scalar `xp.astype` gives for a NumPy scalar. Other inputs may be
  0-d arrays, which astype keeps as arrays, so they keep the kernel.
- `minimum`/`maximum` of two integer scalars of the output's dtype is `int64(a if a <= b
  else b)`: ufuncs give a NumPy scalar for 0-d inputs too, and integers have no NaN to
  propagate. Floats keep the ufunc (NaN).
- `permute_dims(x, axes)` is `x.transpose(axes)`: what `np.permute_dims` calls, without
  its Python-level wrapper.
- `ad_stack_get(stack, i)` (a backward loop's read of what its forward loop stored,
  autodiff/stacks.py) is `stack.items[i]`: the kernel's list lookup without the call
  (~0.7 us against ~0.1; case 11's backward loop reads two per step).
"""

import numpy as np

__all__ = ["ShapeArithmetic", "box", "boxed"]


class ShapeArithmetic:
    """Per-compilation state: which tensors are shape tuples and which are known NumPy
    scalars, and each graph's readers (built once per graph: linear in its size)."""

    def __init__(self, codegen):
        self.cg = codegen
        self.tuples = set()     # id(tensor): a shape_of written as `x.shape`
        self.scalars = set()    # id(tensor): known to be a NumPy scalar at run time
        self.readers = {}       # id(graph) -> {id(tensor): [reading node or None]}
        self.types = {}         # dtype -> (form, global name) of its box (see boxed)

    def expression(self, graph, node, ins):
        """The node as Python, or None when it keeps its kernel."""
        op = node.op
        if op == "shape_of":
            return self.shape_of(graph, node, ins)
        if op == "getitem" and id(node.inputs[0]) in self.tuples:
            self.scalars.add(id(node.outputs[0]))
            return self.boxed(node.outputs[0].dtype, f"{ins[0]}{_index(node)}")
        if op == "astype" and id(node.inputs[0]) in self.scalars:
            return self.astype(node, ins)
        if op in ("minimum", "maximum") and len(ins) == 2 and not node.attrs:
            return self.extremum(node, ins)
        if op == "ad_stack_get" and len(ins) == 2:
            return f"{ins[0]}.items[{ins[1]}]"
        if op == "permute_dims" and set(node.attrs) == {"axes"} and node.inputs[0].shape:
            # (an array: only 0-d values may be Python scalars in generated code)
            axes = tuple(int(a) for a in node.attrs["axes"])
            return f"{ins[0]}.transpose({axes!r})"
        return None

    def shape_of(self, graph, node, ins):
        out = node.outputs[0]
        readers = self.readers_of(graph).get(id(out), [])
        if not readers or any(r is None or r.op != "getitem" or r.inputs[0] is not out
                              or len(r.inputs) != 1 or _index(r) is None for r in readers):
            return None
        self.tuples.add(id(out))
        return f"{ins[0]}.shape"

    def astype(self, node, ins):
        x, out = node.inputs[0], node.outputs[0]
        if set(node.attrs) - {"dtype", "weak"} or out.shape != () or \
                out.dtype.kind not in "biufc" or not np.can_cast(x.dtype, out.dtype, "safe"):
            return None
        self.scalars.add(id(out))
        return self.boxed(out.dtype, ins[0])

    def extremum(self, node, ins):
        a, b = node.inputs
        out = node.outputs[0]
        if out.shape != () or a.shape != () or b.shape != () or out.dtype.kind not in "iu" \
                or a.dtype != out.dtype or b.dtype != out.dtype:
            return None
        compare = "<=" if node.op == "minimum" else ">="
        self.scalars.add(id(out))
        return self.boxed(out.dtype, f"{ins[0]} if {ins[0]} {compare} {ins[1]} else {ins[1]}")

    def boxed(self, dtype, expr):
        """`expr` (a Python number, or a NumPy scalar that casts to `dtype` safely) as the
        NumPy scalar of `dtype`: `zero + (expr)` where NEP 50 makes that the constructor's
        result (`box` below: ~35 ns against the constructor's ~250), else
        `dtype.type(expr)`. Bools keep the constructor (a NumPy bool is no index)."""
        dtype = np.dtype(dtype)
        name = self.types.get(dtype)
        if name is None:
            form, value = box(dtype)
            if form != "add":
                form, value = "call", dtype.type
            name = self.types[dtype] = (form, self.cg.bind(f"ag_{dtype.name}", value))
        form, name = name
        return f"({name} + ({expr}))" if form == "add" else f"{name}({expr})"

    def readers_of(self, graph):
        index = self.readers.get(id(graph))
        if index is None:
            index = self.readers[id(graph)] = {}
            for nd in graph.nodes:
                for t in nd.inputs:
                    index.setdefault(id(t), []).append(nd)
            for t in graph.outputs:
                index.setdefault(id(t), []).append(None)
        return index


def _index(node):
    """`[k]` for a getitem of one constant int index, else None."""
    index = node.attrs.get("index")
    if set(node.attrs) != {"index"} or not index or len(index) != 1 or index[0][0] != "i" \
            or type(index[0][1]) is not int:
        return None
    return f"[{index[0][1]}]"


# -- a Python scalar as the NumPy scalar of a given dtype, cheaply -----------------------------
#
# Numba returns a 0-d result as a Python bool/int/float/complex, and generated code meets
# Python ints (loop counters, shapes); the interpreter's results are NumPy scalars of the
# graph's dtypes. `np.int64(r)` costs ~250-300 ns (the constructor parses its arguments),
# while under NumPy 2's promotion rules (NEP 50: a Python scalar is "weak", it takes the NumPy
# operand's dtype) `ZERO + r` with ZERO = np.int64(0) gives the same np.int64 in ~35 ns.
#
# The identity added is 0 for integers, -0.0 for floats (-0.0 + x is x for every x, -0.0 and
# NaN included, where 0.0 + -0.0 would be 0.0) and -0.0-0.0j for complex. Bools index the pair
# (np.False_, np.True_). Each dtype's box is checked on probe values against the constructor
# (type and bytes) before it is used; other dtypes, and NumPy 1 (value-based promotion), keep
# the constructor. Used here and by runtime.exec.native (results, scalar Variables).

_BOXES = {}   # dtype -> ("add", zero) | ("index", pair) | ("call", type)


def box(dtype):
    """("add", zero), ("index", pair) or ("call", type): how to box a scalar as `dtype`."""
    found = _BOXES.get(dtype)
    if found is None:
        found = _BOXES[dtype] = _choose_box(np.dtype(dtype))
    return found


def _choose_box(dtype):
    t = dtype.type
    if dtype.kind == "b":
        return ("index", (np.False_, np.True_))
    if dtype.kind not in "iufc" or int(np.__version__.split(".")[0]) < 2:   # no NEP 50
        return ("call", t)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        zero, probes = t(0), [0, 1, info.max, info.min, info.max // 3, info.min // 3]
    else:
        real = np.finfo(dtype)
        edges = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"),
                 float(real.max), float(real.min), float(real.smallest_subnormal)]
        if dtype.kind == "f":
            zero, probes = t(-0.0), edges
        else:
            zero = t(complex(-0.0, -0.0))
            probes = [complex(a, b) for a in edges for b in edges[:7]]
    with np.errstate(all="raise"):
        for v in probes:
            want, got = t(v), zero + v
            if type(got) is not t or got.tobytes() != want.tobytes():
                return ("call", t)
    return ("add", zero)


def boxed(ns, name, dtype, value):
    """The expression boxing `value` (Numba's Python scalar) as a NumPy scalar of `dtype`,
    with the constant it needs stored in `ns` under `name`."""
    form, ns[name] = box(dtype)
    if form == "add":
        return f"{name} + {value}"
    if form == "index":
        return f"{name}[{value}]"
    return f"{name}({value})"


