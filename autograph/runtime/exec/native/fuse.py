"""Loop fusion for `jit_compile=True`: runs of elementwise ops and last-axis reductions
become one loop nest in one Numba function (a *kernel*) instead of one NumPy call each.

Lowered one node per line, a layer norm + activation is ~15 array expressions: each
allocates its result and walks the whole array. A kernel walks the array once per
reduction it must finish first, keeps every intermediate in a register (a scalar local of
the loop body), and allocates only the values read after it. Its shape is an *iteration
shape* S (every dimension known when compiling): the loops run over S[:-1] outside and the
last axis inside; a reduction over the last axis (`sum`, `mean`, `max`, `min`) accumulates
in one inner loop and its row value (shape S[:-1] + (1,), or S[:-1] without keepdims) is a
scalar local that later inner loops of the same row read. So
`(y - mean(y)) / sqrt(mean((y - mean(y))**2) + eps)` then `tanh` is three inner loops per
row and one array written.

Which nodes join (`plan`): a maximal run of consecutive nodes of one graph (constants in
between are free), each an elementwise op or a last-axis reduction whose scalar form
native_ops has, with static shapes, real or bool dtypes (complex for `_COMPLEX`'s ops:
`z * z + c`, `abs(z)`, `where`), every input broadcasting into its
output, and an output of shape S (or a row shape). The per-element expression is the very
one native_ops writes for 0-d tensors (so dtypes, wrapping and NaN handling are the scalar
lowering's, which the tests compare with the interpreter); `tanh` on float64 is
native_math's vectorizable version. A run is consecutive, so emitting it at its last
member keeps the graph's order; a member's value that a node after the run (or the
graph's outputs) reads is an array the kernel returns.

The kernel is a function of its own compiled with `boundscheck=False` (its indices are
loop counters within S, and it checks its inputs' shapes against S once on entry), so
LLVM vectorizes its loops; the main function keeps bounds checks for the user's indexing.
"""

import numpy as np

from autograph.runtime.exec.native import fuse_updates
from autograph.runtime.exec.native import ops as native_ops, vector_math as native_math

_ELEMENTWISE = (set(native_ops._OPERATORS) | set(native_ops._UFUNCS)
                | set(native_ops._LOGICAL)
                | {"negative", "positive", "positive_bool", "logical_not", "bitwise_invert",
                   "astype", "Cast", "where", "clip", "Identity", "remainder",
                   "floor_divide"})
_REDUCTIONS = ("sum", "mean", "max", "min")
FULL, ROW, FLAT = "full", "row", "flat"


def _static(t):
    return t.shape is not None and all(isinstance(d, int) for d in t.shape)


def _broadcasts(shape, into):
    if len(shape) > len(into):
        return False
    return all(d == 1 or d == e for d, e in zip(shape, into[len(into) - len(shape):]))


def _reduced_axis(node):
    """The reduction's input when it reduces exactly its last axis with a scalar form we
    write (dtype kept; mean on floats; max/min of a non-empty row), else None."""
    if len(node.inputs) != 1:
        return None
    x, out = node.inputs[0], node.outputs[0]
    attrs = node.attrs
    axis = attrs.get("axis")
    if not x.shape or set(attrs) - {"axis", "keepdims", "dtype", "initial", "where"}:
        return None
    if attrs.get("initial") is not None or attrs.get("where") is not None:
        return None
    if axis is None:
        if len(x.shape) != 1:
            return None
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if len(axes) != 1 or axes[0] % len(x.shape) != len(x.shape) - 1:
            return None
    if attrs.get("dtype") not in (None, out.dtype) or x.dtype != out.dtype:
        return None
    kind = x.dtype.kind
    if node.op == "mean" and kind != "f" or node.op == "sum" and kind not in "iuf" or \
            kind not in "iufb" or node.op in ("max", "min") and (x.shape[-1] == 0 or
                                                                  kind == "b"):
        return None
    keep = bool(attrs.get("keepdims"))
    expect = x.shape[:-1] + ((1,) if keep else ())
    return x if tuple(out.shape) == tuple(expect) else None


# ops whose complex scalar form in Numba is NumPy's own formula (the naive product,
# abs as hypot): complex values join kernels only through these (no division, no
# transcendental functions, whose complex algorithms differ between the two)
_COMPLEX = {"add", "subtract", "multiply", "negative", "positive", "abs", "conj",
            "equal", "not_equal", "where", "Identity"}


def fusible(node):
    """True when `node` may be a kernel member on its own terms (see the module doc)."""
    if len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    kinds = "biufc" if node.op in _COMPLEX else "biuf"
    if not _static(out) or out.dtype.kind not in kinds:
        return False
    if any(not _static(t) or t.dtype.kind not in kinds for t in node.inputs):
        return False
    if node.op in _REDUCTIONS:
        return _reduced_axis(node) is not None
    if node.op not in _ELEMENTWISE or not out.shape:
        return False
    if not all(_broadcasts(t.shape, out.shape) for t in node.inputs):
        return False
    return scalar_expr(node, ["a"] * len(node.inputs)) is not None


class _Scalar:
    """A 0-d stand-in for a tensor, so native_ops writes its scalar form."""
    shape = ()

    def __init__(self, t):
        self.dtype = t.dtype
        self.node = t.node if t.shape == () else _NOT_CONST


class _NotConst:
    op = "Placeholder"


_NOT_CONST = _NotConst()


class _ScalarNode:
    def __init__(self, node):
        self.op, self.attrs, self.name = node.op, node.attrs, node.name
        self.inputs = tuple(_Scalar(t) for t in node.inputs)
        self.outputs = (_Scalar(node.outputs[0]),)


def scalar_expr(node, ins):
    """The expression of one element of elementwise `node`, of its exact dtype (for a
    float64 tanh, native_math.TANH: the kernel writes native_math.tanh_lines)."""
    if node.op == "Identity":
        return ins[0]
    proxy = _ScalarNode(node)
    if node.op == "tanh" and node.outputs[0].dtype == np.float64:
        return native_math.TANH
    expr = native_ops.lower(proxy, ins)
    return None if expr is None else native_ops.scalar_of(proxy.outputs[0], expr)


class Kernel:
    """One run of fused nodes: its iteration shape, members in graph order, each value's
    kind (FULL: shape S; ROW/FLAT: one value per row) and phase (the inner loop that
    computes a FULL value, or before which a row value is known)."""

    def __init__(self, shape):
        self.shape = shape
        self.members = []
        self.kind = {}      # id(tensor) -> FULL / ROW / FLAT
        self.phase = {}     # id(tensor) -> int
        self.outputs = []   # member outputs read after the kernel
        self.deferred = []  # assign_variable nodes met inside the run: emitted after it

    def updates(self):
        """The Variable updates among the members (fuse_updates.Update)."""
        return [n for n in self.members if isinstance(n, fuse_updates.Update)]

    def row_shapes(self):
        return {self.shape[:-1] + (1,): ROW, self.shape[:-1]: FLAT}

    def accepts(self, node):
        """Add `node` if it fits this kernel; False leaves the kernel unchanged."""
        out = node.outputs[0]
        if node.op in _REDUCTIONS:
            x = node.inputs[0]
            if tuple(x.shape) != self.shape or self.kind.get(id(x)) == FLAT:
                return False
            loop = self.phase.get(id(x), 0)
            kind = ROW if len(out.shape) == len(self.shape) else FLAT
            self._add(node, kind, loop + 1)
            return True
        shape = tuple(out.shape)
        kind = FULL if shape == self.shape else (
            ROW if shape == self.shape[:-1] + (1,) else None)
        if kind is None:
            return False
        inner = [t for t in node.inputs if id(t) in self.kind]
        if any(self.kind[id(t)] == FLAT for t in inner):
            return False
        if kind == ROW and any(self.kind[id(t)] == FULL for t in inner):
            return False
        self._add(node, kind, max((self.phase[id(t)] for t in inner), default=0))
        return True

    def _add(self, node, kind, phase):
        self.members.append(node)
        self.kind[id(node.outputs[0])] = kind
        self.phase[id(node.outputs[0])] = phase


def _variable(node):
    ref = node.attrs.get("variable")
    return id(ref()) if callable(ref) else None


def plan(graph):
    """{id(last member): Kernel} and the ids of all members, for `graph`'s own nodes.

    A Variable's read (a local's value in native code) does not end a run, nor does its
    assign: an assign met inside a run is emitted after the kernel (`Kernel.deferred`),
    which is the same program as long as no read of that Variable follows it inside the
    run (such a read ends the run). So an optimizer's update of one parameter, which reads
    its slots, assigns them and computes the step, is one kernel. An `assign_add` /
    `assign_sub` of an elementwise delta is a member itself (fuse_updates.Update: `new =
    old - delta` in the loop), its new value assigned after the kernel like an assign."""
    kernels, current = [], None
    assigned = set()     # Variables assigned inside the current run
    for node in graph.nodes:
        if node.op == "Const":
            continue
        if node.op == "read_variable" and current is not None:
            if _variable(node) in assigned:
                current = None
            continue
        if node.op == "assign_variable" and current is not None and \
                _variable(node) is not None:
            assigned.add(_variable(node))
            current.deferred.append(node)
            continue
        update = fuse_updates.member(node)      # assign_add/assign_sub (fuse_updates.py)
        if update is not None:
            if _variable(node) in assigned or not fusible(update):
                current = None
                continue
            node = update
        elif not fusible(node):
            current = None
            continue
        if current is None or not current.accepts(node):
            assigned = set()
            x = node.inputs[0] if node.op in _REDUCTIONS else node.outputs[0]
            current = Kernel(tuple(x.shape))
            kernels.append(current)
            if not current.accepts(node):      # (a reduction's own input shape: always)
                current = None
                kernels.pop()
                continue
        if update is not None:     # its new value is assigned after the kernel, in order
            assigned.add(_variable(update.original))
            current.deferred.append(update)
    outside = {}      # id(tensor) -> read by a node outside its kernel or a graph output
    member_of = {id(_graph_node(n)): k for k in kernels for n in k.members}
    for node in graph.nodes:
        k = member_of.get(id(node))
        for t in node.inputs:
            if id(t.node) in member_of and member_of[id(t.node)] is not k:
                outside[id(t)] = t
    for t in graph.outputs:
        if id(t.node) in member_of:
            outside[id(t)] = t
    found, members = {}, set()
    order = {id(n): p for p, n in enumerate(graph.nodes)}
    for k in kernels:
        for n in k.members:
            if isinstance(n, fuse_updates.Update):   # a Variable's new value: always read
                outside[id(n.outputs[0])] = n.outputs[0]
        k.outputs = [n.outputs[0] for n in k.members if id(n.outputs[0]) in outside]
        last = order[id(_graph_node(k.members[-1]))]
        k.deferred = [n for n in k.deferred                             # (after: in place)
                      if order[id(_graph_node(n))] < last or n is k.members[-1]]
        if not k.outputs or all(n.op == "Identity" for n in k.members):
            continue
        found[id(_graph_node(k.members[-1]))] = k
        members.update(id(_graph_node(n)) for n in k.members)
        members.update(id(_graph_node(n)) for n in k.deferred)
    return found, members


def _graph_node(member):
    """The graph's node behind a kernel member (an Update stands for its update_variable)."""
    return getattr(member, "original", member)
