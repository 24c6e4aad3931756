"""Cheap scalar shape arithmetic in generated code (NumPy device only).

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
"""

import numpy as np

from autograph.runtime.exec import scalar_box

__all__ = ["ShapeArithmetic"]


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
        result (runtime.exec.scalar_box: ~35 ns against the constructor's ~250), else
        `dtype.type(expr)`. Bools keep the constructor (a NumPy bool is no index)."""
        dtype = np.dtype(dtype)
        name = self.types.get(dtype)
        if name is None:
            form, value = scalar_box.box(dtype)
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
