"""Backward graphs in native code: handles (stacks, gradient lists, TensorArrays) and
functional updates (`ufunc_at`, `setitem`) lowered for `jit_compile=True`.

lower.py hands this module the nodes it does not lower itself (`GradLowering.lower`)
and asks it about handle tensors (`knows`), loops (`enter_loop`) and graphs
(`enter_graph`). handles.py decides which native value each handle is; the helpers
the generated code calls are in grad_code.py.

Updates: `ufunc_at(x, v, index)` and `setitem` make a new array (a copy of x, updated).
When codegen's proof (loop_inplace.py: `plan` for a loop's accumulator chains,
`straight_line` for an update of a fresh array nothing else reads) says nobody else can
read the old value, the update writes into x instead: the backward loop of
`for t in range(n): ... xs[t] ...` then adds one row per step into an accumulator it
copied once before the loop, as hand-written code would.
"""

import numpy as np

from autograph.runtime.exec import loop_inplace
from autograph.runtime.exec.native import copies as native_copies
from autograph.runtime.exec.native import library as native_library
from autograph.runtime.exec.native import ops as native_ops
from autograph.runtime.exec.native.grad_code import HELPERS, closure
from autograph.runtime.exec.native.handles import (
    GRADLIST, OPS, STACK, TENSORARRAY, HandleClass, Handles, is_handle)

UPDATES = ("ufunc_at", "setitem")
_NO_VALUE = "native code keeps no value for this handle"


class GradLowering:
    """The part of one Lowering (lower.py) that handles and updates need."""

    def __init__(self, low, graph):
        self.low = low
        low.used.update(HELPERS)    # the helpers' names are taken
        low.used.update(native_library.names())
        self.handles = Handles(graph, low.fail)
        self.used = set()           # helper names the header must define
        self.inplace = set()        # ids of update nodes that write into their input
        self.names = {}             # (class index, role) -> native name

    # -- hooks for native_lower ----------------------------------------------------------------

    def knows(self, t):
        return is_handle(t) and self.handles.knows(t)

    def handles_op(self, op):
        return op in OPS or op in UPDATES

    def prelude(self, depth):
        """Declare each stack class's flat buffer (the function's first lines)."""
        for c in self.handles.classes:
            if c.kind != STACK:
                continue
            dtype, shape = self.stack_element(c)
            buf, top, last = (self.name(c, r) for r in ("buf", "top", "last"))
            self.low.emit(depth, f"{buf} = np.empty({(0,) + shape!r}, "
                                 f"{native_ops.dtype_name(dtype)})")
            self.low.emit(depth, f"{top} = 0")
            self.low.emit(depth, f"{last} = -1")

    def header(self):
        """The library functions the handles call (library.py imports them)."""
        return sorted(closure(self.used))

    def enter_graph(self, graph):
        """Updates of fresh arrays in straight-line code write in place."""
        self.inplace.update(id(nd) for nd in loop_inplace.straight_line(graph))

    def enter_loop(self, node, loop_vars, depth):
        """Copy the loop's accumulators once (the loop then owns them; not when it owns
        their initial values already: loop_inplace.owned) and mark their update chains in
        place (loop_inplace.plan, codegen's proof)."""
        chains = loop_inplace.plan(node)
        mine = loop_inplace.owned(node, chains) if chains else ()
        for k, chain in chains.items():
            if k not in mine:
                self.low.emit(depth, f"{loop_vars[k]} = np.copy({loop_vars[k]})")
            self.inplace.update(id(nd) for nd in chain)

    def check_outputs(self, graph):
        for t in graph.outputs:
            if is_handle(t):
                self.low.fail(t.node, "a TensorArray or stack cannot be a result of a "
                                      "natively compiled function")

    # -- names ---------------------------------------------------------------------------------

    def name(self, c, role):
        key = (c.index, role)
        if key not in self.names:
            self.names[key] = self.low.fresh(f"{c.kind.split()[0][:5]}{c.index}_{role}")
        return self.names[key]

    def stack_element(self, c):
        elem = c.elem
        if elem is None:
            return np.dtype(np.float64), ()
        if isinstance(elem, HandleClass):
            if elem.root().kind not in (STACK, None):
                self.low.fail(c.where, f"a stack of {elem.root().kind}s has no native form")
            return np.dtype(np.int64), ()
        return elem

    def element(self, c, node):
        elem = c.elem
        if elem is None:
            self.low.fail(node, f"the {c.kind}'s element type is not known when compiling")
        if isinstance(elem, HandleClass):
            self.low.fail(node, f"a {c.kind} of handles (the gradient of a gradient through "
                                "nested loops) has no native form")
        return elem

    def call(self, name):
        self.used.add(name)
        return name

    # -- lowering ------------------------------------------------------------------------------

    def lower(self, node, env, depth):
        if node.op in UPDATES:
            return self.update(node, env, depth)
        ins = [env[id(t)] for t in node.inputs]
        handle = next(t for t in list(node.inputs) + list(node.outputs) if is_handle(t))
        c = self.handles.cls(handle)
        kind = c.kind
        if node.op == "ad_gl_new":
            return self.new_placeholder(node, c, env, depth)
        if kind == STACK:
            return self.stack(node, c, ins, env, depth)
        if kind == GRADLIST:
            return self.gradlist(node, c, ins, env, depth)
        return self.tensor_array(node, c, ins, env, depth)

    def out(self, node, env, k=0, base=None):
        name = env[id(node.outputs[k])] = self.low.fresh(base or node.name)
        return name

    def new_placeholder(self, node, c, env, depth):
        """`ad_gl_new`: an empty gradient list, or what stands in for a handle of another
        kind (an offset nobody reads; a branch in which the loop did not run)."""
        out = self.out(node, env)
        if c.kind == GRADLIST:
            self.low.emit(depth, f"{out} = {self.empty_list(c, node)}")
        elif c.kind == STACK or c.kind is None:
            self.low.emit(depth, f"{out} = -1")
        else:
            self.low.fail(node, _NO_VALUE)

    def empty_list(self, c, node):
        dtype, shape = self.element(c, node)
        return f"(np.zeros({(0,) + shape!r}, {native_ops.dtype_name(dtype)}), 0)"

    def stack(self, node, c, ins, env, depth):
        emit = self.low.emit
        buf, top, last = (self.name(c, r) for r in ("buf", "top", "last"))
        if node.op == "ad_stack_new":
            h = self.out(node, env)
            emit(depth, f"{h} = {top}")
            emit(depth, f"{last} = {h}")
            if ins:
                emit(depth, f"{top} += max(int({ins[0]}), 0)")
                emit(depth, f"if {top} > {buf}.shape[0]:")
                emit(depth + 1, f"{buf} = {self.call('grow')}({buf}, {top} - 1)")
            return
        h, index = ins[0], f"int({ins[1]})"
        if node.op == "ad_stack_get":
            out = self.out(node, env)
            value = node.outputs[0]
            expr = f"{buf}[{h} + {index}]"
            if not is_handle(value) and value.shape == ():
                expr = native_ops.scalar_of(value, expr)
            emit(depth, f"{out} = {expr}")
            if not is_handle(value) and value.shape:   # a row of the np.empty buffer
                self.low.c_order.add(out)
            return
        p = self.low.fresh(f"{node.name}_at")
        emit(depth, f"{p} = {h} + {index}")
        emit(depth, f"if {h} != {last}:")   # pushes go to the newest stack (its region ends at top)
        emit(depth + 1, "raise RuntimeError('autograph: a push into a gradient stack that "
                        "is not the newest of its loop')")
        emit(depth, f"if {p} >= {buf}.shape[0]:")
        emit(depth + 1, f"{buf} = {self.call('grow')}({buf}, {p})")
        rank = len(self.stack_element(c)[1])
        if rank:      # an array row: a loop (copies.py), not Numba's slice assignment
            fn = native_copies.put(self.low, "set", rank, len(node.inputs[2].shape))
            emit(depth, f"{fn}({buf}[{p}], {ins[2]})")
        else:
            emit(depth, f"{buf}[{p}] = {ins[2]}")
        emit(depth, f"if {p} >= {top}:")
        emit(depth + 1, f"{top} = {p} + 1")
        env[id(node.outputs[0])] = h

    def gradlist(self, node, c, ins, env, depth):
        op, emit = node.op, self.low.emit
        dtype, shape = self.element(c, node)
        dname = native_ops.dtype_name(dtype)
        scalar = shape == ()
        if op in ("ad_gl_pop", "ad_gl_get"):
            v, rest = self.out(node, env, 0), self.out(node, env, 1, f"{node.name}_list")
            fn = self.call("gl_pop_s" if scalar else "gl_pop_a")
            emit(depth, f"{v}, {rest} = {fn}({ins[0]}, int({ins[1]}), {op == 'ad_gl_pop'})")
            return
        if op in ("ad_gl_pop_rows", "ad_gl_gather"):
            rows, rest = self.out(node, env, 0), self.out(node, env, 1, f"{node.name}_list")
            like = ins[1] if op == "ad_gl_pop_rows" else ins[2]
            zeros = f"np.zeros({like}.shape, {dname})"
            if op == "ad_gl_pop_rows":
                emit(depth, f"{rows}, {rest} = {self.call('gl_pop_rows')}({ins[0]}, {zeros})")
            else:
                emit(depth, f"{rows}, {rest} = {self.call('gl_gather')}({ins[0]}, "
                            f"{self._indices(node.inputs[1], ins[1])}, {zeros})")
            return
        out = self.out(node, env)
        if op == "ad_gl_put":
            expr = f"{self.call('gl_put')}({ins[0]}, int({ins[1]}), {ins[2]})"
        elif op == "ad_gl_set":
            expr = (f"{self.call('gl_set')}({ins[0]}, int({ins[1]}), {ins[2]})" if len(ins) > 2
                    else f"{self.call('gl_unset')}({ins[0]}, int({ins[1]}))")
        elif op == "ad_gl_add":
            expr = f"{self.call('gl_add')}({ins[0]}, {ins[1]})"
        elif op == "ad_gl_copy":
            expr = f"(np.copy({ins[0]}[0]), {ins[0]}[1])"
        elif op == "ad_gl_from_rows":
            expr = f"(np.copy({ins[0]}), 0)"
        elif op == "ad_gl_scatter":
            if node.inputs[1].shape == ():
                expr = f"{self.call('gl_put')}({ins[0]}, int({ins[1]}), {ins[2]}[0])"
            else:
                expr = (f"{self.call('gl_scatter')}({ins[0]}, "
                        f"{self._indices(node.inputs[1], ins[1])}, {ins[2]})")
        elif op == "ad_gl_set_rows":
            expr = f"{self.call('gl_set_rows')}({ins[0]}, {ins[1]})"
        else:
            self.low.fail(node)
        emit(depth, f"{out} = {expr}")

    @staticmethod
    def _indices(t, name):
        if t.shape == ():
            return f"np.array([int({name})])"
        return f"np.ascontiguousarray({name}).ravel()"

    def tensor_array(self, node, c, ins, env, depth):
        op, emit = node.op, self.low.emit
        dtype, shape = self.element(c, node)
        dynamic = bool(c.dynamic)
        if op == "ta_new":
            out = self.out(node, env)
            size = f"max(int({ins[0]}), 0)"
            emit(depth, f"{out} = (np.empty(({size},) + {shape!r}, "
                        f"{native_ops.dtype_name(dtype)}), np.zeros({size}, np.bool_), {size})")
        elif op == "ta_write":
            out = self.out(node, env)
            emit(depth, f"{out} = {self.call('ta_write')}({ins[0]}, int({ins[1]}), {ins[2]}, "
                        f"{dynamic})")
        elif op == "ta_unstack":
            out = self.out(node, env)
            emit(depth, f"{out} = {self.call('ta_unstack')}({ins[0]}, {ins[1]}, {dynamic})")
        elif op == "ta_read":
            out = self.out(node, env)
            at = f"{ins[0]}[0][{self.call('ta_check')}({ins[0]}, int({ins[1]}))]"
            expr = native_ops.scalar_of(node.outputs[0], at) if shape == () else f"{at}.copy()"
            emit(depth, f"{out} = {expr}")
        elif op == "ta_stack":
            out = self.out(node, env)
            emit(depth, f"{out} = {self.call('ta_stack')}({ins[0]})")
        elif op == "ta_nonempty":   # (runtime/list_edits.py: np.stack of a list)
            out = self.out(node, env)
            emit(depth, f"if {ins[0]}[2] == 0:")
            emit(depth + 1, f"raise ValueError({node.attrs['message']!r})")
            emit(depth, f"{out} = {ins[0]}")
        elif op == "ta_size":
            out = self.out(node, env)
            emit(depth, f"{out} = {native_ops.scalar_of(node.outputs[0], f'{ins[0]}[2]')}")
        else:
            self.low.fail(node, f"{op} has no native form yet")

    # -- functional updates ----------------------------------------------------------------------

    def update(self, node, env, depth):
        x, v = node.inputs[0], node.inputs[1]
        ins = [env[id(t)] for t in node.inputs]
        out_t = node.outputs[0]
        if not x.shape or out_t.dtype.kind not in "biuf":
            self.low.fail(node, "only updates of arrays of numbers have a native form")
        key, tensor = _key(node.attrs["index"], ins[2:], node.inputs[2:])
        ufunc = node.attrs.get("ufunc")
        if key is None or ufunc not in (None, "add", "subtract", "multiply", "maximum",
                                         "minimum") or tensor and node.op == "ufunc_at" \
                and not self._rows_fit(x, v, node):
            self.low.fail(node, "this index or ufunc has no native form (basic indices, or "
                                "one 1-D integer array or mask indexing the first axis, are "
                                "lowered)")
        emit = self.low.emit
        if id(node) in self.inplace:
            out = env[id(out_t)] = ins[0]
        else:
            out = self.out(node, env)
            emit(depth, f"{out} = np.copy({ins[0]})")
        op = "set" if node.op == "setitem" else ufunc
        rank = native_copies.view_rank(node.attrs["index"], len(x.shape))
        if tensor and node.op == "ufunc_at":    # repeated indices accumulate: a row each
            k = self.low.fresh("k")
            row_rank = len(v.shape) if len(v.shape) < len(x.shape) else len(v.shape) - 1
            row = ins[1] if len(v.shape) < len(x.shape) else \
                f"{ins[1]}[{'0' if v.shape[0] == 1 else k}]"
            emit(depth, f"for {k} in range({tensor}.shape[0]):")
            depth, key = depth + 1, f"{tensor}[{k}]"
            ins, rank, value_rank = ins[:1] + [row], len(x.shape) - 1, row_rank
        else:
            value_rank = len(v.shape)
        if rank and self._loop_fits(op, v, out_t):   # a loop nest (copies.py)
            fn = native_copies.put(self.low, op, rank, value_rank)
            emit(depth, f"{fn}({out}[{key}], {ins[1]})")
            return
        if node.op == "setitem":
            emit(depth, f"{out}[{key}] = {ins[1]}")
            return
        if ufunc == "add":
            emit(depth, f"{out}[{key}] += {ins[1]}")
        elif ufunc == "subtract":
            emit(depth, f"{out}[{key}] -= {ins[1]}")
        elif ufunc == "multiply":
            emit(depth, f"{out}[{key}] *= {ins[1]}")
        else:
            emit(depth, f"{out}[{key}] = np.{ufunc}({out}[{key}], {ins[1]})")

    @staticmethod
    def _loop_fits(op, v, out):
        """Whether copies.py's element loop writes what NumPy's update writes: a cast
        NumPy allows (a complex value into a real array is NumPy's warning, not ours; a
        ufunc's result must cast to the array's dtype under 'same_kind')."""
        if op != "set":
            return bool(np.can_cast(v.dtype, out.dtype, "same_kind"))
        return not (v.dtype.kind == "c" and out.dtype.kind != "c")

    @staticmethod
    def _rows_fit(x, v, node):
        if v.shape is None or len(v.shape) > len(x.shape):
            return False
        return len(v.shape) < len(x.shape) or v.shape[0] is not None


def _key(index, dyn, dyn_tensors):
    """(the index as Numba source, the name of its integer index array or None); (None,
    None) when Numba cannot apply it (several arrays, masks over several axes, arrays not
    first)."""
    key, tensor = [], None
    for pos, item in enumerate(index):
        text = native_ops.basic_index_item(item, dyn)
        if text is None and item[0] == "t" and pos == 0 and len(index) == 1:
            t = dyn_tensors[item[1]]
            if t.shape is None or len(t.shape) != 1 or t.dtype.kind not in "iub":
                return None, None
            text = dyn[item[1]]
            if t.dtype.kind != "b":   # a 1-D mask is one Numba index; no repeats to add up
                tensor = text
        if text is None:
            return None, None
        key.append(text)
    return (", ".join(key) or "...", tensor)
