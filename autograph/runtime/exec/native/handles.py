"""Which native value each handle tensor of a graph is (`jit_compile=True`).

A backward graph passes *handles* (dtype object tensors) between its nodes: the per-
iteration stacks of differentiated loops (`ad_stack_*`, autodiff/stacks.py), gradient
lists (`ad_gl_*`, the cotangents of TensorArrays and stacks) and TensorArrays
(`ta_*`). In the interpreter they are Python objects; native code has typed values only,
so before lowering, every handle tensor is put into a *class*: the handles that can be the
same run-time object (a loop variable's initial value, its placeholders, its body output
and the loop's output; a branch output and the cond's; a push's input and output ...) are
one class, found by union-find over the whole graph, branches and loop bodies included.
A class has one kind and one element type (dtype and static shape, or the class of the
handles it holds: a stack of an inner loop's stacks), so each kind has one native form:

- stack: an int64 offset into one flat buffer per class, declared at the top of the native
  function and grown by doubling. `ad_stack_new` hands out the buffer's current top (and
  reserves the trip count when known), pushes write at offset + index. An inner loop's
  stacks, made once per outer iteration, are consecutive regions of the same buffer, and
  the outer stack holds their offsets (ints), so nesting costs nothing extra;
- gradient list: a tuple (rows, base): dense rows for indices base.. (zeros where no
  cotangent was added), grown by doubling at either end (grad_code.py);
- TensorArray: a tuple (buffer, written mask, length) (native_tensor_arrays in
  grad_code.py), when codegen's fill plans (fills.py) do not apply.

An `ad_gl_new` that only stands in for a handle (the branch of a cond in which a
differentiated loop did not run) takes its class's kind: an unused offset, an empty list.
What cannot be typed (element shapes unknown when compiling, elements of different types,
gradient lists of handles) is a NativeLoweringError naming the operation.
"""

import numpy as np

_OBJECT = np.dtype(object)

STACK, GRADLIST, TENSORARRAY = "stack", "gradient list", "TensorArray"

_KIND_OF_OP = {
    "ad_stack_new": STACK, "ad_stack_push": STACK, "ad_stack_get": STACK,
    "ad_gl_put": GRADLIST, "ad_gl_pop": GRADLIST, "ad_gl_add": GRADLIST,
    "ad_gl_from_rows": GRADLIST, "ad_gl_scatter": GRADLIST, "ad_gl_pop_rows": GRADLIST,
    "ad_gl_get": GRADLIST, "ad_gl_set": GRADLIST, "ad_gl_copy": GRADLIST,
    "ad_gl_gather": GRADLIST, "ad_gl_set_rows": GRADLIST,
    "ta_new": TENSORARRAY, "ta_write": TENSORARRAY, "ta_unstack": TENSORARRAY,
    "ta_read": TENSORARRAY, "ta_stack": TENSORARRAY, "ta_size": TENSORARRAY,
    "ta_gather": TENSORARRAY, "ta_nonempty": TENSORARRAY,
}
OPS = frozenset(_KIND_OF_OP) | {"ad_gl_new"}


def is_handle(t):
    return t.dtype == _OBJECT


class HandleClass:
    """One union-find class: its kind, element (a (dtype, shape) pair or the class of the
    handles it holds), whether a TensorArray of it may grow, and an index for names."""
    __slots__ = ("parent", "kind", "elem", "dynamic", "index", "where")

    def __init__(self):
        self.parent, self.kind, self.elem, self.dynamic = None, None, None, False
        self.index, self.where = None, None

    def root(self):
        c = self
        while c.parent is not None:
            c = c.parent
        return c


class Conflict(Exception):
    """Two uses of one handle class disagree (raised with the node to name)."""


class Handles:
    """The classes of the handle tensors of a graph (see the module docstring)."""

    def __init__(self, graph, fail):
        self.fail = fail          # fail(node, why): raises NativeLoweringError
        self.of = {}              # id(tensor) -> HandleClass (not necessarily a root)
        self._walk(graph)
        self.classes = []
        for c in {id(c.root()): c.root() for c in self.of.values()}.values():
            c.index = len(self.classes)
            self.classes.append(c)

    def cls(self, t):
        c = self.of.get(id(t))
        return None if c is None else c.root()

    def knows(self, t):
        return id(t) in self.of

    # -- building the classes ----------------------------------------------------------------

    def _get(self, t):
        c = self.of.get(id(t))
        if c is None:
            c = self.of[id(t)] = HandleClass()
        return c.root()

    def _union(self, a, b):
        a, b = a.root(), b.root()
        if a is b:
            return a
        if a.kind is not None and b.kind is not None and a.kind != b.kind:
            raise Conflict(f"the same handle is used as a {a.kind} and as a {b.kind}")
        b.parent = a
        a.kind = a.kind or b.kind
        a.dynamic = a.dynamic or b.dynamic
        a.where = a.where or b.where
        ea, eb = a.elem, b.elem
        if ea is None:
            a.elem = eb
        elif eb is not None:
            if isinstance(ea, HandleClass) and isinstance(eb, HandleClass):
                a.elem = self._union(ea, eb)
            elif isinstance(ea, HandleClass) or isinstance(eb, HandleClass) or ea != eb:
                raise Conflict(f"the {a.kind or 'handle'} holds values of different types "
                               f"({_describe(ea)} and {_describe(eb)})")
        return a

    def _same(self, *ts):
        hs = [t for t in ts if is_handle(t)]
        if hs:
            c = self._get(hs[0])
            for t in hs[1:]:
                c = self._union(c, self._get(t))

    def _element(self, c, value, shape=None, dtype=None):
        """Record the element type of class c: a tensor `value` (or dtype and shape)."""
        if value is not None and is_handle(value):
            inner = self._get(value)
            elem = inner
        else:
            dtype = np.dtype(value.dtype if value is not None else dtype)
            shape = value.shape if value is not None else shape
            if shape is None or any(not isinstance(d, int) for d in shape) or \
                    dtype.kind not in "biufc":
                raise Conflict("its values' shape is not known when compiling (native "
                               "code keeps them in a preallocated buffer of one shape)")
            elem = (dtype, tuple(shape))
        probe = HandleClass()
        probe.elem = elem
        self._union(c, probe)

    def _walk(self, graph):
        for node in graph.nodes:
            try:
                self._visit(node)
            except Conflict as exc:
                self.fail(node, str(exc))

    def _visit(self, node):
        op, ins, outs = node.op, node.inputs, node.outputs
        if op == "cond":
            for key in ("true_graph", "false_graph"):
                branch = node.attrs[key]
                for t, o in zip(branch.inputs, ins[1:]):
                    self._same(t, o)
                for t, o in zip(branch.outputs, outs):
                    self._same(t, o)
                self._walk(branch)
            return
        if op == "while_loop":
            n = len(outs)
            cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
            loop_ins = ins[:len(bg.inputs)]
            for k, t in enumerate(loop_ins):
                group = [t, cg.inputs[k], bg.inputs[k]]
                if k < n:
                    group += [bg.outputs[k], outs[k]]
                self._same(*group)
            self._walk(cg)
            self._walk(bg)
            return
        if op == "Identity":
            self._same(ins[0], outs[0])
            return
        kind = _KIND_OF_OP.get(op)
        if op == "ad_gl_new":
            self._get(outs[0])
            return
        if kind is None:
            return
        handles = [t for t in list(ins) + list(outs) if is_handle(t)]
        main = self._get(handles[0])
        main.kind = main.kind or kind
        if main.kind != kind:
            raise Conflict(f"the same handle is used as a {main.kind} and as a {kind}")
        main.where = main.where or node
        if op in ("ad_stack_push", "ad_gl_put", "ta_write"):
            self._same(ins[0], outs[0])
            self._element(self._get(ins[0]), ins[2])
        elif op == "ad_stack_get" or op == "ta_read":
            self._element(main, outs[0])
        elif op in ("ad_gl_pop", "ad_gl_get"):
            self._same(ins[0], outs[1])
            self._element(main, outs[0])
        elif op == "ad_gl_add":
            self._same(ins[0], ins[1], outs[0])
        elif op == "ad_gl_copy":
            self._same(ins[0], outs[0])
        elif op == "ad_gl_set":
            self._same(ins[0], outs[0])
            if len(ins) > 2:
                self._element(main, ins[2])
        elif op in ("ad_gl_from_rows", "ad_gl_scatter", "ad_gl_set_rows"):
            rows = ins[0] if op == "ad_gl_from_rows" else ins[2 if op == "ad_gl_scatter" else 1]
            if op != "ad_gl_from_rows":
                self._same(ins[0], outs[0])
            if op != "ad_gl_scatter" and len(ins) > (1 if op == "ad_gl_from_rows" else 2):
                raise Conflict("the gradient of TensorArray.concat has no native form")
            self._element(main, None, _rows(rows), rows.dtype)
        elif op in ("ad_gl_pop_rows", "ad_gl_gather"):
            self._same(ins[0], outs[1])
            like = ins[1] if op == "ad_gl_pop_rows" else ins[2]
            if op == "ad_gl_pop_rows" and len(ins) > 2:
                raise Conflict("the gradient of TensorArray.concat has no native form")
            self._element(main, None, _rows(like), like.dtype)
        elif op == "ta_new":
            main.dynamic = main.dynamic or bool(node.attrs.get("dynamic_size"))
        elif op == "ta_nonempty":
            self._same(ins[0], outs[0])
        elif op == "ta_unstack":
            self._same(ins[0], outs[0])
            self._element(main, None, _rows(ins[1]), ins[1].dtype)
        elif op in ("ta_stack", "ta_gather"):
            shape = node.attrs.get("element_shape")
            if shape is not None and None not in shape:
                self._element(main, None, tuple(shape), node.attrs["dtype"])


def _rows(t):
    """The shape of one row of `t` (None when not known)."""
    return None if t.shape is None or not t.shape else tuple(t.shape[1:])


def _describe(elem):
    if isinstance(elem, HandleClass):
        return "handles"
    return f"{elem[0]} of shape {elem[1]}"
